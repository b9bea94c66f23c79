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
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/a2aserver"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// a2aRows are the A2A door's rows: the agent card, message/send into an existing session
// (create a send, act as the session), tasks/get and tasks/cancel of the caller's own A2A
// send (another caller's task is not found whatever the rights: caller.TaskOwner).
func a2aRows() []doorRow {
	card := func(f *doorFixture, token, ns string) (bool, string) { return f.a2aCard(token, ns, "") }
	send := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "message/send", map[string]any{
			"message": map[string]any{"kind": "message", "messageId": randomID(), "role": "user", "contextId": keyA,
				"parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
			"configuration": map[string]any{"blocking": false}})
	}
	get := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "tasks/get", map[string]any{"id": ownTask(f, token, ns)})
	}
	cancel := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "tasks/cancel", map[string]any{"id": ownTask(f, token, ns)})
	}
	// The door acts in the path's namespace (and the shard front routes by it): a query
	// naming another namespace changes nothing.
	cardByPath := func(f *doorFixture, token, ns string) (bool, string) {
		other := map[bool]string{true: otherNS, false: doorNS}[ns == doorNS]
		return f.a2aCard(token, ns, "?namespace="+other)
	}
	// A2A 1.0: the same doors under 1.0's method names, its HTTP+JSON binding, and ListTasks.
	send1 := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a1(token, ns, "SendMessage", map[string]any{
			"message": map[string]any{"messageId": randomID(), "role": "ROLE_USER", "contextId": keyA,
				"parts": []any{map[string]any{"text": "hi"}}},
			"configuration": map[string]any{"returnImmediately": true}})
	}
	get1 := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a1(token, ns, "GetTask", map[string]any{"id": ownTask(f, token, ns)})
	}
	cancel1 := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a1(token, ns, "CancelTask", map[string]any{"id": ownTask(f, token, ns)})
	}
	getREST := func(f *doorFixture, token, ns string) (bool, string) {
		id := ownTask(f, token, ns)
		a := f.do(http.MethodGet, "/a2a/"+ns+"/a/tasks/"+url.PathEscape(id), token, nil)
		var t struct{ ID string }
		_ = json.Unmarshal([]byte(a.text), &t)
		return a.status == http.StatusOK && t.ID == id, http.StatusText(a.status) + " " + a.text
	}
	return []doorRow{
		{door: "/a2a/", what: "agent card", right: caller.ListSessions, try: card},
		{door: "/a2a/", what: "agent card, namespace of the path", right: caller.ListSessions, try: cardByPath},
		{door: "/a2a/", what: "message/send", right: caller.CreateSend, try: send},
		{door: "/a2a/", what: "message/send", right: caller.ActAs, try: send},
		{door: "/a2a/", what: "tasks/get", right: caller.ReadTranscript, try: get},
		{door: "/a2a/", what: "tasks/cancel", right: caller.CancelSend, try: cancel},
		{door: "/a2a/", what: "SendMessage", right: caller.CreateSend, try: send1},
		{door: "/a2a/", what: "SendMessage", right: caller.ActAs, try: send1},
		{door: "/a2a/", what: "GetTask", right: caller.ReadTranscript, try: get1},
		{door: "/a2a/", what: "CancelTask", right: caller.CancelSend, try: cancel1},
		{door: "/a2a/", what: "GET tasks/{id}", right: caller.ReadTranscript, try: getREST},
		{door: "/a2a/", what: "ListTasks", right: caller.ReadTranscript, try: listTasks},
	}
}

// a2aCard reads agent a's card in ns (query appended); allowed when it is the card.
func (f *doorFixture) a2aCard(token, ns, query string) (bool, string) {
	a := f.do(http.MethodGet, "/a2a/"+ns+"/a/.well-known/agent-card.json"+query, token, nil)
	var c struct{ Name, ProtocolVersion string }
	_ = json.Unmarshal([]byte(a.text), &c)
	return a.status == http.StatusOK && c.Name == "a" && c.ProtocolVersion != "", http.StatusText(a.status) + " " + a.text
}

// ownTask gives the token's user an A2A task of its own into session A, as the A2A server
// marks one it makes, and returns its task id.
func ownTask(f *doorFixture, token, ns string) string {
	user := tokenUser(f.t, token)
	name := "a2a-task-" + a2aserver.CallerLabel(user)[:12]
	send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{a2aserver.LabelAgent: "a", a2aserver.LabelCaller: a2aserver.CallerLabel(user)}},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: keyA, Message: "mine"}}
	if err := f.admin.Create(f.t.Context(), send); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	f.must(f.admin.Get(f.t.Context(), client.ObjectKeyFromObject(send), send))
	return sessiontools.TurnID(send.UID, "round-1")
}

// listTasks lists the caller's tasks; allowed when its own task (ownTask) is listed.
func listTasks(f *doorFixture, token, ns string) (bool, string) {
	id := ownTask(f, token, ns)
	a := f.do(http.MethodPost, "/a2a/"+ns+"/a", token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
		"params": map[string]any{"contextId": keyA}})
	var res struct {
		Result *struct {
			Tasks []struct{ ID string }
		}
	}
	_ = json.Unmarshal([]byte(a.text), &res)
	return a.status == http.StatusOK && res.Result != nil &&
		slices.ContainsFunc(res.Result.Tasks, func(t struct{ ID string }) bool { return t.ID == id }), http.StatusText(a.status) + " " + a.text
}

// tokenUser is the user a ServiceAccount token names (its sub claim).
func tokenUser(t *testing.T, token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct{ Sub string }
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Sub
}

// a2a1 makes one A2A 1.0 JSON-RPC call to agent a of ns; allowed when it answers a task.
func (f *doorFixture) a2a1(token, ns, method string, params any) (bool, string) {
	a := f.do(http.MethodPost, "/a2a/"+ns+"/a", token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	var res struct {
		Result *struct {
			ID   string `json:"id"`
			Task *struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(a.text), &res)
	return a.status == http.StatusOK && res.Result != nil && (res.Result.ID != "" || res.Result.Task != nil), http.StatusText(a.status) + " " + a.text
}

// a2a makes one JSON-RPC call to agent a of ns; allowed when it answers a task.
func (f *doorFixture) a2a(token, ns, method string, params any) (bool, string) {
	a := f.do(http.MethodPost, "/a2a/"+ns+"/a", token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	var res struct {
		Result *struct {
			Kind string `json:"kind"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(a.text), &res)
	return a.status == http.StatusOK && res.Result != nil && res.Result.Kind == "task", http.StatusText(a.status) + " " + a.text
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
