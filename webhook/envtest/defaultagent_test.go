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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A person's minimal spawn, `spec: {task: hi}` by kubectl apply: it runs under the
// namespace's default agent (SessionPolicy spec.defaultAgentId, else its only Agent), and
// the object says which; without one it is refused with the Agents' names.
var _ = Describe("a person's minimal spawn", func() {
	// apply runs kubectl apply of a SubagentRun with only a task, and returns its output.
	apply := func(ns, name string) (string, error) {
		user, err := env.AddUser(envtest.User{Name: "person", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubectl, err := user.Kubectl()
		Expect(err).NotTo(HaveOccurred())
		f := filepath.Join(GinkgoT().TempDir(), "run.yaml")
		Expect(os.WriteFile(f, []byte("apiVersion: sessions.agents.dev/v1alpha1\nkind: SubagentRun\n"+
			"metadata: {name: "+name+", namespace: "+ns+"}\nspec: {task: hi}\n"), 0o600)).To(Succeed())
		stdout, stderr, err := kubectl.Run("apply", "-f", f)
		out, _ := io.ReadAll(io.MultiReader(stdout, stderr))
		return string(out), err
	}
	namespace := func(agents ...string) string {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "minimal-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		for _, a := range agents {
			Expect(k8s.Create(ctx, agentObj(n.Name, a))).To(Succeed())
		}
		return n.Name
	}
	agentOf := func(ns, name string) string {
		run := &sessionsv1alpha1.SubagentRun{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run)).To(Succeed())
		return run.Spec.AgentID
	}

	It("runs under the namespace's only Agent", func() {
		ns := namespace("solo")
		Eventually(func(g Gomega) {
			out, err := apply(ns, "hi")
			g.Expect(err).NotTo(HaveOccurred(), out)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(agentOf(ns, "hi")).To(Equal("solo"))
	})

	It("runs under the SessionPolicy's defaultAgentId", func() {
		ns := namespace("main", "research")
		Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
			Spec: sessionsv1alpha1.SessionPolicySpec{DefaultAgentID: "research"}})).To(Succeed())
		Eventually(func(g Gomega) {
			out, err := apply(ns, "hi")
			g.Expect(err).NotTo(HaveOccurred(), out)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(agentOf(ns, "hi")).To(Equal("research"))
	})

	It("is refused with the Agents' names when there is no default", func() {
		ns := namespace("main", "research")
		Eventually(func(g Gomega) {
			out, err := apply(ns, "hi")
			g.Expect(err).To(HaveOccurred())
			g.Expect(out).To(ContainSubstring("spec.agentId: Required value: no default agent in this namespace: name one of its Agents (main, research) or set spec.defaultAgentId on SessionPolicy default"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		err := k8s.Create(ctx, runObj(ns, "", ""))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	})

	It("is refused when the namespace has no Agent", func() {
		out, err := apply(namespace(), "hi")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("this namespace has no Agent to run the spawn: create one first"))
	})
})
