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

package egress

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A peer's answers are read up to its limits, through a real HTTP server: a body or a
// stream past its limit, or one event past the event limit, fails with a ReadLimitError
// naming the peer, the limit and its setting; an endless answer is cut at the limit; the
// Limiter remembers the cut once.
func TestLimitBodies(t *testing.T) {
	const limit = 1 << 10
	event := func(n int) string { return "data: " + strings.Repeat("x", n) + "\n\n" }
	cases := map[string]struct {
		contentType string
		body        string
		endless     string // written until the client goes away
		wantLen     int
		wantErr     string // "" for none
	}{
		"a body under the limit":       {body: strings.Repeat("a", limit-1), wantLen: limit - 1},
		"a body of exactly the limit":  {body: strings.Repeat("a", limit), wantLen: limit},
		"a body one byte over":         {body: strings.Repeat("a", limit+1), wantErr: "the remote A2A agent's answer passed the read limit of 1 KiB (--a2a-read-limit): the rest was not read"},
		"an endless body":              {endless: "aaaaaaaa", wantErr: "answer passed the read limit of 1 KiB"},
		"a stream of small events":     {contentType: "text/event-stream", body: strings.Repeat(event(100), 5), wantLen: 5 * len(event(100))},
		"a stream past its whole":      {contentType: "text/event-stream; charset=utf-8", endless: event(100), wantErr: "stream passed the read limit of 2 KiB"},
		"one event past its limit":     {contentType: "text/event-stream", body: event(600), wantErr: "event passed the read limit of 512 bytes"},
		"events split by CRLF":         {contentType: "text/event-stream", body: strings.ReplaceAll(strings.Repeat(event(400), 3), "\n", "\r\n"), wantLen: 3 * (len(event(400)) + 2)},
		"an event without its end":     {contentType: "text/event-stream", body: strings.Repeat("data: xxxxxxxxx\n", 40), wantErr: "event passed"},
		"a status answer, also bound":  {body: strings.Repeat("e", 2*limit), wantErr: "answer passed"},
		"an empty body":                {body: "", wantLen: 0},
		"a JSON answer, not an stream": {contentType: "application/json", body: `{"a":"` + strings.Repeat("b", 2*limit) + `"}`, wantErr: "answer passed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				_, _ = io.WriteString(w, tc.body)
				for tc.endless != "" && r.Context().Err() == nil {
					if _, err := io.WriteString(w, tc.endless); err != nil {
						return
					}
				}
			}))
			defer srv.Close()
			lim := NewLimiter(http.DefaultTransport, ReadLimit{
				Peer: "remote A2A agent", Setting: "--a2a-read-limit", Body: limit, Stream: 2 * limit, Event: limit / 2})
			hc := &http.Client{Transport: lim}
			resp, err := hc.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			b, err := io.ReadAll(resp.Body)
			if tc.wantErr == "" {
				if err != nil || len(b) != tc.wantLen {
					t.Fatalf("read %d bytes, err %v; want %d bytes", len(b), err, tc.wantLen)
				}
				if cut := lim.Cut(); cut != nil {
					t.Errorf("Cut() = %v after a whole answer", cut)
				}
				return
			}
			var le *ReadLimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want a ReadLimitError saying %q", err, tc.wantErr)
			}
			if len(b) > 2*limit+limit/2 {
				t.Errorf("read %d bytes before failing, over every limit", len(b))
			}
			if _, again := resp.Body.Read(make([]byte, 8)); !errors.Is(again, le) {
				t.Errorf("a read after the limit = %v, want the same error", again)
			}
			if cut, again := lim.Cut(), lim.Cut(); !errors.Is(cut, le) || again != nil {
				t.Errorf("Cut() = %v then %v, want the limit's error once", cut, again)
			}
		})
	}
}

func TestBytesText(t *testing.T) {
	got := map[int64]string{}
	for _, n := range []int64{1, 1000, 1 << 10, 3 << 20, 1<<20 + 1, 256 << 20, 2 << 30} {
		got[n] = bytesText(n)
	}
	want := map[int64]string{1: "1 bytes", 1000: "1000 bytes", 1 << 10: "1 KiB", 3 << 20: "3 MiB", 1<<20 + 1: "1048577 bytes", 256 << 20: "256 MiB", 2 << 30: "2 GiB"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
