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
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The SessionHook controller hands the store each Ready hook and its secret, and drops the
// key of a hook that is not Ready or gone: the store reads no Secrets.
var _ = Describe("SessionHook keys", func() {
	It("hands the store a Ready hook's secret, and drops it when the Secret goes and when the hook does", func() {
		ns := newNamespace()
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "signing", Namespace: ns, Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			StringData: map[string]string{"secret": "whsec_c2VjcmV0"}}
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		h := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: ns}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "bot",
			SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "signing"}, Key: "secret"}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func(g Gomega) {
			k, ok := hookKeys.last(ns, "ci")
			g.Expect(ok).To(BeTrue())
			g.Expect(k.Delete).To(BeFalse())
			g.Expect(string(k.Secret)).To(Equal("whsec_c2VjcmV0"))
			g.Expect(string(k.Hook)).To(ContainSubstring(string(h.UID)))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), h)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(h.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(h.Status.URL).To(Equal("/hooks/" + ns + "/ci"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		Expect(k8s.Delete(ctx, secret)).To(Succeed())
		touch(h)
		Eventually(func() string { return hookKeys.lastOf(ns, "ci") }, testenv.Timeout, testenv.Interval).Should(Equal("delete"))
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "signing", Namespace: ns, Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			StringData: map[string]string{"secret": "whsec_c2VjcmV0"}})).To(Succeed())
		fakeClock.Step(time.Second) // touch writes the clock's time: another one, so a change
		touch(h)
		Eventually(func(g Gomega) {
			got := &sessionsv1alpha1.SessionHook{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), got)).To(Succeed())
			g.Expect(hookKeys.lastOf(ns, "ci")).To(Equal("set"), "%+v", meta.FindStatusCondition(got.Status.Conditions, sessionsv1alpha1.ConditionReady))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(k8s.Delete(ctx, h)).To(Succeed())
		Eventually(func() string { return hookKeys.lastOf(ns, "ci") }, testenv.Timeout, testenv.Interval).Should(Equal("delete"))
	})
})

// keyRecorder records the hook keys the manager hands the store.
type keyRecorder struct {
	mu  sync.Mutex
	got []transcript.HookKey
}

func (r *keyRecorder) PutHookKeys(_ context.Context, keys transcript.HookKeys) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, keys.Keys...)
	return nil
}

// lastOf is "set" or "delete", what the last key handed for ns/name did, or "none".
func (r *keyRecorder) lastOf(ns, name string) string {
	k, ok := r.last(ns, name)
	switch {
	case !ok:
		return "none"
	case k.Delete:
		return "delete"
	}
	return "set"
}

// last is the last key handed for ns/name.
func (r *keyRecorder) last(ns, name string) (transcript.HookKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.got) - 1; i >= 0; i-- {
		if k := r.got[i]; k.Namespace == ns && k.Name == name {
			return k, true
		}
	}
	return transcript.HookKey{}, false
}
