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

package approval

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/argocdhealth"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The ToolApproval kind in the GitOps tools' eyes, as controllers/envtest's GitOps health
// spec reads the other kinds: a call that waits for a person is Suspended for Argo CD
// (and Current for kstatus: the operator has done its part), a decided one Healthy.
var _ = Describe("GitOps health of ToolApprovals", func() {
	It("reads pending, approved and expired as kstatus and the Argo CD health script should", func() {
		script, err := argocdhealth.Script(filepath.Join(testenv.RepoRoot(), "config", "argocd"))
		Expect(err).NotTo(HaveOccurred())
		health := func(ta *sessionsv1alpha1.ToolApproval) string {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(sessionsv1alpha1.GroupVersion.WithKind("ToolApproval"))
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ta), u)).To(Succeed())
			ks, err := status.Compute(u)
			Expect(err).NotTo(HaveOccurred())
			h, err := argocdhealth.Evaluate(script, u.Object)
			Expect(err).NotTo(HaveOccurred())
			return ks.Status.String() + " " + h.Status
		}

		f := newFixture(600)
		approved := f.waiting(f.send("drop it"))
		Expect(health(approved)).To(Equal("Current Suspended"), "pending")
		Expect(decide(f.carol, approved, sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		Eventually(func() sessionsv1alpha1.ApprovalPhase { return approvalNow(approved).Status.Phase }, testenv.Timeout, testenv.Interval).Should(Equal(sessionsv1alpha1.ApprovalApproved))
		Expect(health(approved)).To(Equal("Current Healthy"), "approved")

		short := newFixture(1)
		expired := short.waiting(short.send("drop it"))
		fakeClock.Step(2 * time.Second)
		Eventually(func() sessionsv1alpha1.ApprovalPhase { return approvalNow(expired).Status.Phase }, testenv.Timeout, testenv.Interval).Should(Equal(sessionsv1alpha1.ApprovalExpired))
		Expect(health(expired)).To(Equal("Current Healthy"), "expired")
	})
})
