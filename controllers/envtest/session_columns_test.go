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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var _ = Describe("a new session's status", func() {
	It("reads 0 messages, updated at its creation, before any message", func() {
		ns := newNamespace()
		createAgent(ns, "main")
		s := createSession(ns, "cron:columns", "main")
		// The MESSAGES and UPDATED columns read these fields as stored, so 0 must be there.
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(sessionsv1alpha1.GroupVersion.WithKind("AgentSession"))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), u)).To(Succeed())
			count, found, err := unstructured.NestedInt64(u.Object, "status", "messageCount")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue(), "status.messageCount is absent")
			g.Expect(count).To(BeZero())
			updated, found, err := unstructured.NestedString(u.Object, "status", "updatedAt")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue(), "status.updatedAt is absent")
			g.Expect(updated).To(Equal(s.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
