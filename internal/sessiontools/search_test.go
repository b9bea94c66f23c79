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
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// searchStore is a store with an index that returns a hit per session it is asked about
// (every session when not narrowed), recording the query.
type searchStore struct {
	countingStore
	all   []string
	asked *transcript.SearchQuery
}

func (s *searchStore) Search(_ context.Context, q transcript.SearchQuery) (transcript.SearchResult, error) {
	s.asked = &q
	ids := s.all
	if q.SessionIDs != nil {
		ids = q.SessionIDs
	}
	res := transcript.SearchResult{NextOffset: q.Offset + q.Limit}
	for _, id := range slices.Sorted(slices.Values(ids)) {
		res.Hits = append(res.Hits, transcript.SearchHit{SessionID: id, Seq: 1, Excerpt: "hit in " + id})
	}
	return res, nil
}

func TestSearchTool(t *testing.T) {
	main := session("agent:a:main", "a", "sid-main")
	child := session("agent:a:subagent:1", "a", "sid-child")
	child.Spec.SpawnedBy = main.Spec.Key
	other := session("agent:b:main", "b", "sid-other")
	noTranscript := session("agent:a:new", "a", "")
	sandboxed := session("agent:a:subagent:2", "a", "sid-sandboxed")
	sandboxed.Spec.SpawnedBy, sandboxed.Spec.Sandboxed = main.Spec.Key, true
	// An archived child of the sandboxed session: archive took its transcript out of the
	// index, so no search asks the index about it.
	archived := session("agent:a:subagent:3", "a", "sid-archived")
	archived.Spec.SpawnedBy, archived.Status.Phase = sandboxed.Spec.Key, sessionsv1alpha1.SessionArchived
	all := []string{"sid-child", "sid-main", "sid-other", "sid-sandboxed"}
	policy := &sessionsv1alpha1.SessionPolicy{}
	policy.Namespace, policy.Name = ns, "default"
	policy.Spec.Visibility = sessionsv1alpha1.VisibilityAll
	policy.Spec.AgentToAgent = sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}

	cases := map[string]struct {
		args        string
		caller      *sessionsv1alpha1.AgentSession
		readable    map[string]bool // nil: the namespace-wide grant
		wantErr     string
		wantQuery   transcript.SearchQuery
		wantHits    []string
		wantNextOff int
		wantRefused bool
	}{
		"query is required":  {args: `{}`, wantErr: "query is required"},
		"limit not a number": {args: `{"query":"x","limit":"many"}`, wantErr: "not a number"},
		"a person with the namespace grant: everything, limit and offset as given": {
			args:      `{"query":"llamas","limit":"5","offset":10}`,
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: 5, Offset: 10},
			wantHits:  all, wantNextOff: 15},
		"limit clamped": {
			args:      `{"query":"llamas","limit":5000}`,
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: MaxSearchLimit},
			wantHits:  all, wantNextOff: MaxSearchLimit},
		"a person reading one transcript gets its hits only": {
			args: `{"query":"llamas"}`, readable: map[string]bool{main.Name: true},
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: DefaultSearchLimit, SessionIDs: []string{"sid-main"}},
			wantHits:  []string{"sid-main"}, wantNextOff: DefaultSearchLimit},
		"a person reading nothing is refused before the index is asked": {
			args: `{"query":"llamas"}`, readable: map[string]bool{}, wantRefused: true},
		"a session with visibility all sees the namespace": {
			args: `{"query":"llamas"}`, caller: main,
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: DefaultSearchLimit},
			wantHits:  all, wantNextOff: DefaultSearchLimit},
		"a sandboxed session searches only its own tree": {
			args: `{"query":"llamas"}`, caller: sandboxed,
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: DefaultSearchLimit, SessionIDs: []string{"sid-sandboxed"}},
			wantHits:  []string{"sid-sandboxed"}, wantNextOff: DefaultSearchLimit},
		"a person reading one by one is not asked about an archived session": {
			args: `{"query":"llamas"}`, readable: map[string]bool{main.Name: true, archived.Name: true},
			wantQuery: transcript.SearchQuery{Namespace: ns, Text: "llamas", Limit: DefaultSearchLimit, SessionIDs: []string{"sid-main"}},
			wantHits:  []string{"sid-main"}, wantNextOff: DefaultSearchLimit},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := newFakeClient(main, child, other, noTranscript, sandboxed, archived, policy)
			st := &searchStore{all: all}
			env := &Env{Client: cl, Reader: cl, Store: st}
			if tc.readable != nil {
				env.Access = func(_ context.Context, r caller.Right, name string) error {
					if r == caller.ReadTranscript && tc.readable[name] {
						return nil
					}
					return apierrors.NewForbidden(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions/transcript"}, name, errors.New("no rule"))
				}
			}
			c := &Call{Env: env, Namespace: ns, Session: tc.caller}
			if tc.caller != nil {
				c.Agent = &sessionsv1alpha1.Agent{}
				c.Agent.Name = tc.caller.Spec.AgentID
			}
			out, err := searchTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantRefused {
				if r, ok := out.(*StatusResult); !ok || r.Status != StatusForbidden || st.asked != nil {
					t.Fatalf("result = %+v, index asked %v; want forbidden, index not asked", out, st.asked)
				}
				return
			}
			if d := cmp.Diff(tc.wantQuery, *st.asked); d != "" {
				t.Errorf("query (-want +got):\n%s", d)
			}
			res := out.(SearchResult)
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.SessionID)
			}
			if d := cmp.Diff(tc.wantHits, got); d != "" {
				t.Errorf("hits (-want +got):\n%s", d)
			}
			if res.Count != len(res.Hits) || res.NextOffset != tc.wantNextOff || res.Query != tc.wantQuery.Text {
				t.Errorf("result = %+v", res)
			}
		})
	}
}

// A caller reading transcripts one by one gets MaxSearchScan questions: archived sessions
// (out of the indexes) are passed over without one, so newer archived sessions do not hide
// an older live one.
func TestReadableSessionIDsPassesOverArchived(t *testing.T) {
	var walk []*sessionsv1alpha1.AgentSession
	for i := range MaxSearchScan + 8 {
		s := session("agent:a:old"+strconv.Itoa(i), "a", "sid-old"+strconv.Itoa(i))
		s.Status.Phase = sessionsv1alpha1.SessionArchived
		walk = append(walk, s)
	}
	walk = append(walk, session("agent:a:main", "a", "sid-main"), session("agent:a:new", "a", ""))
	var asked []string
	ids, err := ReadableSessionIDs(slices.Values(walk), func(name string) (bool, error) {
		asked = append(asked, name)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"sid-main"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{sessionkey.ObjectName("agent:a:main")}, asked); d != "" {
		t.Errorf("asked about (-want +got):\n%s", d)
	}
}

// Without an index (a store that only reads), the tool says so instead of scanning files.
func TestSearchWithoutAnIndex(t *testing.T) {
	c := &Call{Env: &Env{Store: &countingStore{}}, Namespace: ns}
	if _, err := searchTool().Run(t.Context(), c, json.RawMessage(`{"query":"x"}`)); err == nil || !strings.Contains(err.Error(), "keeps no search index") {
		t.Errorf("err = %v", err)
	}
}

// optsStore records the options of the last read.
type optsStore struct{ got transcript.ReadOptions }

func (s *optsStore) Read(_ context.Context, _, _ string, o transcript.ReadOptions) (transcript.Page, error) {
	s.got = o
	return transcript.Page{NextCursor: "seq:3"}, nil
}

// sessions_history opens at a search hit's cursor: the page ends with the hit.
func TestHistoryOpensAtACursor(t *testing.T) {
	cases := map[string]struct {
		args    string
		want    transcript.ReadOptions
		wantErr string
	}{
		"no cursor: the newest": {args: `{"sessionKey":"agent:a:main"}`, want: transcript.ReadOptions{Limit: DefaultHistoryLimit}},
		"a hit's cursor":        {args: `{"sessionKey":"agent:a:main","cursor":"seq:8","limit":3,"includeTools":true}`, want: transcript.ReadOptions{Limit: 3, BeforeSeq: 8, IncludeTools: true}},
		"a bare seq":            {args: `{"sessionKey":"agent:a:main","cursor":"8"}`, want: transcript.ReadOptions{Limit: DefaultHistoryLimit, BeforeSeq: 8}},
		"a bad cursor":          {args: `{"sessionKey":"agent:a:main","cursor":"seq:x"}`, wantErr: "invalid cursor"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := newFakeClient(session("agent:a:main", "a", "sid-main"))
			st := &optsStore{}
			out, err := historyTool().Run(t.Context(), &Call{Env: &Env{Client: cl, Reader: cl, Store: st}, Namespace: ns}, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, st.got); d != "" {
				t.Errorf("read options (-want +got):\n%s", d)
			}
			if out.(HistoryResult).NextCursor != "seq:3" {
				t.Errorf("result %v, want the page's nextCursor", out)
			}
		})
	}
}
