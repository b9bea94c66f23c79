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

package transcriptstore_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Search returns only excerpts of transcripts the caller may read, through every door: a
// reader of session A's transcript finds A's message and never B's; a caller with no
// transcript right in the namespace is refused as /events refuses it (403), before the index
// is asked.
func TestSearchFindsOnlyReadableTranscripts(t *testing.T) {
	f := startDoors(t)
	sessions := rbacv1.PolicyRule{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions", "sessionpolicies"}, Verbs: []string{"get", "list", "watch"}}
	f.grant("one-reader", []rbacv1.PolicyRule{sessions,
		{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions/transcript"}, Verbs: []string{"get"},
			ResourceNames: []string{sessionkey.ObjectName(keyA)}}})
	f.grant("no-reader", []rbacv1.PolicyRule{sessions})
	one, none := f.token("one-reader", audience), f.token("no-reader", audience)

	f.eventually("A's hit for its reader", func() (bool, string) {
		a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q=secret", one, nil)
		return a.status == http.StatusOK && strings.Contains(a.text, "secret of "+keyA), a.text
	})
	if a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q=secret", one, nil); strings.Contains(a.text, "secret of "+keyB) {
		t.Errorf("GET /search as A's reader found B: %s", a.text)
	}
	for _, q := range []string{"secret", "absent"} {
		a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q="+q, none, nil)
		if ev := f.do(http.MethodGet, "/events?namespace="+doorNS, none, nil); a.status != http.StatusForbidden || ev.status != http.StatusForbidden {
			t.Errorf("GET /search?q=%s without a transcript right = %d %s (and /events %d), want 403 as /events", q, a.status, a.text, ev.status)
		}
	}
	if a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q=secret", "not-a-token", nil); a.status != http.StatusUnauthorized {
		t.Errorf("GET /search with a bad token = %d, want 401", a.status)
	}
	for _, door := range []string{"mcp", "console"} {
		a := f.tool(door, one, doorNS, "", "sessions_search", map[string]any{"query": "secret"})
		if a.isErr || !strings.Contains(a.text, "secret of "+keyA) || strings.Contains(a.text, "secret of "+keyB) {
			t.Errorf("%s sessions_search as A's reader = %s, want A's hit only", door, a.text)
		}
		a = f.tool(door, none, doorNS, "", "sessions_search", map[string]any{"query": "secret"})
		if strings.Contains(a.text, "secret of") || !a.isErr && !a.refused() && !strings.Contains(a.text, `"status":"forbidden"`) {
			t.Errorf("%s sessions_search without a transcript right = %s, want refused", door, a.text)
		}
	}
}

// Paging is of readable hits only: A's reader asking one hit a page gets A's hit and no
// nextOffset, though B's transcript (which it may not read) holds the word too; a word only
// B's transcript holds gives the same empty page as a word nobody wrote. Before, hits were
// filtered after paging and nextOffset told that a further (unreadable) hit existed.
func TestSearchPagesReadableHitsOnly(t *testing.T) {
	f := startDoors(t)
	sessions := rbacv1.PolicyRule{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions", "sessionpolicies"}, Verbs: []string{"get", "list", "watch"}}
	f.grant("one-reader", []rbacv1.PolicyRule{sessions,
		{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions/transcript"}, Verbs: []string{"get"},
			ResourceNames: []string{sessionkey.ObjectName(keyA)}}})
	one := f.token("one-reader", audience)
	page := func(text string) transcript.SearchResult {
		t.Helper()
		var res transcript.SearchResult
		if err := json.Unmarshal([]byte(text), &res); err != nil {
			t.Fatalf("decoding %q: %v", text, err)
		}
		return res
	}
	f.eventually("A's hit for its reader", func() (bool, string) {
		a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q=secret&limit=1", one, nil)
		return a.status == http.StatusOK && strings.Contains(a.text, "secret of "+keyA), a.text
	})
	for q, want := range map[string]int{"secret": 1, "other": 0, "nowhere": 0} {
		a := f.do(http.MethodGet, "/search?namespace="+doorNS+"&q="+q+"&limit=1", one, nil)
		if res := page(a.text); a.status != http.StatusOK || len(res.Hits) != want || res.NextOffset != 0 {
			t.Errorf("GET /search?q=%s&limit=1 as A's reader = %d %s, want %d hit(s) and no nextOffset", q, a.status, a.text, want)
		}
		for _, door := range []string{"mcp", "console"} {
			a := f.tool(door, one, doorNS, "", "sessions_search", map[string]any{"query": q, "limit": 1})
			var res sessiontools.SearchResult
			if err := json.Unmarshal([]byte(a.text), &res); a.isErr || err != nil || res.Count != want || res.NextOffset != 0 {
				t.Errorf("%s sessions_search {%s, limit 1} as A's reader = %s, want %d hit(s) and no nextOffset", door, q, a.text, want)
			}
		}
	}
}

// A sandboxed session searches its own tree only, whatever the namespace's visibility: with
// visibility all it would see every session of its agent, but the sandbox keeps it to itself
// and the sessions it spawned. Its caller may read every transcript: visibility alone narrows
// the search.
func TestSandboxedSearchStaysInItsTree(t *testing.T) {
	f := startDoors(t)
	ctx := t.Context()
	const (
		sandboxed = "agent:a:subagent:11111111-2222-3333-4444-555555555555"
		child     = "agent:a:subagent:66666666-7777-8888-9999-000000000000"
	)
	f.must(f.admin.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: "default"},
		Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll}}))
	for _, s := range []struct{ key, parent string }{{sandboxed, keyA}, {child, sandboxed}} {
		obj := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: sessionkey.ObjectName(s.key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: s.key, AgentID: "a", SpawnedBy: s.parent, Sandboxed: true}}
		f.must(f.admin.Create(ctx, obj))
		obj.Status.SessionID = "sid-" + obj.Name
		f.must(f.admin.Status().Update(ctx, obj))
		_, err := f.store.CreateSession(ctx, transcript.SessionHeader{Namespace: doorNS, SessionID: obj.Status.SessionID,
			SessionKey: s.key, Name: obj.Name, CreatedAt: time.Now()})
		f.must(err)
		_, err = f.store.Append(ctx, doorNS, obj.Status.SessionID, transcript.AppendRequest{Message: transcript.Message{
			Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "secret of " + s.key}}}})
		f.must(err)
	}
	group := []string{"sessions.agents.dev"}
	f.grant("all-reader", []rbacv1.PolicyRule{
		{APIGroups: group, Resources: []string{"agentsessions", "sessionpolicies", "agents"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: group, Resources: []string{"agentsessions/transcript"}, Verbs: []string{"get"}},
		{APIGroups: group, Resources: []string{"agentsessions"}, Verbs: []string{sessionsv1alpha1.VerbActAs}},
	})
	token := f.token("all-reader", audience)

	f.eventually("the sandboxed session's own hit", func() (bool, string) {
		a := f.tool("mcp", token, doorNS, sandboxed, "sessions_search", map[string]any{"query": "secret"})
		return !a.isErr && strings.Contains(a.text, "secret of "+sandboxed) && strings.Contains(a.text, "secret of "+child), a.text
	})
	a := f.tool("mcp", token, doorNS, sandboxed, "sessions_search", map[string]any{"query": "secret"})
	for _, outside := range []string{keyA, keyB} {
		if strings.Contains(a.text, "secret of "+outside+`"`) {
			t.Errorf("the sandboxed session found %s, outside its tree: %s", outside, a.text)
		}
	}
	// The same caller as A (not sandboxed) sees the whole namespace.
	a = f.tool("mcp", token, doorNS, keyA, "sessions_search", map[string]any{"query": "secret"})
	if !strings.Contains(a.text, "secret of "+keyB+`"`) || !strings.Contains(a.text, "secret of "+child) {
		t.Errorf("session A with visibility all = %s, want B's and the sub-agents' hits", a.text)
	}
}
