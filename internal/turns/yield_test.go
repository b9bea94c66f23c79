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

package turns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A turn whose model calls sessions_yield ends after that round of tools: no further model
// call, the yield's result (status yielded) is the turn's last record. Another tool's round
// is followed by a model call, as before.
func TestYieldEndsTheTurn(t *testing.T) {
	agent := scriptedAgent("main",
		toolRule("^wait", "sessions_yield", map[string]any{"message": "waiting for research"}),
		toolRule("^status", "agents_list", map[string]any{}))
	cases := map[string]struct {
		input    string
		wantRecs []rec
		wantStop string
	}{
		"yield": {input: "wait", wantStop: StopReasonYield, wantRecs: []rec{
			{Key: "y/0", Role: "user", Text: "wait"},
			{Key: "y/1", Role: "assistant", Text: ""},
			{Key: "y/2", Role: "toolResult", Text: `{"status":"yielded","waitingFor":[],"message":"waiting for research"}`},
		}},
		"another tool": {input: "status", wantStop: "stop", wantRecs: []rec{
			{Key: "y/0", Role: "user", Text: "status"},
			{Key: "y/1", Role: "assistant", Text: ""},
			{Key: "y/2", Role: "toolResult", Text: `{"agents":["main"]}`},
			{Key: "y/3", Role: "assistant", Text: `tools: {"agents":["main"]}`},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)})
			f.submit(turnReq("y", keyA, tc.input))
			res := f.await("y")
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.StopReason != tc.wantStop {
				t.Errorf("stop reason %q, want %q", res.StopReason, tc.wantStop)
			}
			if diff := cmp.Diff(tc.wantRecs, f.records(sidA)); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
		})
	}
}
