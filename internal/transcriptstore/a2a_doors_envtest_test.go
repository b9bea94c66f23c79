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
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
)

// a2aRows are the A2A door's rows: the agent card, message/send into an existing session
// (create a send, act as the session), tasks/get and tasks/cancel of the held A2A send.
func a2aRows() []doorRow {
	card := func(f *doorFixture, token, ns string) (bool, string) { return f.a2aCard(token, ns, "") }
	send := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "message/send", map[string]any{
			"message": map[string]any{"kind": "message", "messageId": randomID(), "role": "user", "contextId": keyA,
				"parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
			"configuration": map[string]any{"blocking": false}})
	}
	get := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "tasks/get", map[string]any{"id": f.heldTaskID})
	}
	cancel := func(f *doorFixture, token, ns string) (bool, string) {
		return f.a2a(token, ns, "tasks/cancel", map[string]any{"id": f.heldTaskID})
	}
	// The door acts in the path's namespace (and the shard front routes by it): a query
	// naming another namespace changes nothing.
	cardByPath := func(f *doorFixture, token, ns string) (bool, string) {
		other := map[bool]string{true: otherNS, false: doorNS}[ns == doorNS]
		return f.a2aCard(token, ns, "?namespace="+other)
	}
	return []doorRow{
		{door: "/a2a/", what: "agent card", right: caller.ListSessions, try: card},
		{door: "/a2a/", what: "agent card, namespace of the path", right: caller.ListSessions, try: cardByPath},
		{door: "/a2a/", what: "message/send", right: caller.CreateSend, try: send},
		{door: "/a2a/", what: "message/send", right: caller.ActAs, try: send},
		{door: "/a2a/", what: "tasks/get", right: caller.ReadTranscript, try: get},
		{door: "/a2a/", what: "tasks/cancel", right: caller.CancelSend, try: cancel},
	}
}

// a2aCard reads agent a's card in ns (query appended); allowed when it is the card.
func (f *doorFixture) a2aCard(token, ns, query string) (bool, string) {
	a := f.do(http.MethodGet, "/a2a/"+ns+"/a/.well-known/agent-card.json"+query, token, nil)
	var c struct{ Name, ProtocolVersion string }
	_ = json.Unmarshal([]byte(a.text), &c)
	return a.status == http.StatusOK && c.Name == "a" && c.ProtocolVersion != "", http.StatusText(a.status) + " " + a.text
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
