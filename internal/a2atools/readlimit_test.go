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

package a2atools

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
)

// hugeAnswer is what the hostile remote answers message/send with: a completed task whose
// one artifact holds this many bytes of text.
const hugeAnswer = 256 << 20

// hostileRemote serves a valid card and answers every JSON-RPC call at /rpc without
// measure: message/send with a task of a hugeAnswer-byte artifact, message/stream with
// artifact events, each of a new artifact, until the client goes away.
func hostileRemote(t *testing.T, streaming bool) *httptest.Server {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{Name: "flood", URL: srv.URL + "/rpc", PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion: "0.3.0", Capabilities: a2a.AgentCapabilities{Streaming: streaming}}
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.Method == "message/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; r.Context().Err() == nil; i++ {
				ev := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a%d","parts":[{"kind":"text","text":"%s"}]}}}`,
					req.ID, i, strings.Repeat("y", 4000))
				if _, err := fmt.Fprintf(w, "data: %s\n\n", ev); err != nil {
					return
				}
			}
			return
		}
		if req.Method != "message/send" {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"`, req.ID)
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range hugeAnswer / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `"}]}]}}`)
	})
	return srv
}

// A remote agent's answer is read up to the A2A read limit before the SDK decodes it: a
// 256 MiB answer, or a stream that never ends, fails the call with an error naming the
// limit, and the manager allocates a few times the limit, not the answer. Before, the
// SDK decoded the whole body and the 64 KiB result cap came after (the manager went from
// 63 MiB to 829 MiB).
func TestAnswerReadUpToTheLimit(t *testing.T) {
	for name, streaming := range map[string]bool{"a 256 MiB answer": false, "an endless stream": true} {
		t.Run(name, func(t *testing.T) {
			srv := hostileRemote(t, streaming)
			set := NewClient(options("")).Resolve(t.Context(), agentWith(srv.URL))
			if len(set.Tools()) != 1 {
				t.Fatalf("no tool: %+v", set.Status())
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := set.Call(t.Context(), "a2a__echo", []byte(`{"message":"hello"}`))
			runtime.ReadMemStats(&after)
			if !got.IsError || !strings.Contains(got.Text, "read limit of 8 MiB (--a2a-read-limit)") {
				t.Errorf("result = %.300s, want an error naming the read limit", got.Text)
			}
			// Allocations, not a clock: decoding within the limit allocates a few times it.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 96<<20 {
				t.Errorf("the call allocated %d MiB, want under 96 MiB for an 8 MiB limit", alloc>>20)
			}
		})
	}
}
