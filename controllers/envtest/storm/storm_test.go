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

package storm

import (
	"encoding/json"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// sendsOnAnyInput is a scripted agent that answers every input, reply-back and announce
// steps included, by sending it on to target without waiting: the hostile storm of issue 34.
func sendsOnAnyInput(ns, name, target string) *sessionsv1alpha1.Agent {
	args, err := json.Marshal(map[string]any{"sessionKey": target, "message": "{{input}}", "timeoutSeconds": 0})
	Expect(err).NotTo(HaveOccurred())
	return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: "^",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "sessions_send", Arguments: &runtime.RawExtension{Raw: args}}},
			Reply:     "{{toolResults}}"}}}}}
}

// storm makes a namespace whose agents send on around the ring (a→b→a, or a→b→c→a), seeds it
// with one person's send to a, waits until the count of SessionSends stops growing and
// returns the seed and every send.
func storm(limits *sessionsv1alpha1.ChainLimits, ring ...string) (*sessionsv1alpha1.SessionSend, []sessionsv1alpha1.SessionSend) {
	return storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{Limits: limits}, nil, func(ns, _, next string) *sessionsv1alpha1.Agent {
		return sendsOnAnyInput(ns, "", sessionkey.MainKey(next))
	}, ring...)
}

// expectStopped checks a finished storm: every send but the seed is in the seed's chain,
// the count is within the limit, the model was told why, and the seed got one Event naming
// the limit.
func expectStopped(name string, seed *sessionsv1alpha1.SessionSend, sends []sessionsv1alpha1.SessionSend, bound int, limit string) {
	GinkgoWriter.Printf("%s: %d SessionSends when it stopped (limit %d)\n", name, len(sends), bound)
	AddReportEntry(name, fmt.Sprintf("%d SessionSends", len(sends)))
	Expect(len(sends)).To(BeNumerically("<=", bound))
	for _, s := range sends {
		if s.Name != seed.Name {
			Expect(s.Labels).To(HaveKeyWithValue(sessionsv1alpha1.ChainLabel, string(seed.UID)), "send %s", s.Name)
		}
	}
	Expect(Replies(sends)).To(ContainSubstring("chain limit reached:"))
	Expect(Replies(sends)).To(ContainSubstring("spec.limits." + limit))
	Expect(Replies(sends)).To(ContainSubstring("stop sending"))
	Eventually(func(g Gomega) {
		g.Expect(storms.ChainEvents(g, seed)).To(ConsistOf(ContainSubstring("spec.limits." + limit)))
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

var _ = Describe("a storm of agents that send each other on any input", func() {
	It("stops a pair at its second lap with the defaults", func() {
		seed, sends := storm(nil, "a", "b")
		// The seed, then a→b and b→a twice each.
		expectStopped("pair storm, defaults", seed, sends, 5, "maxPairRepeats")
	})

	It("stops a triangle at its second lap with the defaults", func() {
		seed, sends := storm(nil, "a", "b", "c")
		// The seed, then a→b, b→c and c→a twice each.
		expectStopped("triangle storm, defaults", seed, sends, 7, "maxPairRepeats")
	})

	It("stops a pair that may loop at maxSendsPerChain, whatever its depth and fan-out", func() {
		seed, sends := storm(&sessionsv1alpha1.ChainLimits{MaxHops: ptr.To[int32](64), MaxPairRepeats: ptr.To[int32](1000)}, "a", "b")
		expectStopped("pair storm, maxPairRepeats 1000", seed, sends, 20, "maxSendsPerChain")
	})
})

var _ = Describe("the chain label", func() {
	It("is refused from anyone but the manager, on create and on update", func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-"}}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		ns := n.Name
		Expect(k8s.Create(ctx, sendsOnAnyInput(ns, "a", "agent:a:other"))).To(Succeed())
		forged := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: ns,
			Labels: map[string]string{sessionsv1alpha1.ChainLabel: "some-other-chain"}},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:a:main", Message: "go", TimeoutSeconds: ptr.To[int32](0)}}
		err := k8s.Create(ctx, forged)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("label sessions.agents.dev/chain is set only by the operator's session tools"))

		root := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "rooted", Namespace: ns,
			Annotations: map[string]string{sessionsv1alpha1.ChainRootAnnotation: "SessionSend/seed"}},
			Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "a", Task: "t"}}
		err = k8s.Create(ctx, root)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("annotation sessions.agents.dev/chain-root is set only by"))

		plain := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:a:main", Message: "go", TimeoutSeconds: ptr.To[int32](0)}}
		Expect(k8s.Create(ctx, plain)).To(Succeed())
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(plain), plain); err != nil {
				return err
			}
			plain.Labels = map[string]string{sessionsv1alpha1.ChainLabel: "joined-later"}
			return k8s.Update(ctx, plain)
		}, testenv.Timeout, testenv.Interval).Should(WithTransform(apierrors.IsForbidden, BeTrue()))
	})
})
