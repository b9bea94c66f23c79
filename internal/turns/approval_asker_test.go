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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// askerRecorder requires approval of every call and records what the engine asks.
type askerRecorder struct {
	verdicts []string
	asked    []*sessionsv1alpha1.ToolApproval
}

func (a *askerRecorder) Verdict(_ context.Context, _ string, _ *sessionsv1alpha1.Agent, tool string) (policy.ApprovalVerdict, error) {
	a.verdicts = append(a.verdicts, tool)
	return policy.ApprovalVerdict{Require: true, Timeout: time.Minute, Rule: "test"}, nil
}

func (a *askerRecorder) Find(context.Context, string, string) (*sessionsv1alpha1.ToolApproval, error) {
	return nil, nil
}

func (a *askerRecorder) Ask(_ context.Context, ta *sessionsv1alpha1.ToolApproval) (*sessionsv1alpha1.ToolApproval, error) {
	a.asked = append(a.asked, ta)
	return ta, nil
}

// TestApprovalsAskedThroughTheGivenAsker: the engine asks the approval Asker it was given
// at construction, and writes no ToolApproval of its own.
func TestApprovalsAskedThroughTheGivenAsker(t *testing.T) {
	agent := scriptedAgent("main", toolRule("^list", "sessions_list", map[string]any{}))
	a := &askerRecorder{}
	f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)}, func(o *Options) { o.Approvals = a })
	f.submit(turnReq("ap1", keyA, "list them"))
	res := f.await("ap1")
	if res.Err != nil || res.AwaitingApproval == "" {
		t.Fatalf("turn: err %v, awaiting %q: want it to wait on an approval", res.Err, res.AwaitingApproval)
	}
	if len(a.verdicts) != 1 || a.verdicts[0] != "sessions_list" || len(a.asked) != 1 || a.asked[0].Name != res.AwaitingApproval ||
		a.asked[0].Spec.Tool != "sessions_list" {
		t.Fatalf("asked verdicts %v, approvals %v", a.verdicts, a.asked)
	}
	var list sessionsv1alpha1.ToolApprovalList
	if err := f.client.List(context.Background(), &list); err != nil || len(list.Items) != 0 {
		t.Errorf("the engine wrote %d ToolApprovals itself (%v): it asks the Asker", len(list.Items), err)
	}
}
