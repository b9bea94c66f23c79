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
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The controllers measure deadlines from creationTimestamps (wall time) on the fake clock:
// every spec starts with the clock at wall time again, whatever the last one stepped.
var _ = BeforeEach(func() { fakeClock.SetTime(time.Now()) })

func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrl-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// rule is a scripted provider rule: a reply to inputs matching an RE2 expression.
func rule(match, reply string) sessionsv1alpha1.ScriptRule {
	return sessionsv1alpha1.ScriptRule{Match: match, Reply: reply}
}

func createAgent(ns, name string, rules ...sessionsv1alpha1.ScriptRule) *sessionsv1alpha1.Agent {
	a := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules}},
	}
	Expect(k8s.Create(ctx, a)).To(Succeed())
	return a
}

// createSession creates a session named as the operator names them and waits for its
// transcript.
func createSession(ns, key, agentID string, mut ...func(*sessionsv1alpha1.AgentSession)) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agentID},
	}
	for _, m := range mut {
		m(s)
	}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.SessionID).NotTo(BeEmpty())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

func createPolicy(ns string, spec sessionsv1alpha1.SessionPolicySpec) {
	p := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}, Spec: spec}
	Expect(k8s.Create(ctx, p)).To(Succeed())
}

func createSend(ns, target, message string, timeout int32, from string) *sessionsv1alpha1.SessionSend {
	s := &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns},
		Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: target, Message: message, TimeoutSeconds: ptr.To(timeout), FromSessionKey: from},
	}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	return s
}

// waitSend waits until cond holds for the send and returns its latest state.
func waitSend(s *sessionsv1alpha1.SessionSend, cond func(g Gomega, s *sessionsv1alpha1.SessionSend)) *sessionsv1alpha1.SessionSend {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		cond(g, s)
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

// eventsOf returns "<reportingController> <type>/<reason>" of the events.k8s.io Events about o.
func eventsOf(g Gomega, o client.Object) []string {
	var list eventsv1.EventList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(o.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.UID == o.GetUID() {
			out = append(out, e.ReportingController+" "+e.Type+"/"+e.Reason)
		}
	}
	return out
}

func completed(g Gomega, s *sessionsv1alpha1.SessionSend) {
	g.Expect(sessionsv1alpha1.Finished(s.Status.Conditions)).To(BeTrue())
}

// messages reads a session's transcript, tool results included, without the turns' system
// contexts.
func messages(ns string, s *sessionsv1alpha1.AgentSession) []transcript.Record {
	var out []transcript.Record
	for _, r := range allRecords(ns, s) {
		if r.Message.Role != transcript.RoleSystem {
			out = append(out, r)
		}
	}
	return out
}

// allRecords is the whole transcript, the turns' system contexts (protocol_test.go checks
// them) included.
func allRecords(ns string, s *sessionsv1alpha1.AgentSession) []transcript.Record {
	page, err := store.Read(ctx, ns, s.Status.SessionID, transcript.ReadOptions{Limit: transcript.MaxLimit, IncludeTools: true})
	Expect(err).NotTo(HaveOccurred())
	return page.Messages
}

// texts is each record as "role: text".
func texts(recs []transcript.Record) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		var t string
		for _, b := range r.Message.Content {
			t += b.Text
		}
		out = append(out, r.Message.Role+": "+t)
	}
	return out
}

// expectNoDuplicates checks every idempotency key of a transcript appears once.
func expectNoDuplicates(recs []transcript.Record) {
	seen := map[string]bool{}
	for _, r := range recs {
		Expect(seen[r.IdempotencyKey]).To(BeFalse(), "duplicate record %s", r.IdempotencyKey)
		seen[r.IdempotencyKey] = true
	}
}

// touch makes the controllers reconcile an object now (after the fake clock moved). An
// object already gone needs no wake: the clock's step alone may have let its controller
// delete it (a retention pass) before the touch.
func touch(o client.Object) {
	Eventually(func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return client.IgnoreNotFound(err)
		}
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["test/touched"] = fakeClock.Now().String()
		o.SetAnnotations(a)
		return k8s.Update(ctx, o)
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

// keyOf is the object key of the session with a session key, as the operator names it.
func keyOf(ns, key string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: sessionkey.ObjectName(key)}
}
