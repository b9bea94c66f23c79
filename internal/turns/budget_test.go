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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// budgetRecorder refuses the model call it is asked about after allow calls, and records
// what the turn had used at each ask.
type budgetRecorder struct {
	mu    sync.Mutex
	allow int
	used  []int64
}

func (b *budgetRecorder) BeforeModelCall(_ context.Context, _ *TurnRequest, used TurnResult) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used = append(b.used, used.InputTokens+used.OutputTokens)
	if len(b.used) > b.allow {
		return BudgetExceeded("budget exceeded: the send used too much")
	}
	return nil
}

func TestBudgetCheckBeforeEachModelCall(t *testing.T) {
	agent := scriptedAgent("main", toolRule("^list", "sessions_list", map[string]any{}))
	f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)})
	b := &budgetRecorder{allow: 1}
	f.engine.UseBudget(b)
	f.submit(turnReq("b1", keyA, "list them"))
	res := f.await("b1")
	if !errors.Is(res.Err, ErrBudgetExceeded) || res.Err.Error() != "budget exceeded: the send used too much" {
		t.Fatalf("turn error %v, want the budget's", res.Err)
	}
	if len(b.used) != 2 || b.used[0] != 0 || b.used[1] == 0 {
		t.Fatalf("asked with %v: want nothing used before the first call, the first call's usage before the second", b.used)
	}
	if res.InputTokens+res.OutputTokens != b.used[1] {
		t.Errorf("result used %d, the check saw %d", res.InputTokens+res.OutputTokens, b.used[1])
	}
	want := []rec{
		{Key: "b1/0", Role: "user", Text: "list them"},
		{Key: "b1/1", Role: "assistant"},
		{Key: "b1/2", Role: "toolResult"},
	}
	got := f.records(sidA)
	for i := range got {
		got[i].Text = ""
	}
	want[0].Text = ""
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the second model call was made (-want +got):\n%s", d)
	}
}
