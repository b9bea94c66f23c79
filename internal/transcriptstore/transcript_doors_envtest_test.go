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
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// Issue 30, finding 1: a reader allowed one session's transcript (RBAC get
// agentsessions/transcript with resourceNames) reads that one through every door and no
// other: the history API, /mcp's sessions_history and sessions_list with messages, and the
// console's tools all refuse the other session's transcript.
func TestOneTranscriptReaderReadsOneTranscriptThroughEveryDoor(t *testing.T) {
	f := startDoors(t)
	f.grant("one-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions", "sessionpolicies"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"sessions.agents.dev"}, Resources: []string{"agentsessions/transcript"}, Verbs: []string{"get"},
			ResourceNames: []string{sessionkey.ObjectName(keyA)}},
	})
	token := f.token("one-reader", audience)
	f.eventually("the history of A", func() (bool, string) {
		a := f.history(token, doorNS, keyA)
		return a.status == http.StatusOK, a.text
	})
	if a := f.history(token, doorNS, keyB); a.status != http.StatusForbidden {
		t.Errorf("history API, session B: %d %s, want 403", a.status, a.text)
	}
	for _, door := range []string{"mcp", "console"} {
		a := f.tool(door, token, doorNS, "", "sessions_history", map[string]any{"sessionKey": keyA})
		if a.isErr || !strings.Contains(a.text, "secret of "+keyA) {
			t.Errorf("%s sessions_history A = %d %s, want A's transcript", door, a.status, a.text)
		}
		a = f.tool(door, token, doorNS, "", "sessions_history", map[string]any{"sessionKey": keyB})
		if !a.isErr || strings.Contains(a.text, "secret of") {
			t.Errorf("%s sessions_history B = %d %s, want refused", door, a.status, a.text)
		}
		a = f.tool(door, token, doorNS, "", "sessions_list", map[string]any{"messageLimit": 5})
		if a.isErr || strings.Contains(a.text, "secret of "+keyB) || messagesOf(t, a.text, keyA) != 1 || messagesOf(t, a.text, keyB) != 0 {
			t.Errorf("%s sessions_list messageLimit 5 = %s, want A's message and B listed without messages", door, a.text)
		}
	}
}
