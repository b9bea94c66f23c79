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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The sessions tool's writes on a real API server: the sessionId guard is the server's
// (a JSON Patch test), a reset starts a new transcript under a new sessionId, and an archive
// is the AgentSession controller's as for a kept sub-agent.
var _ = Describe("the sessions management tool", func() {
	It("resets, refuses a stale sessionId, patches and archives", func() {
		ns := newNamespace()
		createAgent(ns, "mgr", rule("^hello", "hi"))
		s := createSession(ns, "agent:mgr:main", "mgr")
		waitSend(createSend(ns, "agent:mgr:main", "hello", 30, ""), completed)
		Expect(texts(messages(ns, s))).To(Equal([]string{"user: hello", "assistant: hi"}))
		first := s.Status.SessionID

		call := &sessiontools.Call{Env: &sessiontools.Env{Client: k8s, Reader: k8s, Clock: fakeClock}, Namespace: ns, ID: "manage"}
		run := func(args map[string]any) string {
			raw, _ := json.Marshal(args)
			var tool sessiontools.Tool
			for _, t := range sessiontools.All() {
				if t.Name == "sessions" {
					tool = t
				}
			}
			out, err := tool.Run(ctx, call, raw)
			Expect(err).NotTo(HaveOccurred())
			b, _ := json.Marshal(out)
			return string(b)
		}

		By("a reset guarded by the current sessionId")
		Expect(run(map[string]any{"action": "reset", "sessionKey": "agent:mgr:main", "expectedSessionId": first})).To(ContainSubstring(`"status":"ok"`))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.SessionID).NotTo(Equal(first))
			g.Expect(s.Status.MessageCount).To(BeZero())
			g.Expect(eventsOf(g, s)).To(ContainElement(ContainSubstring("Normal/Reset")))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(messages(ns, s)).To(BeEmpty(), "the new transcript starts empty")

		By("the old sessionId names no session any more")
		Expect(run(map[string]any{"action": "archive", "sessionKey": "agent:mgr:main", "expectedSessionId": first})).
			To(ContainSubstring(`not the expected`))
		stale := `[{"op":"test","path":"/status/sessionId","value":"` + first + `"},{"op":"add","path":"/spec/label","value":"x"}]`
		Expect(k8s.Patch(ctx, s.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(stale)))).NotTo(Succeed(),
			"the API server applies the guard however late the write lands")

		By("a patch of label, model and thinking level")
		Expect(run(map[string]any{"action": "patch", "sessionKey": "agent:mgr:main", "label": "inbox", "thinkingLevel": "low"})).To(ContainSubstring(`"status":"ok"`))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Spec.Label).To(Equal("inbox"))
		Expect(s.Spec.ThinkingLevel).To(Equal(sessionsv1alpha1.ThinkingLow))

		By("an archive by the controller")
		Expect(run(map[string]any{"action": "archive", "sessionKey": "agent:mgr:main", "expectedSessionId": s.Status.SessionID})).To(ContainSubstring(`"status":"ok"`))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
