// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package transcript

import (
	"net/url"
	"testing"
	"time"
)

// FuzzDecodeRecord: no input crashes the decoder, and whatever it accepts survives a round trip.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"seq":1,"id":"a","ts":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"seq":2,"id":"b","ts":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{"a":1}}],"usage":{"input":1,"output":2,"totalTokens":3}}}` + "\n"))
	f.Add([]byte(`{"seq":3,"message":{"role":"toolResult","toolCallId":"c","isError":true,"content":[]}`))
	f.Add([]byte(`{"type":"session","version":1,"sessionId":"s"}`))
	f.Add([]byte("\x00\x00\x00\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := DecodeRecord(line)
		if err != nil {
			return
		}
		if rec.Seq < 1 || rec.Message.Role == "" {
			t.Fatalf("accepted a record without seq or role: %+v", rec)
		}
		enc, err := EncodeRecord(&rec)
		if err != nil {
			return // e.g. arguments that were valid JSON only as raw bytes
		}
		again, err := DecodeRecord(enc)
		if err != nil {
			t.Fatalf("re-decoding our own encoding failed: %v\n%s", err, enc)
		}
		if again.Seq != rec.Seq || again.Message.Role != rec.Message.Role {
			t.Fatalf("round trip changed the record: %+v vs %+v", rec, again)
		}
	})
}

// FuzzParseHistoryQuery: any query string parses or errors, and what parses is in range.
func FuzzParseHistoryQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10", "cursor=seq:5&includeTools=1", "follow=1&namespace=x", "limit=-1&cursor=0", "limit=99999999999999999999", "cursor=seq:%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		hq, err := ParseHistoryQuery(q, "default")
		if err != nil {
			return
		}
		if hq.Limit < 1 || hq.Limit > MaxLimit {
			t.Fatalf("limit %d out of range for %q", hq.Limit, raw)
		}
		if hq.BeforeSeq < 0 {
			t.Fatalf("negative cursor for %q", raw)
		}
		if hq.Namespace == "" {
			t.Fatalf("empty namespace for %q", raw)
		}
	})
}

// FuzzParseRetiredQuery: GET /v1/retired's parameters either parse into a query whose limit
// is within its bound and whose cursor reads back, or are refused; a query's Values parse
// back to it.
func FuzzParseRetiredQuery(f *testing.F) {
	for _, s := range []string{"", "ref=s1", "search=Llama&limit=50", "limit=5&after=1772323200000%2Fs1", "after=-5%2F..%2Fx",
		"limit=-1", "limit=99999999999999999999", "after=x", "after=12%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseRetiredQuery(v)
		if err != nil {
			return
		}
		if q.Limit < 0 || q.Limit > MaxRetiredPage {
			t.Fatalf("limit %d out of range for %q", q.Limit, raw)
		}
		if q.After != "" {
			at, id, err := ParseRetiredCursor(q.After)
			if err != nil {
				t.Fatalf("cursor %q accepted, then refused: %v", q.After, err)
			}
			r := RetiredSession{SessionID: id, UpdatedAt: time.UnixMilli(at)}
			if at2, id2, err := ParseRetiredCursor(r.Cursor()); err != nil || at2 != at || id2 != id {
				t.Fatalf("cursor %q: the record's cursor %q reads back as %d, %q, %v", q.After, r.Cursor(), at2, id2, err)
			}
		}
		again, err := ParseRetiredQuery(q.Values())
		if err != nil || again != q {
			t.Fatalf("%+v as values parses back as %+v, %v", q, again, err)
		}
	})
}
