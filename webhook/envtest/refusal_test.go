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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// How a refused spawn comes back from the API server: 422 Invalid for arguments a caller
// can fix, 403 Forbidden for a policy that refuses whatever the arguments. The session
// tools classify on exactly this (sessiontools.Refusal).
var _ = Describe("refusals by cause", Ordered, func() {
	var ns string
	BeforeAll(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "refuse-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		Expect(k8s.Create(ctx, agentObj(ns, "main"))).To(Succeed())
		Expect(k8s.Create(ctx, agentObj(ns, "research", func(a *sessionsv1alpha1.Agent) { a.Spec.AllowedModels = []string{"small"} }))).To(Succeed())
		Expect(k8s.Create(ctx, sessionObj(ns, "agent:main:main", "main"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: "research"}, &sessionsv1alpha1.Agent{})).To(Succeed())
			g.Expect(cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName("agent:main:main")}, &sessionsv1alpha1.AgentSession{})).To(Succeed())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	DescribeTable("answers with the cause's status",
		func(forbidden bool, say string, requester, agentID string, mut ...func(*sessionsv1alpha1.SubagentRun)) {
			err := k8s.Create(ctx, runObj(ns, requester, agentID, mut...))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(say))
			if forbidden {
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
			} else {
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			}
		},
		Entry("a model not allowed", false, `spec.model: Unsupported value: "big"`, "", "research",
			func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Model = "big" }),
		Entry("mode session without thread", false, "mode session requires thread: true", "", "research",
			func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Mode = sessionsv1alpha1.ModeSession }),
		Entry("a bad attachment", false, "not valid base64", "", "research",
			func(r *sessionsv1alpha1.SubagentRun) {
				r.Spec.Attachments = []sessionsv1alpha1.Attachment{{Name: "a.txt", Content: "%%%", Encoding: sessionsv1alpha1.EncodingBase64}}
			}),
		Entry("an Agent that does not exist", false, `spec.agentId: Not found: "ghost"`, "", "ghost"),
		Entry("allowAgents", true, `add "research" (or "*") to Agent main spec.subagents.allowAgents`, "agent:main:main", "research"),
		Entry("allowAgents and a model not allowed: the policy answers", true, "spec.subagents.allowAgents", "agent:main:main", "research",
			func(r *sessionsv1alpha1.SubagentRun) { r.Spec.Model = "big" }),
	)
})
