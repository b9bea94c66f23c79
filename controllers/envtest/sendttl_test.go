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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var _ = Describe("A finished SessionSend", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		createAgent(ns, "bob", announceSkip, rule("^ping", "pong"))
		createSession(ns, "agent:bob:main", "bob")
	})

	gone := func(s *sessionsv1alpha1.SessionSend) func(g Gomega) {
		return func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(s), &sessionsv1alpha1.SessionSend{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "get: %v", err)
		}
	}

	It("leaves the manager's cache and is deleted at its TTL", func() {
		send := waitSend(createSend(ns, "agent:bob:main", "ping", 30, ""), completed)
		Eventually(func(g Gomega) {
			err := mgrCache.Get(ctx, client.ObjectKeyFromObject(send), &sessionsv1alpha1.SessionSend{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the cache still holds the finished send: %v", err)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		fakeClock.Step(suiteTTL - time.Minute)
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(send), &sessionsv1alpha1.SessionSend{}) },
			time.Second, testenv.Interval).Should(Succeed(), "deleted before its TTL")
		fakeClock.Step(2 * time.Minute)
		Eventually(gone(send), testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("keeps its own ttlSecondsAfterFinished, and a restarted manager still deletes it", func() {
		s := createSendWithTTL(ns, "ping", 600)
		send := waitSend(s, completed)
		stopManager()
		startManager()
		fakeClock.Step(11 * time.Minute)
		Eventually(gone(send), testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})

func createSendWithTTL(ns, message string, ttl int32) *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{}
	s.GenerateName, s.Namespace = "send-", ns
	s.Spec = sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: message, TimeoutSeconds: ptr.To[int32](30),
		TTLSecondsAfterFinished: ptr.To(ttl)}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	return s
}
