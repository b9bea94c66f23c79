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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Compaction is a model call like any other: the namespace's budget window judges it before
// it is made and is charged what it used (judge, then charge).
var _ = Describe("Compaction under a namespace budget", func() {
	var ns string
	var model *compactionModel
	var sess *sessionsv1alpha1.AgentSession
	start := func(maxTokens int64) {
		ns = newNamespace()
		model = newCompactionModel()
		DeferCleanup(model.Close)
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Budgets: &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{
			Window: metav1.Duration{Duration: 8760 * time.Hour}, MaxTokens: ptr.To(maxTokens)}}})
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "keeper", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "big-model", BaseURL: model.URL + "/v1",
				ContextTokens: ptr.To[int64](compactionWindow)},
			Memory: sessionsv1alpha1.MemorySpec{Compaction: sessionsv1alpha1.CompactionSpec{KeepRecentMessages: ptr.To[int32](4), TimeoutSeconds: ptr.To[int32](5)}},
		}})).To(Succeed())
		sess = createSession(ns, "agent:keeper:main", "keeper")
	}
	spentTokens := func(g Gomega) int64 {
		p := &sessionsv1alpha1.SessionPolicy{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p)).To(Succeed())
		g.Expect(p.Status.Spend).NotTo(BeNil(), "no spend recorded")
		return p.Status.Spend.Tokens
	}
	askCompaction := func(ask string) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
		base := sess.DeepCopy()
		sess.Annotations = map[string]string{sessionsv1alpha1.CompactRequestAnnotation: ask}
		Expect(k8s.Patch(ctx, sess, client.MergeFrom(base))).To(Succeed())
	}
	// answered waits until the annotation is gone and the session has the event.
	answered := func(event string) {
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
			g.Expect(sess.Annotations).NotTo(HaveKey(sessionsv1alpha1.CompactRequestAnnotation))
			g.Expect(eventsOf(g, sess)).To(ContainElement(event))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	}
	compactionRequests := func() int {
		n := 0
		for _, r := range model.requests() {
			if r.compaction() {
				n++
			}
		}
		return n
	}

	It("charges the compaction the annotation asks for to the window", func() {
		start(1_000_000_000)
		seed(ns, sess, "old", 10)
		askCompaction("charged")
		answered("agentsession-controller Normal/Compacted")
		Expect(compactionRequests()).To(Equal(1))
		// The model answers a compaction step with 1,000 prompt and 2 completion tokens.
		Eventually(spentTokens, testenv.Timeout, testenv.Interval).Should(Equal(int64(1002)))
	})

	It("makes no model call for a compaction the annotation asks for once the window is spent, and says why", func() {
		start(1)
		// One turn spends the window: 10 prompt and 2 completion tokens of its 1.
		waitSend(createSend(ns, "agent:keeper:main", "hello", 30, ""), completed)
		Eventually(spentTokens, testenv.Timeout, testenv.Interval).Should(Equal(int64(12)))
		seed(ns, sess, "old", 10)
		askCompaction("spent")
		answered("agent-runtime Warning/BudgetExceeded")
		Expect(compactionRequests()).To(BeZero(), "a compaction step reached the priced model under a spent window")
		Expect(compactions(ns, sess)).To(BeEmpty())
		Expect(eventsOf(Default, sess)).NotTo(ContainElement("agentsession-controller Normal/Compacted"))
		Expect(spentTokens(Default)).To(Equal(int64(12)), "the window moved")
	})
})
