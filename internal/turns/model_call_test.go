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
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// gateRecorder is a budget gate that refuses the model call it is asked about after allow
// calls, and records what it judged and what it was charged.
type gateRecorder struct {
	mu      sync.Mutex
	allow   int
	judged  []budget.Call
	charged []charge
}

type charge struct {
	purpose budget.Purpose
	tokens  int64
}

func (g *gateRecorder) Judge(_ context.Context, c budget.Call) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.judged = append(g.judged, c)
	if len(g.judged) > g.allow {
		return budget.Exceeded("budget exceeded: the send used too much")
	}
	return nil
}

func (g *gateRecorder) Remaining(context.Context, budget.Call) *sessionsv1alpha1.Budget { return nil }

func (g *gateRecorder) Charge(_ context.Context, c budget.Call, u usage.Turn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.charged = append(g.charged, charge{purpose: c.Purpose, tokens: u.Input + u.Output})
}

func (g *gateRecorder) option(o *Options) { o.Budget = g }

func TestBudgetJudgesBeforeEachModelCallAndIsCharged(t *testing.T) {
	agent := scriptedAgent("main", toolRule("^list", "sessions_list", map[string]any{}))
	g := &gateRecorder{allow: 1}
	f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)}, g.option)
	f.submit(turnReq("b1", keyA, "list them"))
	res := f.await("b1")
	if !errors.Is(res.Err, budget.ErrExceeded) || res.Err.Error() != "budget exceeded: the send used too much" {
		t.Fatalf("turn error %v, want the budget's", res.Err)
	}
	if len(g.judged) != 2 || len(g.charged) != 1 || g.charged[0].tokens == 0 {
		t.Fatalf("judged %d calls, charged %v: want two judged, the first charged with what it used", len(g.judged), g.charged)
	}
	if got, want := g.judged[0], (budget.Call{Namespace: ns, Turn: "b1", OwnerKind: OwnerSessionSend, Owner: ownerOf("b1").NamespacedName,
		OwnerUID: OwnerUIDOf("b1"), Purpose: budget.PurposeTurn}); got != want {
		t.Errorf("judged %+v, want %+v", got, want)
	}
	if res.InputTokens+res.OutputTokens != g.charged[0].tokens {
		t.Errorf("result used %d, the gate was charged %d", res.InputTokens+res.OutputTokens, g.charged[0].tokens)
	}
	if calls, _ := f.calls.snapshot(); calls != 1 {
		t.Errorf("%d model calls reached the provider, want 1: the refused one must not", calls)
	}
	want := []rec{
		{Key: "b1/0", Role: "user"},
		{Key: "b1/1", Role: "assistant"},
		{Key: "b1/2", Role: "toolResult"},
	}
	got := f.records(sidA)
	for i := range got {
		got[i].Text = ""
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the second model call was made (-want +got):\n%s", d)
	}
}

// TestCompactionIsJudgedAndCharged: a compaction step's model call goes through the budget
// gate as a turn's does: judged first (refused, no call reaches the provider and a step
// asked for alone ends with the budget's error), charged with what it used.
func TestCompactionIsJudgedAndCharged(t *testing.T) {
	for name, tc := range map[string]struct {
		allow       int
		wantRefused bool
	}{
		"charged":        {allow: 2},
		"refused, spent": {allow: 1, wantRefused: true},
	} {
		t.Run(name, func(t *testing.T) {
			agent := scriptedAgent("main", rule("^hi", "hello there"), rule("^Compaction step", "SUMMARY"))
			agent.Spec.Memory.Compaction.KeepRecentMessages = ptr.To[int32](0)
			g := &gateRecorder{allow: tc.allow}
			f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)}, g.option)
			f.submit(turnReq("h1", keyA, "hi"))
			if res := f.await("h1"); res.Err != nil {
				t.Fatal(res.Err)
			}
			compact := turnReq("c1", keyA, "")
			compact.Input, compact.Compact = transcript.Message{}, true
			f.submit(compact)
			res := f.await("c1")

			if got := g.judged[len(g.judged)-1].Purpose; len(g.judged) != 2 || got != budget.PurposeCompaction {
				t.Fatalf("judged %+v: want the turn's call, then the compaction's", g.judged)
			}
			calls, _ := f.calls.snapshot()
			if tc.wantRefused {
				if !errors.Is(res.Err, budget.ErrExceeded) || res.Compacted || calls != 1 || len(g.charged) != 1 {
					t.Fatalf("refused compaction: err %v, compacted %v, %d model calls, charged %v: want the budget's error, "+
						"no compaction, no model call, nothing charged", res.Err, res.Compacted, calls, g.charged)
				}
				return
			}
			if res.Err != nil || !res.Compacted || calls != 2 {
				t.Fatalf("compaction: err %v, compacted %v, %d model calls", res.Err, res.Compacted, calls)
			}
			if len(g.charged) != 2 || g.charged[1].purpose != budget.PurposeCompaction || g.charged[1].tokens == 0 ||
				g.charged[1].tokens != res.InputTokens+res.OutputTokens {
				t.Errorf("charged %v: want the compaction's call charged with what it used (%d tokens)", g.charged, res.InputTokens+res.OutputTokens)
			}
		})
	}
}
