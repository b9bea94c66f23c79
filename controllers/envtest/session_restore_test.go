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
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The sessions tool's restore on a real API server: an archived session comes back with
// its transcript (listed as active, its history read, sends reach it), a stale sessionId
// is refused by the tool and by the API server's guard, and a session whose archived
// transcript the retention removed is not found.
var _ = Describe("the sessions tool's restore", func() {
	It("restores an archived session with its history and refuses stale or gone ones", func() {
		ns := newNamespace()
		createAgent(ns, "rst", rule("^hello", "hi"), rule("^again", "welcome back"))
		s := createSession(ns, "agent:rst:main", "rst")
		waitSend(createSend(ns, "agent:rst:main", "hello", 30, ""), completed)
		sid := s.Status.SessionID

		watcher, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		// archive-at is stamped on the suite's fake clock, which the controller reads; the
		// restore waits for the controller on the real one.
		archiver := &sessiontools.Call{Env: &sessiontools.Env{Client: k8s, Reader: k8s, Store: store, Clock: fakeClock}, Namespace: ns, ID: "archive"}
		restorer := &sessiontools.Call{Env: &sessiontools.Env{Client: k8s, Reader: k8s, Watcher: watcher, Store: store}, Namespace: ns, ID: "restore"}
		run := func(c *sessiontools.Call, name string, args map[string]any) map[string]any {
			raw, _ := json.Marshal(args)
			for _, t := range sessiontools.All() {
				if t.Name != name {
					continue
				}
				out, err := t.Run(ctx, c, raw)
				Expect(err).NotTo(HaveOccurred())
				b, _ := json.Marshal(out)
				var m map[string]any
				Expect(json.Unmarshal(b, &m)).To(Succeed())
				return m
			}
			Fail("no tool " + name)
			return nil
		}
		listed := func(archived bool) []string {
			out := run(restorer, "sessions_list", map[string]any{"archived": archived})
			var keys []string
			for _, row := range out["sessions"].([]any) {
				keys = append(keys, row.(map[string]any)["key"].(string))
			}
			return keys
		}
		archive := func() {
			Expect(run(archiver, "sessions", map[string]any{"action": "archive", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
				To(HaveKeyWithValue("status", "ok"))
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
				g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
				g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionArchived)).To(BeTrue())
			}, testenv.Timeout, testenv.Interval).Should(Succeed())
		}

		By("a restore of a session that is not archived")
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "error"), HaveKeyWithValue("error", ContainSubstring("is not archived"))))

		By("an archive, and the session listed as archived")
		archive()
		Expect(listed(false)).NotTo(ContainElement("agent:rst:main"))
		Expect(listed(true)).To(ContainElement("agent:rst:main"))

		By("a restore with a stale sessionId")
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": "not-" + sid})).
			To(And(HaveKeyWithValue("status", "forbidden"), HaveKeyWithValue("error", ContainSubstring(`not the expected "not-`+sid+`"`))))
		stale := `[{"op":"test","path":"/status/sessionId","value":"not-` + sid + `"},{"op":"add","path":"/metadata/annotations/sessions.agents.dev~1restore","value":"x"}]`
		Expect(k8s.Patch(ctx, s.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(stale)))).NotTo(Succeed(),
			"the API server applies the guard however late the write lands")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))

		By("a restore guarded by the current sessionId")
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "ok"), HaveKeyWithValue("sessionId", sid)))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionActive))
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived)).To(BeNil())
		Expect(s.Annotations).NotTo(HaveKey(sessionsv1alpha1.ArchiveAtAnnotation))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(eventsOf(g, s)).To(ContainElement(ContainSubstring("Normal/Restored")))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(listed(false)).To(ContainElement("agent:rst:main"))
		Expect(listed(true)).NotTo(ContainElement("agent:rst:main"))

		By("its history read back, and a send that reaches it again")
		hist := run(restorer, "sessions_history", map[string]any{"sessionKey": "agent:rst:main"})
		Expect(hist).To(HaveKeyWithValue("sessionId", sid))
		Expect(texts(messages(ns, s))).To(Equal([]string{"user: hello", "assistant: hi"}))
		Expect(hist["messages"]).To(HaveLen(2))
		waitSend(createSend(ns, "agent:rst:main", "again", 30, ""), completed)
		Expect(texts(messages(ns, s))).To(Equal([]string{"user: hello", "assistant: hi", "user: again", "assistant: welcome back"}))

		By("an archive again, its transcript removed as the retention would, and a restore")
		archive()
		gone, err := filepath.Glob(filepath.Join(dataDir, "transcripts", ns, sid+".jsonl.deleted.*"))
		Expect(err).NotTo(HaveOccurred())
		Expect(gone).To(HaveLen(1))
		Expect(os.Remove(gone[0])).To(Succeed())
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "not_found"), HaveKeyWithValue("error", ContainSubstring("no longer kept"))))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived).Reason).To(Equal(sessionsv1alpha1.ReasonRestoreFailed))
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
			To(HaveKeyWithValue("status", "not_found"), "asked again, the tool answers from the condition")

		By("a restore of a session that was deleted")
		Expect(k8s.Delete(ctx, s)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKeyFromObject(s), &sessionsv1alpha1.AgentSession{})
		}, testenv.Timeout, testenv.Interval).Should(Satisfy(apierrors.IsNotFound), "a session whose transcript is gone goes at once")
		Expect(run(restorer, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:rst:main", "expectedSessionId": sid})).
			To(HaveKeyWithValue("status", "not_found"))
	})

	It("leaves a session outside the caller's visibility alone", func() {
		ns := newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityTree})
		carolAgent := createAgent(ns, "carol")
		createAgent(ns, "dave")
		carol := createSession(ns, "agent:carol:main", "carol")
		dave := createSession(ns, "agent:dave:main", "dave")
		Expect(k8s.Patch(ctx, dave, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"sessions.agents.dev/archive-at":"2000-01-01T00:00:00Z"}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dave), dave)).To(Succeed())
			g.Expect(dave.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		c := &sessiontools.Call{Env: &sessiontools.Env{Client: k8s, Reader: k8s}, Namespace: ns, ID: "carol-restore", Session: carol, Agent: carolAgent}
		var tool sessiontools.Tool
		for _, t := range sessiontools.All() {
			if t.Name == "sessions" {
				tool = t
			}
		}
		_, err := tool.Run(ctx, c, json.RawMessage(`{"action":"restore","sessionKey":"agent:dave:main","expectedSessionId":"`+dave.Status.SessionID+`"}`))
		Expect(err).To(HaveOccurred(), "a session outside carol's tree")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(dave), dave)).To(Succeed())
		Expect(dave.Annotations).NotTo(HaveKey(sessionsv1alpha1.RestoreAnnotation))
		Expect(dave.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
	})
})
