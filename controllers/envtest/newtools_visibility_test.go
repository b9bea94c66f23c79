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

package envtest

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The gateway's newer tools keep to the caller's visibility: under tree visibility carol's
// session reads its own status, and neither reads nor manages dave's.
var _ = Describe("the newer session tools under tree visibility", func() {
	It("serve the caller's own session and refuse one outside its tree", func() {
		ns := newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityTree})
		createAgent(ns, "carol",
			toolRule("^own status", "session_status", map[string]any{"changesSince": 0}),
			toolRule("^dave status", "session_status", map[string]any{"sessionKey": "agent:dave:main"}),
			toolRule("^label dave", "sessions", map[string]any{"action": "patch", "sessionKey": "agent:dave:main", "label": "mine"}),
			toolRule("^find dave", "sessions_list", map[string]any{"agentId": "dave"}))
		createAgent(ns, "dave")
		carol := createSession(ns, "agent:carol:main", "carol")
		dave := createSession(ns, "agent:dave:main", "dave")
		ask := func(text string) map[string]any {
			before := len(messages(ns, carol))
			waitSend(createSend(ns, "agent:carol:main", text, 60, ""), completed)
			return toolResult(messages(ns, carol)[before:])
		}

		own := ask("own status")
		Expect(own).To(HaveKeyWithValue("sessionKey", "agent:carol:main"))
		Expect(own["stateVersion"]).To(BeNumerically(">", 0), "the person's message is a change")

		// A refusal by visibility is forbidden on every tool, as a send's is.
		Expect(ask("dave status")).To(HaveKeyWithValue("status", "forbidden"))
		Expect(ask("label dave")).To(HaveKeyWithValue("status", "forbidden"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dave), dave)).To(Succeed())
		Expect(dave.Spec.Label).To(BeEmpty(), "a session outside the tree was patched")
		Expect(ask("find dave")).To(HaveKeyWithValue("count", BeNumerically("==", 0)))
	})

	// sessions_send by label resolves among the sessions carol sees: a label only dave's
	// sessions carry is not found, and no answer names a session of dave's.
	It("sends by label among the visible sessions only, naming none beyond", func() {
		ns := newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityTree,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}})
		createAgent(ns, "carol",
			toolRule("^send twice", "sessions_send", map[string]any{"label": "ops", "message": "hi", "timeoutSeconds": 0}),
			toolRule("^send solo", "sessions_send", map[string]any{"label": "solo", "message": "hi", "timeoutSeconds": 0}))
		createAgent(ns, "dave")
		carol := createSession(ns, "agent:carol:main", "carol")
		labelled := func(l string) func(*sessionsv1alpha1.AgentSession) {
			return func(s *sessionsv1alpha1.AgentSession) { s.Spec.Label = l }
		}
		createSession(ns, "agent:dave:main", "dave", labelled("ops"))
		createSession(ns, "agent:dave:webchat:group:ops2", "dave", labelled("ops"))
		createSession(ns, "agent:dave:webchat:group:solo", "dave", labelled("solo"))
		ask := func(text string) string {
			before := len(messages(ns, carol))
			waitSend(createSend(ns, "agent:carol:main", text, 60, ""), completed)
			b, err := json.Marshal(toolResult(messages(ns, carol)[before:]))
			Expect(err).NotTo(HaveOccurred())
			return string(b)
		}
		for _, text := range []string{"send twice", "send solo"} {
			res := ask(text)
			Expect(res).To(ContainSubstring("no active session has the label"), text)
			Expect(res).NotTo(ContainSubstring("agent:dave"), text)
		}
		var sends sessionsv1alpha1.SessionSendList
		Expect(k8s.List(ctx, &sends, client.InNamespace(ns))).To(Succeed())
		for _, s := range sends.Items {
			Expect(s.Spec.FromSessionKey).To(BeEmpty(), "carol's label send was created: %+v", s.Spec)
		}
	})
})
