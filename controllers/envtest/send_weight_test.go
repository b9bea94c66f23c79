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
	"encoding/json"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// What a finished send carries (issue 59's objects half as heavy), read through the real API
// server and the real kubectl: the spec is one field set in managedFields, the target key is
// not repeated when spec.sessionKey is the key, and conditions leave their generation to
// status.observedGeneration, which kubectl wait reads instead.
var _ = Describe("A send's weight", func() {
	var ns, kubeconfig string
	BeforeEach(func() {
		ns = newNamespace()
		createAgent(ns, "bob", announceSkip,
			sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}})
		kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(testenv.WriteKubeconfig(cfg, kubeconfig)).To(Succeed())
	})
	kubectl := func(args ...string) (string, error) {
		args = append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)
		out, err := exec.Command(filepath.Join(testenv.Assets(), "kubectl"), args...).CombinedOutput()
		return string(out), err
	}

	It("owns the spec whole, names the target once and keeps the generation in status", func() {
		bob := createSession(ns, "agent:bob:main", "bob")
		send := waitSend(createSend(ns, "agent:bob:main", "hello", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))

		By("the client's create owns the spec as one field set")
		Expect(specFieldSets(send)).To(ConsistOf(MatchJSON(`{}`)))

		By("the target is spec.sessionKey: not repeated in the status")
		Expect(send.Status.TargetSessionKey).To(BeEmpty())
		Expect(send.TargetKey()).To(Equal("agent:bob:main"))

		By("the conditions carry no generation of their own; the status does")
		Expect(send.Status.ObservedGeneration).To(Equal(send.Generation))
		for _, c := range send.Status.Conditions {
			Expect(c.ObservedGeneration).To(BeZero(), "condition %s", c.Type)
		}
		out, err := kubectl("wait", "--for=condition=Completed", "sessionsend/"+send.Name, "--timeout="+testenv.Timeout.String())
		Expect(err).NotTo(HaveOccurred(), out)

		By("a send by sessionId keeps the key it resolved to")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bob), bob)).To(Succeed())
			g.Expect(bob.Status.SessionID).NotTo(BeEmpty())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		byID := waitSend(createSend(ns, bob.Status.SessionID, "hello again", 30, ""), completed)
		Expect(byID.Status.Status).To(Equal(sessionsv1alpha1.SendOK))
		Expect(byID.Status.TargetSessionKey).To(Equal("agent:bob:main"))
		Expect(byID.TargetKey()).To(Equal("agent:bob:main"))
	})

	It("takes kubectl patch of spec.cancel and refuses any other spec change", func() {
		createSession(ns, "agent:bob:main", "bob")
		send := waitSend(createSend(ns, "agent:bob:main", "slow work", 0, ""), func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendAccepted))
		})

		out, err := kubectl("patch", "sessionsend", send.Name, "--type=merge", "-p", `{"spec":{"message":"changed"}}`)
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("spec is immutable but for cancel"))

		out, err = kubectl("patch", "sessionsend", send.Name, "--type=merge", "-p", `{"spec":{"cancel":true}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		waitSend(send, func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendCancelled))
		})
		Expect(send.Generation).To(BeNumerically("==", 2), "the cancel is the spec's one change")
		Expect(send.Spec.Message).To(Equal("slow work"))
		// Generation 2 with conditions that carry none: kubectl wait must read the status's.
		out, err = kubectl("wait", "--for=condition=Cancelled", "sessionsend/"+send.Name, "--timeout="+testenv.Timeout.String())
		Expect(err).NotTo(HaveOccurred(), out)
		// An atomic spec changes owner whole: the patch's manager takes it from the create's.
		Expect(specFieldSets(send)).To(ConsistOf(MatchJSON(`{}`)))
	})
})

// specFieldSets are the spec parts ("f:spec") of obj's managedFields entries: one per
// manager that owns some of the spec.
func specFieldSets(obj client.Object) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		var set map[string]json.RawMessage
		if e.FieldsV1 != nil && json.Unmarshal(e.FieldsV1.GetRawBytes(), &set) == nil && set["f:spec"] != nil {
			out = append(out, string(set["f:spec"]))
		}
	}
	return out
}
