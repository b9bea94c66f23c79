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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// SessionSchedules and SessionHooks start sends on their writer's word. "scheduler" may write
// them and create sends and sessions; "lister" may write them but create no sends; "sender"
// may create sends but no sessions. None may get Secrets.
var _ = Describe("schedules and hooks at admission", Ordered, func() {
	var ns string
	var scheduler, lister, sender client.Client
	group := []string{sessionsv1alpha1.GroupVersion.Group}
	writeStarters := rbacv1.PolicyRule{APIGroups: group, Resources: []string{"sessionschedules", "sessionhooks"}, Verbs: []string{"create", "update", "patch", "get"}}
	BeforeAll(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "starters-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		grant(ns, "scheduler", writeStarters, rbacv1.PolicyRule{APIGroups: group, Resources: []string{"sessionsends", "agentsessions"}, Verbs: []string{"create"}})
		grant(ns, "lister", writeStarters)
		grant(ns, "sender", writeStarters, rbacv1.PolicyRule{APIGroups: group, Resources: []string{"sessionsends"}, Verbs: []string{"create"}})
		scheduler, lister, sender = userClient("scheduler"), userClient("lister"), userClient("sender")
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bot", Namespace: ns},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}})).To(Succeed())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName("cron:existing"), Namespace: ns},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: "cron:existing", AgentID: "bot"}})).To(Succeed())
		for name, labels := range map[string]map[string]string{"private": nil, "shared": {sessionsv1alpha1.AgentUsableLabel: "true"}} {
			Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
				StringData: map[string]string{"secret": "whsec_c2VjcmV0"}})).To(Succeed())
		}
	})
	schedule := func(name string, mut ...func(*sessionsv1alpha1.SessionScheduleSpec)) *sessionsv1alpha1.SessionSchedule {
		s := &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "*/5 * * * *", AgentID: "bot", Message: "tick"}}
		for _, m := range mut {
			m(&s.Spec)
		}
		return s
	}
	hook := func(name, secret string, mut ...func(*sessionsv1alpha1.SessionHookSpec)) *sessionsv1alpha1.SessionHook {
		h := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "bot",
			SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "secret"}}}
		for _, m := range mut {
			m(&h.Spec)
		}
		return h
	}
	as := func(c *client.Client, o client.Object) func() error {
		return func() error { return (*c).Create(ctx, o) }
	}

	DescribeTable("judges the writer and the schedule",
		judge,
		Entry("a schedule its writer may send for", func() verdict { return allowed(as(&scheduler, schedule("ok"))) }),
		Entry("a macro in a time zone", func() verdict {
			return allowed(as(&scheduler, schedule("daily", func(s *sessionsv1alpha1.SessionScheduleSpec) {
				s.Schedule, s.TimeZone = "@daily", ptr.To("Europe/Berlin")
			})))
		}),
		Entry("six fields: the parser's message, on spec.schedule", func() verdict {
			return denied(`spec.schedule: Invalid value: "0 */5 * * * *": expected exactly 5 fields, found 6`,
				as(&scheduler, schedule("six", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.Schedule = "0 */5 * * * *" })))
		}),
		Entry("an unknown time zone, on spec.timeZone", func() verdict {
			return denied(`spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone "Mars/Olympus"`,
				as(&scheduler, schedule("mars", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.TimeZone = ptr.To("Mars/Olympus") })))
		}),
		Entry("a zone inside the schedule", func() verdict {
			return denied("use the timeZone field", as(&scheduler, schedule("tz", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.Schedule = "CRON_TZ=UTC * * * * *" })))
		}),
		Entry("another agent's session key", func() verdict {
			return denied("spec.sessionKey", as(&scheduler, schedule("other", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.SessionKey = "agent:ops:main" })))
		}),
		Entry("a writer who may not create sends", func() verdict {
			return denied(`user "lister" may not create sessionsends`, as(&lister, schedule("nosends")))
		}),
		Entry("a writer who may not create the new session", func() verdict {
			return denied(`user "sender" may not create agentsessions`, as(&sender, schedule("nosession")))
		}),
		Entry("the same writer into a session that exists", func() verdict {
			return allowed(as(&sender, schedule("existing", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.SessionKey = "cron:existing" })))
		}),
		Entry("a hook its writer may send for, with an opted-in Secret", func() verdict { return allowed(as(&scheduler, hook("ok", "shared"))) }),
		Entry("a hook whose Secret its writer may not get", func() verdict {
			return denied("spec.signingSecretRef", as(&scheduler, hook("private", "private")))
		}),
		Entry("a hook whose writer may not create sends", func() verdict {
			return denied(`user "lister" may not create sessionsends`, as(&lister, hook("nosends", "shared")))
		}),
	)

	It("judges a spec change by its own writer", func() {
		s := schedule("changed", func(s *sessionsv1alpha1.SessionScheduleSpec) { s.SessionKey = "cron:existing" })
		Expect(sender.Create(ctx, s)).To(Succeed())
		s.Spec.SessionKey = "cron:elsewhere"
		err := sender.Update(ctx, s)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`user "sender" may not create agentsessions`))
	})
})

// grant gives user the rules in ns: a Role of the user's name and its RoleBinding.
func grant(ns, user string, rules ...rbacv1.PolicyRule) {
	Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns}, Rules: rules})).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})).To(Succeed())
}
