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
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// Budgets at admission: a namespace whose window is spent takes no new send or spawn, and
// a send's or run's own budget may not ask more than the policy's.
var _ = Describe("budgets at admission", Ordered, func() {
	var ns string
	// A window of a year: the suite's fixed clock and the test's time.Now fall in one.
	window := metav1.Duration{Duration: 8760 * time.Hour}
	apply := func(yaml string) (string, error) {
		user, err := env.AddUser(envtest.User{Name: "budget-person", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubectl, err := user.Kubectl()
		Expect(err).NotTo(HaveOccurred())
		f := filepath.Join(GinkgoT().TempDir(), "obj.yaml")
		Expect(os.WriteFile(f, []byte(yaml), 0o600)).To(Succeed())
		stdout, stderr, err := kubectl.Run("apply", "-n", ns, "-f", f)
		out, _ := io.ReadAll(io.MultiReader(stdout, stderr))
		return string(out), err
	}
	setSpend := func(cost string, tokens int64) {
		start := metav1.NewTime(usage.WindowStart(time.Now(), window.Duration))
		Eventually(func(g Gomega) {
			p := &sessionsv1alpha1.SessionPolicy{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p)).To(Succeed())
			p.Status.Spend = &sessionsv1alpha1.Spend{WindowStart: &start, Cost: cost, Tokens: tokens}
			g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	}

	BeforeAll(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "budget-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		Expect(k8s.Create(ctx, agentObj(ns, "main"))).To(Succeed())
		Expect(k8s.Create(ctx, sessionObj(ns, "agent:main:main", "main"))).To(Succeed())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
			Spec: sessionsv1alpha1.SessionPolicySpec{Budgets: &sessionsv1alpha1.Budgets{
				Namespace: &sessionsv1alpha1.NamespaceBudget{Window: window, MaxCost: "50", MaxTokens: ptr.To[int64](5000000)},
				PerSend:   &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "1", MaxTokens: ptr.To[int64](200000), MaxTurns: ptr.To[int32](20)}},
				PerRun:    &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "5", MaxTokens: ptr.To[int64](1000000), MaxTurns: ptr.To[int32](200)}},
			}}})).To(Succeed())
	})

	It("refuses a send whose budget is above the policy's perSend, and a run's above perRun", func() {
		Eventually(func(g Gomega) {
			out, err := apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SessionSend\nmetadata: {name: big}\n" +
				"spec: {sessionKey: agent:main:main, message: hi, budget: {maxCost: \"2\", maxTurns: 5}}\n")
			g.Expect(err).To(HaveOccurred())
			g.Expect(out).To(ContainSubstring(`budget above the policy: spec.budget maxCost "2" is above "1", the most SessionPolicy spec.budgets.perSend allows`))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		out, err := apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SubagentRun\nmetadata: {name: big}\n" +
			"spec: {task: hi, agentId: main, budget: {maxTokens: 1000001}}\n")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("spec.budget maxTokens 1000001 is above 1000000, the most SessionPolicy spec.budgets.perRun allows"))
		out, err = apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SessionSend\nmetadata: {name: small}\n" +
			"spec: {sessionKey: agent:main:main, message: hi, budget: {maxCost: \"0.5\", maxTurns: 5}}\n")
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("refuses new sends and spawns once the namespace's window is spent, saying when it resets", func() {
		setSpend("50.25", 10)
		start := usage.WindowStart(time.Now(), window.Duration)
		want := `namespace budget spent: the namespace's turns cost 50.25 of its maxCost "50" in the 8760h0m0s window since ` +
			start.Format(time.RFC3339) + " (SessionPolicy spec.budgets.namespace); the window resets at " + start.Add(window.Duration).Format(time.RFC3339)
		Eventually(func(g Gomega) {
			out, err := apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SessionSend\nmetadata: {name: spent}\n" +
				"spec: {sessionKey: agent:main:main, message: hi}\n")
			g.Expect(err).To(HaveOccurred())
			g.Expect(out).To(ContainSubstring(want))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		out, err := apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SubagentRun\nmetadata: {name: spent}\nspec: {task: hi, agentId: main}\n")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring(want))

		By("a spend under the limits lets them in again")
		setSpend("", 0)
		Eventually(func(g Gomega) {
			out, err := apply("apiVersion: sessions.agents.dev/v1alpha1\nkind: SessionSend\nmetadata: {name: fresh}\n" +
				"spec: {sessionKey: agent:main:main, message: hi}\n")
			g.Expect(err).NotTo(HaveOccurred(), out)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("validates budgets in the schema", func() {
		p := &sessionsv1alpha1.SessionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p)).To(Succeed())
		p.Spec.Budgets.Namespace = &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: time.Second}}
		err := k8s.Update(ctx, p)
		Expect(err).To(MatchError(ContainSubstring("a namespace budget needs maxCost or maxTokens")))
		Expect(err).To(MatchError(ContainSubstring("window must be between 1m and 8784h")))
		p.Spec.Budgets.Namespace = &sessionsv1alpha1.NamespaceBudget{Window: window, MaxCost: "-1"}
		Expect(k8s.Update(ctx, p)).To(MatchError(ContainSubstring("spec.budgets.namespace.maxCost")))
	})
})
