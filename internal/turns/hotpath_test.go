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
	"context"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

// The work every turn does before its model call allocates only what the turn itself needs:
// these guards keep the per-turn costs that once added up to 148 KB a turn from coming back
// (make bench-check measures the whole turn).

// A session whose Agent adds no tools gets the built-in ones as assembled once.
func TestToolsForAPlainTurnAreAssembledOnce(t *testing.T) {
	ts := sessionTools()
	agent := scriptedAgent("main")
	for name, key := range map[string]string{"session": keyA, "sub-agent": keySub} {
		s := session(key, "main", "sid")
		defs, offered := ts.forTurn(context.Background(), agent, s)
		// A sub-agent gets none of the built-in (session) tools.
		if len(defs) != len(offered) || (len(defs) == 0) != (name == "sub-agent") {
			t.Fatalf("%s: %d tools offered, %d by name", name, len(defs), len(offered))
		}
		if allocs := testing.AllocsPerRun(50, func() { ts.forTurn(context.Background(), agent, s) }); allocs > 1 {
			// One at most: telling a sub-agent's key from its grammar.
			t.Errorf("%s: forTurn allocates %.0f times, want the tools assembled once", name, allocs)
		}
	}
}

// With tracing off (no exporter configured), a turn's spans cost nothing.
func TestSpansAllocateNothingWhileTracingIsOff(t *testing.T) {
	req := &TurnRequest{ID: "uid/round-1", Namespace: ns, TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	call := &provider.ToolCall{ID: "c1", Name: "sessions_list"}
	allocs := testing.AllocsPerRun(50, func() {
		ctx, span := startTurnSpan(context.Background(), req)
		endTurnSpan(span, &turn{req: req})
		_, span = startToolSpan(ctx, call)
		endToolSpan(span, false, "")
	})
	if allocs != 0 {
		t.Errorf("a turn span and a tool span allocate %.0f times with tracing off, want 0", allocs)
	}
}
