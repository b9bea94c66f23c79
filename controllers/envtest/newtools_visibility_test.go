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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The gateway's newer tools keep to the caller's visibility: under tree visibility carol's
// session reads its own status, and neither reads nor manages dave's.
var _ = Describe("the newer session tools under tree visibility", func() {
	It("serve the caller's own session and refuse one outside its tree", func() {
		ns := newNamespace()
		createPolicy(ns, v1.SessionPolicySpec{Visibility: v1.VisibilityTree})
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
})
