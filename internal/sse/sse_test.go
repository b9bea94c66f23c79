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

package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAllEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sr := NewReader(r)
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestReader(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []Event
	}{
		"event and data": {
			in:   "event: message_start\ndata: {\"a\":1}\n\n",
			want: []Event{{Event: "message_start", Data: []byte(`{"a":1}`)}},
		},
		"multi-line data joined by newline": {
			in:   "data: one\ndata:two\ndata:  three\n\n",
			want: []Event{{Data: []byte("one\ntwo\n three")}},
		},
		"CRLF and lone CR line endings": {
			in:   "data: a\r\n\r\ndata: b\r\rdata: c\n\n",
			want: []Event{{Data: []byte("a")}, {Data: []byte("b")}, {Data: []byte("c")}},
		},
		"comments and retry ignored; events without data skipped; the id persists": {
			in:   ": ping\nid: 7\nretry: 100\n\nevent: ping\n\ndata: x\n\ndata: y\nid: 8\n\n",
			want: []Event{{Data: []byte("x"), ID: "7"}, {Data: []byte("y"), ID: "8"}},
		},
		"event name does not leak into the next event": {
			in:   "event: a\ndata: 1\n\ndata: 2\n\n",
			want: []Event{{Event: "a", Data: []byte("1")}, {Data: []byte("2")}},
		},
		"last event without a blank line": {
			in:   "data: [DONE]",
			want: []Event{{Data: []byte("[DONE]")}},
		},
		"empty data line": {
			in:   "data\n\n",
			want: []Event{{Data: []byte{}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := readAllEvents(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzReader checks the reader never panics and that what it returns
// could only have come from the input: no line breaks inside an event name,
// and no more events than blank-line-separated blocks.
func FuzzReader(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"))
	f.Add([]byte("data: {\"choices\":[]}\r\n\r\ndata: [DONE]\r\n\r\n"))
	f.Add([]byte(": keepalive\n\ndata: a\rdata: b\r\r"))
	f.Fuzz(func(t *testing.T, in []byte) {
		events, err := readAllEvents(bytes.NewReader(in))
		if err != nil {
			return
		}
		if n := bytes.Count(in, []byte("data")); len(events) > n {
			t.Fatalf("%d events from input with %d data fields", len(events), n)
		}
		for _, ev := range events {
			if strings.ContainsAny(ev.Event, "\r\n") || bytes.ContainsAny(ev.Data, "\r") {
				t.Fatalf("line break leaked into event %q", ev)
			}
		}
	})
}

func TestReaderLineTooLong(t *testing.T) {
	_, err := readAllEvents(strings.NewReader("data: " + strings.Repeat("x", MaxLine+1) + "\n\n"))
	if !errors.Is(err, ErrLineTooLong) {
		t.Errorf("err = %v, want ErrLineTooLong", err)
	}
}
