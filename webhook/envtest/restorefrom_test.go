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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// A new session that asks to adopt a retired session's transcript (restore-from) is a
// restore: its creator needs the right the sessions tool's restore asks (patch on the
// session), not create alone.
var _ = Describe("restoring a retired session by creating it", Ordered, func() {
	var ns string
	restoring := func(key string) *sessionsv1alpha1.AgentSession {
		return sessionObj(ns, key, "main", func(s *sessionsv1alpha1.AgentSession) {
			s.Annotations = map[string]string{sessionsv1alpha1.RestoreFromAnnotation: "retired-sid"}
		})
	}

	BeforeAll(func() {
		shippedRoles()
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restore-from-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		bind(ns, "erin", "agent-sessions-edit")
		Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "create-sessions", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Resources: []string{"agentsessions"},
				Verbs: []string{"create"}}}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "frank-create-sessions", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "create-sessions"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "frank"}},
		})).To(Succeed())
		Expect(k8s.Create(ctx, agentObj(ns, "main"))).To(Succeed())
	})

	It("refuses a user who may create sessions but not patch them", func() {
		err := userClient("frank").Create(ctx, restoring("agent:main:webchat:group:r1"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("restoring a retired session needs the verb patch on agentsessions"))
	})

	It("lets a user who may patch the session ask for it", func() {
		Expect(userClient("erin").Create(ctx, restoring("agent:main:webchat:group:r2"))).To(Succeed())
	})

	It("lets create alone make a session that asks for no restore", func() {
		Expect(userClient("frank").Create(ctx, sessionObj(ns, "agent:main:webchat:group:r3", "main"))).To(Succeed())
	})
})
