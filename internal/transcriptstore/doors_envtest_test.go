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
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The door matrix: every door of the sidecar (transcriptstore.DoorRoutes), every tool it offers
// (mcpserver.ToolNames, over /mcp and /console/tools/) and every console action
// (actions.Paths) has a row naming the access layer's right it asks, and each row
// is tried by every kind of caller. A door or tool added without a row fails
// TestDoorMatrixCoversEveryDoor; one that skips the layer fails TestDoorMatrix (the caller
// without the right gets through).

// doorRow is one door asking one right. try makes the request as token in ns and says
// whether it was allowed, with what it got.
type doorRow struct {
	door  string // a route of transcriptstore.DoorRoutes
	what  string // the tool or console path, for /mcp and /console/
	right caller.Right
	try   func(f *doorFixture, token, ns string) (bool, string)
}

func (r doorRow) String() string {
	return strings.TrimSpace(r.door + " " + r.what + " " + r.right.Name)
}

// noDoorYet are the rights no door asks yet, and why.
var noDoorYet = map[string]string{}

// toolCase is a session tool asked with args, allowed when ok holds for its result.
type toolCase struct {
	name    string
	right   caller.Right
	args    map[string]any
	session string // /mcp only: the session the connection acts as
	ok      func(t *testing.T, a answer) bool
}

func notErr(_ *testing.T, a answer) bool { return !a.isErr }

func says(s string) func(*testing.T, answer) bool {
	return func(_ *testing.T, a answer) bool { return !a.isErr && strings.Contains(a.text, s) }
}

var toolCases = []toolCase{
	{name: "sessions_list", right: caller.ListSessions, ok: notErr},
	{name: "sessions_list", right: caller.ReadTranscript, args: map[string]any{"messageLimit": 5},
		ok: func(t *testing.T, a answer) bool { return !a.isErr && messagesOf(t, a.text, keyA) > 0 }},
	{name: "sessions_list", right: caller.ActAs, session: keyA, ok: notErr},
	{name: "sessions_history", right: caller.ReadTranscript, args: map[string]any{"sessionKey": keyA}, ok: says("secret of " + keyA)},
	{name: "sessions_search", right: caller.ReadTranscript, args: map[string]any{"query": "secret"}, ok: says("secret of " + keyA)},
	// Paging is of readable hits: one a page, A's comes first and no nextOffset tells of B's.
	{name: "sessions_search", right: caller.ReadTranscript, args: map[string]any{"query": "secret", "limit": 1},
		ok: func(_ *testing.T, a answer) bool {
			return !a.isErr && strings.Contains(a.text, "secret of "+keyA) && !strings.Contains(a.text, "nextOffset")
		}},
	{name: "sessions_send", right: caller.CreateSend, args: map[string]any{"sessionKey": keyA, "message": "hi", "timeoutSeconds": 0},
		ok: says(`"status":"accepted"`)},
	{name: "sessions_spawn", right: caller.CreateRun, args: map[string]any{"task": "t", "agentId": "a"}, ok: says(`"status":"accepted"`)},
	{name: "agents_list", right: caller.ListSessions, ok: notErr},
	{name: "sessions", right: caller.ManageSession, args: map[string]any{"action": "patch", "sessionKey": keyA, "label": "door"},
		ok: says(`"status":"ok"`)},
	// A restore is judged by the access layer before the session's phase is: the caller with
	// the right hears that session A is not archived, one without it is refused.
	{name: "sessions", right: caller.ManageSession,
		args: map[string]any{"action": "restore", "sessionKey": keyA, "expectedSessionId": "sid-" + sessionkey.ObjectName(keyA)},
		ok:   func(_ *testing.T, a answer) bool { return strings.Contains(a.text, "is not archived") }},
	{name: "sessions_yield", right: caller.ActAs, session: keyA, ok: says(`"status":"yielded"`)},
	{name: "session_status", right: caller.ReadTranscript, args: map[string]any{"sessionKey": keyA, "changesSince": 0}, ok: says(`"stateVersion":`)},
	{name: "subagents", right: caller.ListSessions, args: map[string]any{"sessionKey": keyA}, ok: says(heldRun)},
	{name: "subagents", right: caller.CancelRun, args: map[string]any{"sessionKey": keyA, "cancel": heldRun}, ok: says(`"cancelled":true`)},
	// Recall of Agent a's memory: only transcripts the caller may read answer (by words here:
	// the offline embedder's vectors find the same message).
	{name: "memory_search", right: caller.ReadTranscript, args: map[string]any{"agent": "a", "query": "secret"}, ok: says("secret of " + keyA)},
	{name: "memory_get", right: caller.ReadTranscript, args: map[string]any{"sessionId": "sid-" + sessionkey.ObjectName(keyA), "seq": 1},
		ok: says("secret of " + keyA)},
	{name: "memory_write", right: caller.ActAs, session: keyA, args: map[string]any{"text": "a note"}, ok: says(`"status":"ok"`)},
	{name: "approvals_list", right: caller.ListApprovals, ok: says(heldApproval)},
	{name: "approvals_decide", right: caller.DecideApproval, args: map[string]any{"name": decidedApproval, "decision": "Approved"},
		ok: says(`"decision":"Approved"`)},
}

// status is a row allowed when the door answers want.
func status(want int, method, path string, body any) func(f *doorFixture, token, ns string) (bool, string) {
	return func(f *doorFixture, token, ns string) (bool, string) {
		p := path + "namespace=" + ns
		a := f.do(method, p, token, body)
		return a.status == want, http.StatusText(a.status) + " " + a.text
	}
}

func doorRows() []doorRow {
	hist := "/sessions/" + url.PathEscape(keyA) + "/history?"
	rows := []doorRow{
		{door: "/sessions/", right: caller.ReadTranscript, try: status(http.StatusOK, http.MethodGet, hist, nil)},
		{door: "/search", right: caller.ReadTranscript, try: func(f *doorFixture, token, ns string) (bool, string) {
			a := f.do(http.MethodGet, "/search?q=secret&namespace="+ns, token, nil)
			return a.status == http.StatusOK && strings.Contains(a.text, "secret of "+keyA), http.StatusText(a.status) + " " + a.text
		}},
		// Paging is of readable hits: one a page, A's comes first and no nextOffset tells of
		// B's (which the caller may not read).
		{door: "/search", what: "paging", right: caller.ReadTranscript, try: func(f *doorFixture, token, ns string) (bool, string) {
			a := f.do(http.MethodGet, "/search?q=secret&limit=1&namespace="+ns, token, nil)
			return a.status == http.StatusOK && strings.Contains(a.text, "secret of "+keyA) && !strings.Contains(a.text, "nextOffset"),
				http.StatusText(a.status) + " " + a.text
		}},
		{door: "/events", what: "session", right: caller.ReadTranscript,
			try: status(http.StatusOK, http.MethodGet, "/events?session="+url.QueryEscape(keyA)+"&", nil)},
		{door: "/events", what: "namespace", right: caller.ReadTranscript, try: status(http.StatusOK, http.MethodGet, "/events?", nil)},
		{door: "/events/", what: "subscriptions", right: caller.ReadTranscript, try: subscribeRow},
		{door: "/console/", what: "/console/send", right: caller.CreateSend,
			try: status(http.StatusCreated, http.MethodPost, "/console/send?", map[string]any{"sessionKey": keyA, "message": "hi"})},
		{door: "/console/", what: "/console/cancel", right: caller.CancelSend,
			try: status(http.StatusOK, http.MethodPost, "/console/cancel?", map[string]any{"kind": "send", "name": heldSend})},
		{door: "/console/", what: "/console/cancel", right: caller.CancelRun,
			try: status(http.StatusOK, http.MethodPost, "/console/cancel?", map[string]any{"kind": "run", "name": heldRun})},
		{door: "/console/", what: "/console/work", right: caller.ListSessions,
			try: status(http.StatusOK, http.MethodPost, "/console/work?", map[string]any{"sessionKey": keyA})},
		{door: "/console/", what: "/console/sessions", right: caller.ListSessions,
			try: status(http.StatusOK, http.MethodPost, "/console/sessions?", map[string]any{"limit": 10})},
	}
	rows = append(rows, a2aRows()...)
	for _, door := range []string{"/mcp", "/console/"} {
		for _, tc := range toolCases {
			if door == "/console/" && tc.session != "" {
				continue // the console speaks as a person only
			}
			what := tc.name
			via := "mcp"
			if door == "/console/" {
				what, via = "/console/tools/"+tc.name, "console"
			}
			rows = append(rows, doorRow{door: door, what: what, right: tc.right,
				try: func(f *doorFixture, token, ns string) (bool, string) {
					a := f.tool(via, token, ns, tc.session, tc.name, tc.args)
					if a.refused() {
						return false, a.text
					}
					return tc.ok(f.t, a), a.text
				}})
		}
	}
	return rows
}

// A door, tool, console action or right without a row fails here, before any row runs.
func TestDoorMatrixCoversEveryDoor(t *testing.T) {
	rows := doorRows()
	has := func(door, what string) bool {
		return slices.ContainsFunc(rows, func(r doorRow) bool { return r.door == door && (what == "" || r.what == what) })
	}
	for _, d := range transcriptstore.DoorRoutes() {
		if !has(d, "") {
			t.Errorf("door %s has no row in the door matrix", d)
		}
	}
	for _, tool := range mcpserver.ToolNames() {
		if !has("/mcp", tool) {
			t.Errorf("MCP tool %s has no row in the door matrix", tool)
		}
	}
	for _, p := range actions.Paths() {
		if !has("/console/", p) {
			t.Errorf("console action %s has no row in the door matrix", p)
		}
	}
	for _, r := range caller.Rights() {
		asked := slices.ContainsFunc(rows, func(row doorRow) bool { return row.right == r })
		if _, ok := noDoorYet[r.Name]; asked == ok {
			t.Errorf("right %s: asked by a row %v, listed in noDoorYet %v", r.Name, asked, ok)
		}
	}
	for _, r := range rows {
		if !slices.Contains(transcriptstore.DoorRoutes(), r.door) {
			t.Errorf("row %s names no door of the sidecar", r)
		}
	}
}

// rulesFor are a Role's rules granting rights (transcript and act-as on session A only)
// over reads every caller of the matrix has.
func rulesFor(rights []caller.Right) []rbacv1.PolicyRule {
	group := []string{"sessions.agents.dev"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: group, Resources: []string{"agentsessions"}, Verbs: []string{"get", "watch"}},
		{APIGroups: group, Resources: []string{"agents", "sessionpolicies", "sessionsends", "subagentruns"}, Verbs: []string{"get", "list", "watch"}},
		// The decision is a patch; the access layer's approve is what grants it.
		{APIGroups: group, Resources: []string{"toolapprovals"}, Verbs: []string{"get", "patch"}},
	}
	for _, r := range rights {
		res := r.Resource
		if r.Subresource != "" {
			res += "/" + r.Subresource
		}
		rule := rbacv1.PolicyRule{APIGroups: group, Resources: []string{res}, Verbs: []string{r.Verb}}
		if r == caller.ReadTranscript || r == caller.ActAs {
			rule.ResourceNames = []string{sessionkey.ObjectName(keyA)}
		}
		rules = append(rules, rule)
	}
	return rules
}

// Every row, tried by: a caller with every right (allowed), one with every right but the
// row's (denied), the first in another namespace, the first with a token for another
// audience, and one whose RoleBinding is deleted (allowed before, refused after, once the
// access layer's memory has passed).
func TestDoorMatrix(t *testing.T) {
	f := startDoors(t)
	rows := doorRows()
	all := caller.Rights()
	f.grant("alice", rulesFor(all))
	f.grant("carol", rulesFor(all))
	allbut := map[string]string{}
	for _, r := range all {
		sa := "allbut-" + strings.ToLower(r.Name)
		f.grant(sa, rulesFor(slices.DeleteFunc(slices.Clone(all), func(x caller.Right) bool { return x == r })))
		allbut[r.Name] = f.token(sa, audience)
	}
	alice, carol := f.token("alice", audience), f.token("carol", audience)
	wrongAudience := f.token("alice", "another-audience")

	// RBAC reaches the authorizer through an informer: wait until each caller has the
	// rights it holds, so a refusal below is the layer's and not the informer's.
	for name, token := range allbut {
		warm := rows[0] // the history API
		if name == caller.ReadTranscript.Name {
			warm = rows[slices.IndexFunc(rows, func(r doorRow) bool { return r.what == "/console/work" })]
		}
		f.eventually("warm "+name, func() (bool, string) { return warm.try(f, token, doorNS) })
	}

	for _, r := range rows {
		t.Run(r.String(), func(t *testing.T) {
			f.t = t
			for _, who := range []string{"alice", "carol"} {
				token := map[string]string{"alice": alice, "carol": carol}[who]
				f.eventually(who+" allowed", func() (bool, string) { return r.try(f, token, doorNS) })
			}
			for name, c := range map[string]struct{ token, ns string }{
				"denied":          {allbut[r.right.Name], doorNS},
				"other namespace": {alice, otherNS},
				"wrong audience":  {wrongAudience, doorNS},
			} {
				if ok, got := r.try(f, c.token, c.ns); ok {
					t.Errorf("%s: allowed (%s), want refused", name, got)
				}
			}
		})
	}

	f.t = t
	f.must(f.admin.Delete(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: "carol"}}))
	for _, r := range rows {
		t.Run("revoked/"+r.String(), func(t *testing.T) {
			f.t = t
			f.eventually("carol refused after her RoleBinding is deleted", func() (bool, string) {
				ok, got := r.try(f, carol, doorNS)
				return !ok, got
			})
		})
	}
}
