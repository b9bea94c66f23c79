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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Who may decide a ToolApproval, through the real admission path: "carol" holds the shipped
// agent-sessions-approver role, "dan" the verb approve on one approval by name, "erin" only
// the view role; the manager creates approvals and writes their status but never decides.
var _ = Describe("tool approvals", Ordered, func() {
	var ns string
	var carol, dan, erin client.Client

	newApproval := func(name string) *sessionsv1alpha1.ToolApproval {
		ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.ToolApprovalSpec{
			SessionKey: "agent:main:main", AgentID: "main", Tool: "mcp__db__drop_table", Arguments: `{"table":"users"}`,
			Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"}, ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))}}
		Expect(manager.Create(ctx, ta)).To(Succeed())
		return ta
	}
	decide := func(c client.Client, name string, d sessionsv1alpha1.ApprovalDecision, reason string, mut ...func(*sessionsv1alpha1.ToolApproval)) error {
		ta := &sessionsv1alpha1.ToolApproval{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ta); err != nil {
			return err
		}
		ta.Spec.Decision, ta.Spec.Reason = d, reason
		for _, m := range mut {
			m(ta)
		}
		return c.Update(ctx, ta)
	}
	get := func(name string) *sessionsv1alpha1.ToolApproval {
		ta := &sessionsv1alpha1.ToolApproval{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ta)).To(Succeed())
		return ta
	}

	BeforeAll(func() {
		shippedRoles()
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "approval-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		carol, dan, erin = userClient("carol"), userClient("dan"), userClient("erin")
		bind(ns, "carol", "agent-sessions-view", "agent-sessions-approver")
		bind(ns, "erin", "agent-sessions-view", "agent-sessions-edit")
		bind(ns, "dan", "agent-sessions-view")
		Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "approve-one", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Resources: []string{"toolapprovals"},
				Verbs: []string{"update", sessionsv1alpha1.VerbApprove}, ResourceNames: []string{"tap-dan"}}}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dan-approve-one", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "approve-one"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dan"}},
		})).To(Succeed())
		// erin may update approvals but holds no approve: RBAC's update alone must not decide.
		Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "update-approvals", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Resources: []string{"toolapprovals", "toolapprovals/status"},
				Verbs: []string{"create", "update", "patch"}}}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "erin-update", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "update-approvals"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "erin"}},
		})).To(Succeed())
	})

	It("is created by the operator only", func() {
		ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-forged", Namespace: ns}, Spec: sessionsv1alpha1.ToolApprovalSpec{
			SessionKey: "agent:main:main", AgentID: "main", Tool: "x", Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"},
			ExpiresAt: metav1.Now()}}
		err := erin.Create(ctx, ta)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("created by the operator"))
	})

	It("refuses a user without the verb approve, with the grant that would allow it", func() {
		newApproval("tap-erin")
		err := decide(erin, "tap-erin", sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring(`user "erin" may not decide ToolApproval tap-erin`),
			ContainSubstring("verb approve on toolapprovals"), ContainSubstring("agent-sessions-approver")))
		Expect(get("tap-erin").Spec.Decision).To(BeEmpty())
	})

	It("lets an approver decide, and records the admission user whatever the request typed", func() {
		newApproval("tap-carol")
		Expect(decide(carol, "tap-carol", sessionsv1alpha1.DecisionDenied, "not on prod", func(ta *sessionsv1alpha1.ToolApproval) {
			ta.Annotations = map[string]string{sessionsv1alpha1.DecidedByAnnotation: "the-boss"}
		})).To(Succeed())
		ta := get("tap-carol")
		Expect(ta.Spec.Decision).To(Equal(sessionsv1alpha1.DecisionDenied))
		Expect(ta.Annotations).To(HaveKeyWithValue(sessionsv1alpha1.DecidedByAnnotation, "carol"))
	})

	It("keeps a decision and its decider once set", func() {
		err := decide(carol, "tap-carol", sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("decision is set once"))
		// A later write cannot rename the decider: the mutating webhook puts it back.
		ta := get("tap-carol")
		ta.Annotations[sessionsv1alpha1.DecidedByAnnotation] = "the-boss"
		Expect(carol.Update(ctx, ta)).To(Succeed())
		Expect(get("tap-carol").Annotations).To(HaveKeyWithValue(sessionsv1alpha1.DecidedByAnnotation, "carol"))
	})

	It("lets nobody but the operator write the status (decidedBy, phase)", func() {
		ta := get("tap-erin")
		ta.Status.Phase, ta.Status.DecidedBy = sessionsv1alpha1.ApprovalApproved, "the-boss"
		err := erin.Status().Update(ctx, ta)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("written by the operator only"))
		ta = get("tap-erin")
		ta.Status.Phase = sessionsv1alpha1.ApprovalExpired
		Expect(manager.Status().Update(ctx, ta)).To(Succeed())
	})

	It("never lets the operator decide", func() {
		newApproval("tap-mgr")
		err := decide(manager, "tap-mgr", sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("the operator may only expire"))
	})

	It("grants approve per object name", func() {
		newApproval("tap-dan")
		newApproval("tap-other")
		Expect(decide(dan, "tap-dan", sessionsv1alpha1.DecisionApproved, "")).To(Succeed())
		Expect(get("tap-dan").Annotations).To(HaveKeyWithValue(sessionsv1alpha1.DecidedByAnnotation, "dan"))
		Expect(decide(dan, "tap-other", sessionsv1alpha1.DecisionApproved, "")).NotTo(Succeed())
	})

	It("refuses a decision on an expired approval", func() {
		err := decide(carol, "tap-erin", sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("already Expired"))
	})

	It("refuses a decision after spec.expiresAt by the webhook's clock, before the controller expires it", func() {
		// Pending, expiresAt a minute behind the suite's fake clock: the controller has not
		// yet written Expired (none runs here), the clock alone says it is too late.
		expires := metav1.NewTime(clk.Now().Add(-time.Minute).Truncate(time.Second))
		ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "tap-late", Namespace: ns}, Spec: sessionsv1alpha1.ToolApprovalSpec{
			SessionKey: "agent:main:main", AgentID: "main", Tool: "mcp__db__drop_table", Arguments: `{"table":"users"}`,
			Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: "s1"}, ExpiresAt: expires}}
		Expect(manager.Create(ctx, ta)).To(Succeed())
		ta.Status.Phase = sessionsv1alpha1.ApprovalPending
		Expect(manager.Status().Update(ctx, ta)).To(Succeed())
		err := decide(carol, "tap-late", sessionsv1alpha1.DecisionApproved, "")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.decision"), ContainSubstring("expired at "+expires.UTC().Format(time.RFC3339))))
		Expect(get("tap-late").Spec.Decision).To(BeEmpty())
	})

	It("keeps the call it asks about immutable", func() {
		ta := get("tap-other")
		ta.Spec.Tool = "mcp__db__select"
		Expect(carol.Update(ctx, ta)).NotTo(Succeed())
	})
})
