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
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// recordsOnly are a real record store's retired sessions; no archived transcript reads.
type recordsOnly struct{ *store.RetiredStore }

func (recordsOnly) ReadArchived(context.Context, string, string, transcript.ReadOptions) (transcript.Page, error) {
	return transcript.Page{}, transcript.ErrNotFound
}

// A retired session is found as the archived session it was: sessions_list with archived
// (and its search filter over key, label and display name) lists it from its record, to the
// callers its record's agent and spawnedBy let see it (the requester's tree), not to another
// agent's session; sessions_search never asks the index about it (archive took its
// transcript out of the index), for a person reading one by one as for a session.
func TestRetiredSessionsAreFoundAsArchivedOnes(t *testing.T) {
	ctx := context.Background()
	main := session("agent:a:main", "a", "sid-main")
	other := session("agent:b:main", "b", "sid-b")
	policy := &sessionsv1alpha1.SessionPolicy{}
	policy.Namespace, policy.Name = ns, "default"
	policy.Spec.Visibility = sessionsv1alpha1.VisibilityTree
	recs, err := store.OpenRetiredStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	child := transcript.RetiredSession{Namespace: ns, Name: sessionkey.ObjectName("agent:a:subagent:9"), SessionID: "sid-retired",
		Key: "agent:a:subagent:9", AgentID: "a", Label: "llama research", SpawnedBy: main.Spec.Key,
		UpdatedAt: at, ArchivedAt: at, RetiredAt: at.Add(time.Hour), Reason: "age"}
	if err := recs.Retire(ctx, child); err != nil {
		t.Fatal(err)
	}
	cl := newFakeClient(main, other, policy)
	st := &searchStore{all: []string{"sid-main", "sid-b"}}
	env := &Env{Client: cl, Reader: cl, Store: st, Retired: recordsOnly{recs}}
	as := func(s *sessionsv1alpha1.AgentSession) *Call {
		c := &Call{Env: env, Namespace: ns, Session: s}
		if s != nil {
			c.Agent = &sessionsv1alpha1.Agent{}
			c.Agent.Namespace, c.Agent.Name = ns, s.Spec.AgentID
		}
		return c
	}
	list := func(c *Call, args string) map[string]bool {
		t.Helper()
		out, err := listTool().Run(ctx, c, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range out.(map[string]any)["sessions"].([]sessionrows.SessionRow) {
			got[r.Key] = r.Retired
		}
		return got
	}
	cases := map[string]struct {
		caller *sessionsv1alpha1.AgentSession
		args   string
		want   map[string]bool // key -> retired
	}{
		"a person, archived":                       {args: `{"archived":true}`, want: map[string]bool{child.Key: true}},
		"a person, archived, searched by label":    {args: `{"archived":true,"search":"LLAMA"}`, want: map[string]bool{child.Key: true}},
		"a person, archived, another search":       {args: `{"archived":true,"search":"alpaca"}`, want: map[string]bool{}},
		"a person, active sessions":                {args: `{}`, want: map[string]bool{main.Spec.Key: false, other.Spec.Key: false}},
		"the requester: its tree":                  {caller: main, args: `{"archived":true,"search":"llama"}`, want: map[string]bool{child.Key: true}},
		"another agent's session: not in its tree": {caller: other, args: `{"archived":true}`, want: map[string]bool{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, list(as(tc.caller), tc.args)); d != "" {
				t.Errorf("rows: key -> retired (-want +got):\n%s", d)
			}
		})
	}

	t.Run("sessions_search asks the index about live sessions only", func(t *testing.T) {
		env.Access = func(_ context.Context, r caller.Right, name string) error {
			if r == caller.ReadTranscript && name == "" {
				return apierrors.NewForbidden(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions/transcript"},
					name, errors.New("no namespace-wide transcript grant"))
			}
			return nil
		}
		defer func() { env.Access = nil }()
		for _, c := range []*Call{as(nil), as(main)} {
			st.asked = nil
			if _, err := searchTool().Run(ctx, c, json.RawMessage(`{"query":"llama"}`)); err != nil {
				t.Fatal(err)
			}
			if st.asked == nil || st.asked.SessionIDs == nil {
				t.Fatalf("the index was asked %+v; want a list of sessionIds", st.asked)
			}
			for _, id := range st.asked.SessionIDs {
				if id == child.SessionID {
					t.Errorf("the index was asked about the retired session: %v", st.asked.SessionIDs)
				}
			}
		}
	})
}

// sessions_list archived reads the records in pages and stops once its page of rows is
// full, yet lists what one read of them all would: the newest the caller sees when few are
// visible and far apart, and, among records updated at the same time, the first by key
// (its order) though the store pages them by sessionId.
func TestRetiredRowsArePagedInListOrder(t *testing.T) {
	ctx := context.Background()
	main := session("agent:a:main", "a", "sid-main")
	policy := &sessionsv1alpha1.SessionPolicy{}
	policy.Namespace, policy.Name = ns, "default"
	policy.Spec.Visibility = sessionsv1alpha1.VisibilityTree
	recs, err := store.OpenRetiredStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 300
	for i := range n {
		key := fmt.Sprintf("agent:a:subagent:%03d", i)
		rec := transcript.RetiredSession{Namespace: ns, Name: sessionkey.ObjectName(key), Key: key, AgentID: "a",
			SessionID: fmt.Sprintf("sid-%03d", n-i), SpawnedBy: "agent:b:main", UpdatedAt: at.Add(time.Duration(i) * time.Minute), ArchivedAt: at}
		switch {
		case i < 100: // updated at the same time; the first keys have the last sessionIds
			rec.UpdatedAt = at.Add(24 * time.Hour)
		case i%70 == 0: // few, far apart: main's own
			rec.SpawnedBy = main.Spec.Key
		}
		if err := recs.Retire(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	cl := newFakeClient(main, policy)
	env := &Env{Client: cl, Reader: cl, Retired: recordsOnly{recs}}
	keys := func(c *Call, args string) []string {
		t.Helper()
		out, err := listTool().Run(ctx, c, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, r := range out.(map[string]any)["sessions"].([]sessionrows.SessionRow) {
			got = append(got, r.Key)
		}
		return got
	}
	person := &Call{Env: env, Namespace: ns}
	if d := cmp.Diff([]string{"agent:a:subagent:000", "agent:a:subagent:001", "agent:a:subagent:002"},
		keys(person, `{"archived":true,"limit":3}`)); d != "" {
		t.Errorf("a person's newest three (-want +got):\n%s", d)
	}
	requester := &Call{Env: env, Namespace: ns, Session: main, Agent: &sessionsv1alpha1.Agent{}}
	requester.Agent.Namespace, requester.Agent.Name = ns, "a"
	if d := cmp.Diff([]string{"agent:a:subagent:280", "agent:a:subagent:210"},
		keys(requester, `{"archived":true,"limit":2}`)); d != "" {
		t.Errorf("the requester's newest two of its tree (-want +got):\n%s", d)
	}
}
