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
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/argocdhealth"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// healthRow is one kind in one phase, as the API server returned it, and what Flux
// (kstatus) and Argo CD (config/argocd/health.lua) make of it.
type healthRow struct {
	kind, phase string
	obj         *unstructured.Unstructured
}

// GitOps tools judge our objects by their status alone: every kind in every phase must read
// as the field expects.
var _ = Describe("GitOps health", func() {
	It("reads every kind in every phase as kstatus and the Argo CD health script should", func() {
		ns, other := newNamespace(), newNamespace()
		var rows []healthRow
		var working []client.Object // cancelled at the end: their turns hold executor slots
		DeferCleanup(func() {
			for _, o := range working {
				cancel(o)
			}
		})
		add := func(kind, phase string, obj client.Object) {
			rows = append(rows, healthRow{kind, phase, asStored(obj)})
			if strings.HasPrefix(phase, "running") || strings.HasPrefix(phase, "timed out (") || phase == "reply-back" {
				working = append(working, obj)
			}
		}
		slow := func(match string) sessionsv1alpha1.ScriptRule {
			return sessionsv1alpha1.ScriptRule{Match: match, Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}}
		}

		By("Agents and SessionPolicies: pending, ready, not ready")
		pendingAgent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
			Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{rule("^ping", "pong"), rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip)}}}}
		rows = append(rows, healthRow{"Agent", "pending", createStored(pendingAgent)})
		keyless := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "keyless", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
			Provider: sessionsv1alpha1.ProviderOpenAI, Name: "gpt", APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "apiKey"}}}}
		Expect(k8s.Create(ctx, keyless)).To(Succeed())
		createAgent(ns, "req", slow("^pong"))
		for _, a := range []string{"slow1", "slow2", "slow3", "slow4", "slow5"} {
			createAgent(ns, a, slow("^slow"))
		}
		policy := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Visibility: sessionsv1alpha1.VisibilityAll, AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}}}}
		rows = append(rows, healthRow{"SessionPolicy", "pending", createStored(policy)})
		unusable := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: other}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Delivery: []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: "https://sink.example/announce",
				SecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "token"}}}}}
		Expect(k8s.Create(ctx, unusable)).To(Succeed())
		add("Agent", "ready", waitCondition(pendingAgent, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("Agent", "not ready", waitCondition(keyless, sessionsv1alpha1.ConditionReady, metav1.ConditionFalse))
		add("SessionPolicy", "ready", waitCondition(policy, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("SessionPolicy", "not ready", waitCondition(unusable, sessionsv1alpha1.ConditionReady, metav1.ConditionFalse))

		By("AgentSessions: pending, active, archived, invalid key")
		mainSession := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName("agent:main:main"), Namespace: ns},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", AgentID: "main"}}
		rows = append(rows, healthRow{"AgentSession", "pending", createStored(mainSession)})
		for _, k := range []string{"agent:req:main", "agent:slow1:main", "agent:slow2:main", "agent:slow3:main"} {
			createSession(ns, k, sessionkey.AgentOf(k))
		}
		old := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: ns,
			Annotations: map[string]string{sessionsv1alpha1.ArchiveAtAnnotation: fakeClock.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: "cron:old", AgentID: "main"}}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		// The webhook refuses such a key; the controller still says what is wrong with one.
		bad := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent::", AgentID: "main"}}
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		add("AgentSession", "active", waitCondition(mainSession, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("AgentSession", "archived", waitCondition(old, sessionsv1alpha1.ConditionArchived, metav1.ConditionTrue))
		add("AgentSession", "invalid key", waitCondition(bad, sessionsv1alpha1.ConditionReady, metav1.ConditionFalse))

		By("SessionSends: pending, running, timed out, reply-back, completed, failed, cancelled")
		ping := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "ping", Namespace: ns},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:main:main", Message: "ping"}}
		rows = append(rows, healthRow{"SessionSend", "pending", createStored(ping)})
		running := waitSend(createSend(ns, "agent:slow1:main", "slow one", 0, ""), func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
		})
		add("SessionSend", "running (accepted)", running)
		timedOut := createSend(ns, "agent:slow2:main", "slow two", 5, "")
		Eventually(func() bool { started, _ := calls.state("slow two"); return started }, testenv.Timeout, testenv.Interval).Should(BeTrue())
		fakeClock.Step(time.Minute)
		touch(timedOut)
		add("SessionSend", "timed out (run goes on)", waitSend(timedOut, func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Status).To(Equal(sessionsv1alpha1.SendTimeout))
		}))
		add("SessionSend", "reply-back", waitSend(createSend(ns, "agent:main:main", "ping back", 30, "agent:req:main"), func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendReplyBack))
		}))
		add("SessionSend", "completed", waitSend(ping, completed))
		add("SessionSend", "failed", waitSend(createSend(ns, "agent:main:discord:group:nowhere", "hello", 30, ""), completed))
		cancelled := waitSend(createSend(ns, "agent:slow3:main", "slow three", 0, ""), func(g Gomega, s *sessionsv1alpha1.SessionSend) {
			g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
		})
		cancel(cancelled)
		add("SessionSend", "cancelled", waitSend(cancelled, completed))

		By("SubagentRuns: pending, running, succeeded, failed, timed out, cancelled")
		pendingRun := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "succeeds", Namespace: ns}, Spec: sessionsv1alpha1.SubagentRunSpec{Task: "ping", AgentID: "main"}}
		rows = append(rows, healthRow{"SubagentRun", "pending", createStored(pendingRun)})
		isRunning := func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
			g.Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunRunning))
		}
		add("SubagentRun", "running", waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "slow four", AgentID: "slow4"}), isRunning))
		add("SubagentRun", "succeeded", waitRun(pendingRun, runCompleted))
		add("SubagentRun", "failed", waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "ghost"}), runCompleted))
		late := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "slow five", AgentID: "slow5", RunTimeoutSeconds: ptr.To[int32](2)}), isRunning)
		Eventually(func() bool { started, _ := calls.state("slow five"); return started }, testenv.Timeout, testenv.Interval).Should(BeTrue())
		fakeClock.Step(time.Minute)
		add("SubagentRun", "timed out", waitRun(late, runCompleted))
		stopped := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "slow six", AgentID: "slow1"}), isRunning)
		cancel(stopped)
		add("SubagentRun", "cancelled", waitRun(stopped, runCompleted))

		By("SessionSchedules: pending, ticking, suspended; SessionHooks: pending, ready, not ready")
		ticking := &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: "ticking", Namespace: ns},
			Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "@yearly", AgentID: "main", Message: "ping"}}
		rows = append(rows, healthRow{"SessionSchedule", "pending", createStored(ticking)})
		suspended := &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: "suspended", Namespace: ns},
			Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "@yearly", AgentID: "main", Message: "ping", Suspend: ptr.To(true)}}
		Expect(k8s.Create(ctx, suspended)).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hook-secret", Namespace: ns,
			Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}}, StringData: map[string]string{"secret": "whsec_c2VjcmV0"}})).To(Succeed())
		hookOf := func(name, secret string) *sessionsv1alpha1.SessionHook {
			return &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "main",
				SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "secret"}}}
		}
		readyHook, unsigned := hookOf("signed", "hook-secret"), hookOf("unsigned", "absent")
		rows = append(rows, healthRow{"SessionHook", "pending", createStored(readyHook)})
		Expect(k8s.Create(ctx, unsigned)).To(Succeed())
		add("SessionSchedule", "ticking", waitCondition(ticking, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("SessionSchedule", "suspended", waitCondition(suspended, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("SessionHook", "ready", waitCondition(readyHook, sessionsv1alpha1.ConditionReady, metav1.ConditionTrue))
		add("SessionHook", "not ready", waitCondition(unsigned, sessionsv1alpha1.ConditionReady, metav1.ConditionFalse))

		script, err := argocdhealth.Script(filepath.Join(testenv.RepoRoot(), "config", "argocd"))
		Expect(err).NotTo(HaveOccurred())
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tPHASE\tKSTATUS\tARGO CD\tARGO CD MESSAGE")
		got := map[string]string{}
		for _, r := range rows {
			ks, err := status.Compute(r.obj)
			Expect(err).NotTo(HaveOccurred())
			h, err := argocdhealth.Evaluate(script, r.obj.Object)
			Expect(err).NotTo(HaveOccurred(), "%s %s", r.kind, r.phase)
			got[r.kind+" "+r.phase] = ks.Status.String() + " " + h.Status
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.kind, r.phase, ks.Status, h.Status, truncateLine(h.Message, 70))
		}
		Expect(tw.Flush()).To(Succeed())
		GinkgoWriter.Print(table.String())
		Expect(got).To(Equal(map[string]string{
			"Agent pending":                       "InProgress Progressing",
			"Agent ready":                         "Current Healthy",
			"Agent not ready":                     "Failed Degraded",
			"SessionPolicy pending":               "InProgress Progressing",
			"SessionPolicy ready":                 "Current Healthy",
			"SessionPolicy not ready":             "Failed Degraded",
			"AgentSession pending":                "InProgress Progressing",
			"AgentSession active":                 "Current Healthy",
			"AgentSession archived":               "Current Healthy",
			"AgentSession invalid key":            "Failed Degraded",
			"SessionSend pending":                 "InProgress Progressing",
			"SessionSend running (accepted)":      "InProgress Progressing",
			"SessionSend timed out (run goes on)": "InProgress Progressing",
			"SessionSend reply-back":              "InProgress Progressing",
			"SessionSend completed":               "Current Healthy",
			"SessionSend failed":                  "Failed Degraded",
			"SessionSend cancelled":               "Current Healthy",
			"SubagentRun pending":                 "InProgress Progressing",
			"SubagentRun running":                 "InProgress Progressing",
			"SubagentRun succeeded":               "Current Healthy",
			"SubagentRun failed":                  "Failed Degraded",
			"SubagentRun timed out":               "Failed Degraded",
			"SubagentRun cancelled":               "Current Healthy",
			"SessionSchedule pending":             "InProgress Progressing",
			"SessionSchedule ticking":             "Current Healthy",
			"SessionSchedule suspended":           "Current Suspended",
			"SessionHook pending":                 "InProgress Progressing",
			"SessionHook ready":                   "Current Healthy",
			"SessionHook not ready":               "Failed Degraded",
		}), table.String())
	})
})

// createStored creates obj and returns the object as the API server stored it (what a GitOps
// tool that reads it before the operator does sees).
func createStored(obj client.Object) *unstructured.Unstructured {
	u := toUnstructured(obj)
	Expect(k8s.Create(ctx, u)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(u), obj)).To(Succeed())
	return u
}

// asStored reads obj as unstructured, as kstatus and Argo CD get it.
func asStored(obj client.Object) *unstructured.Unstructured {
	u := toUnstructured(obj)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
	return u
}

func toUnstructured(obj client.Object) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	gvks, _, err := testenv.Scheme().ObjectKinds(obj)
	Expect(err).NotTo(HaveOccurred())
	u.SetGroupVersionKind(gvks[0])
	return u
}

// waitCondition waits until obj has the condition with the status.
func waitCondition(obj client.Object, typ string, want metav1.ConditionStatus) client.Object {
	Eventually(func(g Gomega) {
		u := asStored(obj)
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		found := false
		for _, c := range conds {
			m := c.(map[string]any)
			found = found || (m["type"] == typ && m["status"] == string(want))
		}
		g.Expect(found).To(BeTrue(), "%s has no %s=%s: %v", obj.GetName(), typ, want, conds)
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return obj
}

func cancel(obj client.Object) {
	Expect(k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`)))).To(Succeed())
}

func truncateLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
