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
	"fmt"
	"github.com/agent-sessions/agent-session-operator/controllers/agentsession"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// noStatusWrites is the engine's client in this suite: every status (or other subresource)
// writer it hands out counts the call, so the suite fails if the engine writes status.
type noStatusWrites struct{ client.Client }

func (c noStatusWrites) Status() client.SubResourceWriter {
	engineStatusWrites.Add(1)
	return c.Client.Status()
}

func (c noStatusWrites) SubResource(sub string) client.SubResourceClient {
	engineStatusWrites.Add(1)
	return c.Client.SubResource(sub)
}

// flakyModel is an OpenAI-compatible server whose first answer is a 429 (retry at once), and
// whose second waits for release: a model call that is retrying while the spec looks.
type flakyModel struct {
	*httptest.Server
	calls   atomic.Int32
	release chan struct{}
}

func newFlakyModel() *flakyModel {
	m := &flakyModel{release: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
			return
		}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":"late pong"}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	return m
}

// Controllers are the only writers of status: the engine reports a turn's counters and its
// model call's retries, and the AgentSession controller writes them.
var _ = Describe("One writer of a session's status", func() {
	It("shows a retrying model call and the turn's counters, written by the controller alone", func() {
		ns := newNamespace()
		model := newFlakyModel()
		DeferCleanup(model.Close)
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "flaky", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "m", BaseURL: model.URL + "/v1"},
		}})).To(Succeed())
		s := createSession(ns, "agent:flaky:main", "flaky")
		before := engineStatusWrites.Load()
		send := createSend(ns, "agent:flaky:main", "ping", 60, "")

		Eventually(func(g Gomega) {
			c := modelRetrying(g, s)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal("RateLimited"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		close(model.release)

		waitSend(send, completed)
		Eventually(func(g Gomega) {
			c := modelRetrying(g, s)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("Recovered"))
			g.Expect(s.Status.MessageCount).To(BeEquivalentTo(2))
			g.Expect(s.Status.LastMessagePreview).To(Equal("late pong"))
			g.Expect(s.Status.ContextTokens).To(BeEquivalentTo(10))
			g.Expect(s.Status.Usage).NotTo(BeNil())
			g.Expect(s.Status.Usage.Turns).To(BeEquivalentTo(1))
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(engineStatusWrites.Load()-before).To(BeZero(), "status writes asked of the turn engine's client")
	})

	It("keeps the retry condition when the controller writes from a stale cache", func() {
		ns := newNamespace()
		createAgent(ns, "main", rule(".", "pong"))
		s := createSession(ns, "agent:main:stale", "main")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		// The cache's copy: read before ModelRetrying landed, and behind on Ready too, so
		// the controller has something to write from it.
		stale := s.DeepCopy()
		meta.RemoveStatusCondition(&stale.Status.Conditions, sessionsv1alpha1.ConditionReady)
		meta.RemoveStatusCondition(&stale.Status.Conditions, sessionsv1alpha1.ConditionStalled)

		retrying := metav1.Condition{Type: sessionsv1alpha1.ConditionModelRetrying, Status: metav1.ConditionTrue, Reason: "RateLimited",
			Message: "turn t: model call attempt 2", ObservedGeneration: s.Generation}
		key := client.ObjectKeyFromObject(s)
		r := &agentsession.AgentSessionReconciler{Client: staleReads{Client: k8s, obj: stale}, Store: store,
			Runner: &oneReport{key: key, rep: turns.SessionReport{Seq: 1, Retry: &retrying}}}
		// As the write that lands first, ModelRetrying as a newer report would have it.
		latest := s.DeepCopy()
		meta.SetStatusCondition(&latest.Status.Conditions, retrying)
		Expect(k8s.Status().Update(ctx, latest)).To(Succeed())

		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		Expect(err).To(HaveOccurred(), "a write from a stale copy must be refused")
		Expect(k8s.Get(ctx, key, s)).To(Succeed())
		Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionModelRetrying)).NotTo(BeNil(),
			"the stale write dropped ModelRetrying")
		Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
	})
})

// modelRetrying reads s and returns its ModelRetrying condition, which must be there.
func modelRetrying(g Gomega, s *sessionsv1alpha1.AgentSession) *metav1.Condition {
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
	c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionModelRetrying)
	g.Expect(c).NotTo(BeNil())
	return c
}

// staleReads reads obj, an old copy of the one object the spec reconciles, as a lagging
// informer cache would, and writes through to the API server.
type staleReads struct {
	client.Client
	obj client.Object
}

func (c staleReads) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	c.obj.(*sessionsv1alpha1.AgentSession).DeepCopyInto(out.(*sessionsv1alpha1.AgentSession))
	return nil
}

// oneReport is a Runner holding one session report.
type oneReport struct {
	turns.Runner
	key types.NamespacedName
	rep turns.SessionReport
}

func (r *oneReport) SessionReport(key types.NamespacedName) (turns.SessionReport, bool) {
	return r.rep, key == r.key
}

func (r *oneReport) ReportWritten(types.NamespacedName, uint64) {}

func (r *oneReport) Wake(string) <-chan event.GenericEvent { return nil }
