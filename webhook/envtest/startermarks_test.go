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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The labels naming a send's SessionSchedule or SessionHook are the operator's: "carol" may
// create, update and patch sends in the namespace; "deliverer" stands for the
// transcript-store's ServiceAccount (hook_deliveries_role.yaml: the verb deliver on
// sessionhooks).
var _ = Describe("schedule and hook labels on sends", Ordered, func() {
	var ns string
	var carol, deliverer client.Client
	group := []string{sessionsv1alpha1.GroupVersion.Group}
	writeSends := rbacv1.PolicyRule{APIGroups: group, Resources: []string{"sessionsends"}, Verbs: []string{"create", "get", "update", "patch"}}
	BeforeAll(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "marks-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns = n.Name
		grant(ns, "carol", writeSends)
		grant(ns, "deliverer", writeSends, rbacv1.PolicyRule{APIGroups: group, Resources: []string{"sessionhooks"}, Verbs: []string{sessionsv1alpha1.VerbDeliver}})
		carol, deliverer = userClient("carol"), userClient("deliverer")
		Expect(k8s.Create(ctx, agentObj(ns, "bot"))).To(Succeed())
		Expect(k8s.Create(ctx, sessionObj(ns, "cron:nightly", "bot"))).To(Succeed())
		Eventually(func() error {
			return cached.Get(ctx, client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName("cron:nightly")}, &sessionsv1alpha1.AgentSession{})
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
	labelled := func(labels map[string]string) *sessionsv1alpha1.SessionSend {
		s := sendObj(ns, "cron:nightly", "")
		s.Labels = labels
		return s
	}
	schedule := map[string]string{sessionsv1alpha1.ScheduleLabel: "nightly"}
	hook := map[string]string{sessionsv1alpha1.HookLabel: "ci"}
	const (
		scheduleDenied = "metadata.labels[sessions.agents.dev/schedule]: Forbidden: only the operator's schedule controller sets it"
		hookDenied     = "metadata.labels[sessions.agents.dev/hook]: Forbidden: only the operator's hook door sets it"
	)
	// labelPatch merge-patches, as c, a send labelled labels that creator created.
	labelPatch := func(c, creator client.Client, labels map[string]string, body string) func() error {
		return func() error {
			s := labelled(labels)
			if err := creator.Create(ctx, s); err != nil {
				return err
			}
			return c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(body)))
		}
	}

	DescribeTable("admission",
		judge,
		Entry("a user's send labelled as a schedule's tick", func() verdict {
			return denied(scheduleDenied, by(carol, labelled(schedule)))
		}),
		Entry("a user's send labelled as a hook's delivery", func() verdict {
			return denied(hookDenied, by(carol, labelled(hook)))
		}),
		Entry("the manager's tick", func() verdict { return allowed(by(manager, labelled(schedule))) }),
		Entry("the manager's delivery", func() verdict { return allowed(by(manager, labelled(hook))) }),
		Entry("the transcript-store's delivery", func() verdict { return allowed(by(deliverer, labelled(hook))) }),
		Entry("the transcript-store's send labelled as a tick", func() verdict {
			return denied(scheduleDenied, by(deliverer, labelled(schedule)))
		}),
		Entry("a user's label added to her own send", func() verdict {
			return denied(scheduleDenied, labelPatch(carol, carol, nil, `{"metadata":{"labels":{"sessions.agents.dev/schedule":"nightly"}}}`))
		}),
		Entry("a user's change of a tick's label", func() verdict {
			return denied(scheduleDenied, labelPatch(carol, manager, schedule, `{"metadata":{"labels":{"sessions.agents.dev/schedule":"other"}}}`))
		}),
		Entry("a user's removal of a delivery's label", func() verdict {
			return denied(hookDenied, labelPatch(carol, deliverer, hook, `{"metadata":{"labels":{"sessions.agents.dev/hook":null}}}`))
		}),
		Entry("a user's other label on a tick", func() verdict {
			return allowed(labelPatch(carol, manager, schedule, `{"metadata":{"labels":{"team":"a"}}}`))
		}),
	)

	It("lets a user cancel a tick's send", func() {
		s := labelled(schedule)
		Expect(manager.Create(ctx, s)).To(Succeed())
		Expect(sessiontools.Cancel(ctx, carol, s)).To(Succeed())
	})
})
