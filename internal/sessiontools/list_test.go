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

package sessiontools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
)

// newestReader walks its sessions in the given order when ordered, counting what it yields.
type newestReader struct {
	client.Client
	ordered  bool
	sessions []*sessionsv1alpha1.AgentSession
	yielded  int
}

func (r *newestReader) NewestSessions(_ context.Context, _ string, yield func(*sessionsv1alpha1.AgentSession) bool) (bool, error) {
	if !r.ordered {
		return false, nil
	}
	for _, s := range r.sessions {
		r.yielded++
		if !yield(s) {
			break
		}
	}
	return true, nil
}

// A person's sessions_list pages a reader that keeps sessions newest first without reading
// past the page, and lists the namespace when the reader keeps no order.
func TestListPagesNewestFirst(t *testing.T) {
	const ns = "team"
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var objs []client.Object
	var ordered []*sessionsv1alpha1.AgentSession
	for i, name := range []string{"d", "c", "b", "a"} { // d is the newest
		at := metav1.NewTime(now.Add(-time.Duration(i) * time.Minute))
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:   sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:webchat:group:" + name, AgentID: "main"},
			Status: sessionsv1alpha1.AgentSessionStatus{UpdatedAt: &at}}
		objs, ordered = append(objs, s), append(ordered, s)
	}
	fc := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	for _, tc := range []struct {
		name        string
		ordered     bool
		wantYielded int
	}{{"ordered", true, 2}, {"unordered", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			r := &newestReader{Client: fc, ordered: tc.ordered, sessions: ordered}
			c := &Call{Env: &Env{Client: fc, Reader: r, Clock: clocktesting.NewFakeClock(now)}, Namespace: ns}
			out, err := listTool().Run(t.Context(), c, json.RawMessage(`{"limit":2}`))
			if err != nil {
				t.Fatal(err)
			}
			rows := out.(map[string]any)["sessions"].([]sessionrows.SessionRow)
			if len(rows) != 2 || rows[0].Key != "agent:main:webchat:group:d" || rows[1].Key != "agent:main:webchat:group:c" {
				t.Fatalf("rows = %+v, want d then c", rows)
			}
			if r.yielded != tc.wantYielded {
				t.Fatalf("the walk yielded %d sessions, want %d", r.yielded, tc.wantYielded)
			}
		})
	}
}
