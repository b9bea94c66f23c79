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

package client_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
)

// Streamed text is coalesced into one piece per interval, cut at MaxDeltaText on rune
// boundaries, numbered from 1, and posted to the session's delta path.
func TestLiveReplyCoalesces(t *testing.T) {
	var mu sync.Mutex
	var got []transcript.Delta
	done := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != transcript.APISessionsPath+"/ns/s1"+transcript.APIDeltaPath {
			t.Errorf("posted to %s", r.URL.Path)
		}
		var d transcript.Delta
		if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		done <- struct{}{}
	}))
	defer srv.Close()
	fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
	c := client.NewLoopbackClient(srv.URL)
	c.Clock = fc

	w := c.LiveReply("ns", "s1", "run", 2)
	w.Write("a") // the first piece goes at once
	w.Write("b")
	w.Write("c") // within the interval: held
	fc.Step(client.DeltaInterval)
	w.Write("d")
	long := "x" + strings.Repeat("é", transcript.MaxDeltaText/2+10) // over the bound; the cut falls inside a rune
	w.Write(long)
	w.Write("!")
	w.Flush()

	for range 5 {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d pieces arrived", len(got))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var texts []string
	for i, d := range got {
		if d.Seq != int64(i+1) || d.RunID != "run" || d.Step != 2 {
			t.Errorf("piece %d: %+v", i, d)
		}
		if len(d.Text) > transcript.MaxDeltaText || !utf8.ValidString(d.Text) {
			t.Errorf("piece %d: %d bytes, valid %v", i, len(d.Text), utf8.ValidString(d.Text))
		}
		texts = append(texts, d.Text)
	}
	// "bcd" goes once the interval passed; the long text at once, cut at the bound.
	want := []string{"a", "bcd", long[:transcript.MaxDeltaText-1], long[transcript.MaxDeltaText-1:], "!"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("pieces (-want +got):\n%s", diff)
	}
}
