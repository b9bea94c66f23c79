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

package agentsession

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/agent"
	"github.com/agent-sessions/agent-session-operator/internal/argocdhealth"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// The Agent and AgentSession controllers with sandboxes on, beside agent-sandbox's own
// controller: the Agent gets its template and warm pool; a session's claim (as its first
// tool call makes it) shows in status.sandbox; idleSeconds after the claim's last use the
// Sandbox is suspended; archiving the session releases the claim. A RuntimeClass the Agent
// names that does not exist makes it not Ready.
func TestSessionSandboxLifecycle(t *testing.T) {
	cfg, c := testenv.StartT(t)
	testenv.StartSandboxController(t, cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	b := func() *builder.Builder { return ctrl.NewControllerManagedBy(mgr) }
	if err := (&agent.AgentReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Sandbox: &agent.SandboxOptions{Image: "example/sandbox:1", PodRecheck: time.Second}}).SetupWith(b(), nil); err != nil {
		t.Fatal(err)
	}
	store := transcripttest.NewMemoryStore()
	if err := (&AgentSessionReconciler{Client: mgr.GetClient(), Store: store,
		Recorder: mgr.GetEventRecorder("agentsession-controller"), Sandboxes: true}).SetupWith(b(), 2); err != nil {
		t.Fatal(err)
	}
	if err := (&Cleanup{Client: mgr.GetClient(), Store: store, Sandboxes: true}).SetupWithManager(mgr, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
	agent.Spec.Sandbox.Enabled = true
	agent.Spec.Sandbox.IdleSeconds = ptr.To[int32](2)
	if err := c.Create(ctx, agent); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Agent's sandbox status", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		return agent.Status.Sandbox != nil && agent.Status.Sandbox.WarmPool == "coder-sandbox", err
	})
	for _, obj := range []client.Object{&sandboxextv1beta1.SandboxTemplate{}, &sandboxextv1beta1.SandboxWarmPool{}} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "coder-sandbox"}, obj); err != nil || !metav1.IsControlledBy(obj, agent) {
			t.Fatalf("%T: %v, controlled by the Agent: %v", obj, err, err == nil && metav1.IsControlledBy(obj, agent))
		}
	}
	agentLeavesTemplateAlone(ctx, t, c, agent)

	session := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:coder:main", AgentID: "coder", Sandboxed: true}}
	if err := c.Create(ctx, session); err != nil {
		t.Fatal(err)
	}
	claim, err := sandbox.EnsureClaim(ctx, c, session, agent)
	if err != nil {
		t.Fatal(err)
	}
	// The engine stamps the last use; here it is stamped as an engine would.
	patch := client.MergeFrom(claim.DeepCopy())
	claim.Annotations = map[string]string{sandbox.LastUsedAnnotation: time.Now().UTC().Format(time.RFC3339)}
	if err := c.Patch(ctx, claim, patch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "status.sandbox with the claim and its Sandbox", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(session), session)
		st := session.Status.Sandbox
		return st != nil && st.Claim == claim.Name && st.Sandbox != "" && st.LastUsed != nil, err
	})
	pullFailsThenRuns(ctx, t, c, agent, session)
	testenv.Eventually(t, "the idle sandbox suspended", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(session), session)
		return session.Status.Sandbox != nil && session.Status.Sandbox.Phase == sessionsv1alpha1.SandboxSuspended, err
	})
	sb := &sandboxv1beta1.Sandbox{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: session.Status.Sandbox.Sandbox}, sb); err != nil || sb.Spec.OperatingMode != sandboxv1beta1.SandboxOperatingModeSuspended {
		t.Fatalf("Sandbox %v: operatingMode %q, want Suspended", err, sb.Spec.OperatingMode)
	}

	testenv.Eventually(t, "the Agent Ready again once its Pod pulled the image", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		return readyReason(agent) == "ProviderConfigured", err
	})

	patchSession := client.MergeFrom(session.DeepCopy())
	session.Status.Phase = sessionsv1alpha1.SessionArchived
	if err := c.Status().Patch(ctx, session, patchSession); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the archived session's claim released", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(claim), &sandboxextv1beta1.SandboxClaim{})
		return apierrors.IsNotFound(err), err
	})

	releasedOnDeleteAndSwept(ctx, t, c, agent, store)
	failedSessionIsStalled(ctx, t, c)

	named := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "kata", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
	named.Spec.Sandbox.Enabled = true
	named.Spec.Sandbox.RuntimeClassName = ptr.To("kata")
	if err := c.Create(ctx, named); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "RuntimeClassNotFound", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(named), named)
		for _, cond := range named.Status.Conditions {
			if cond.Type == sessionsv1alpha1.ConditionReady && cond.Reason == "RuntimeClassNotFound" {
				return true, nil
			}
		}
		return false, err
	})
}

// agentLeavesTemplateAlone: agent-sandbox labels the Agent's template with its ref hash;
// an Agent reconcile afterwards (a new generation) writes neither template nor pool. Taking
// that label away on each reconcile had the two controllers undo each other without end.
func agentLeavesTemplateAlone(ctx context.Context, t *testing.T, c client.Client, agent *sessionsv1alpha1.Agent) {
	t.Helper()
	key := client.ObjectKey{Namespace: agent.Namespace, Name: sandbox.Name(agent)}
	tpl, pool := &sandboxextv1beta1.SandboxTemplate{}, &sandboxextv1beta1.SandboxWarmPool{}
	testenv.Eventually(t, "agent-sandbox's label on the template, and the pool's status", func() (bool, error) {
		if err := c.Get(ctx, key, tpl); err != nil {
			return false, err
		}
		if err := c.Get(ctx, key, pool); err != nil {
			return false, err
		}
		return tpl.Labels[sandboxv1beta1.SandboxTemplateRefHashLabel] != "" && pool.Status.ObservedGeneration == pool.Generation, nil
	})
	before := map[string]string{"template": tpl.ResourceVersion, "pool": pool.ResourceVersion}
	patch := client.MergeFrom(agent.DeepCopy())
	agent.Spec.Description = "a new generation, nothing of its sandbox changed"
	if err := c.Patch(ctx, agent, patch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Agent's new generation reconciled", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		return agent.Status.ObservedGeneration == agent.Generation, err
	})
	if err := c.Get(ctx, key, tpl); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, pool); err != nil {
		t.Fatal(err)
	}
	after := map[string]string{"template": tpl.ResourceVersion, "pool": pool.ResourceVersion}
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("the Agent's reconcile wrote its %s (resourceVersion %s, then %s); labels %v", k, before[k], after[k], tpl.Labels)
		}
	}
}

// pullFailsThenRuns: the kubelet cannot pull the session's sandbox image, and the Agent's
// Ready says so (as the spawn guard will); then the Pod runs and is Ready, so the sandbox is
// Ready and may idle.
func pullFailsThenRuns(ctx context.Context, t *testing.T, c client.Client, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession) {
	t.Helper()
	pod := &corev1.Pod{}
	testenv.Eventually(t, "the sandbox's Pod", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: session.Status.Sandbox.Sandbox}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: sandbox.ContainerName, Image: "example/sandbox:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "example/sandbox:1"`}}}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "Ready=False SandboxImagePullFailed", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		return readyReason(agent) == sessionsv1alpha1.ReasonSandboxImagePullFailed, err
	})
	// The kubelet's part once the image came: the Pod runs and is Ready, so the sandbox
	// is Ready and may idle.
	testenv.Eventually(t, "the sandbox's Pod Ready", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		now := metav1.Now()
		pod.Status.Phase, pod.Status.PodIP, pod.Status.ContainerStatuses = corev1.PodRunning, "127.0.0.1", nil
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		err := c.Status().Update(ctx, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
}

// releasedOnDeleteAndSwept: deleting a session (by hand, or its run's cleanup: delete)
// releases its claim and archives its transcript once the object is gone (the delete's
// cleanup; the session carries no finalizer); a claim whose session is gone is swept
// (envtest has no garbage collector, so nothing else would delete either).
func releasedOnDeleteAndSwept(ctx context.Context, t *testing.T, c client.Client, agent *sessionsv1alpha1.Agent, store transcript.Store) {
	t.Helper()
	s2 := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s2", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:coder:second", AgentID: "coder", Sandboxed: true}}
	if err := c.Create(ctx, s2); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "s2's transcript", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(s2), s2)
		return s2.Status.SessionID != "", err
	})
	if len(s2.Finalizers) != 0 {
		t.Errorf("s2's finalizers %v, want none", s2.Finalizers)
	}
	claim2, err := sandbox.EnsureClaim(ctx, c, s2, agent)
	if err != nil {
		t.Fatal(err)
	}
	ghost := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: "team", UID: "0000-gone"}}
	orphan := sandbox.Claim(ghost, agent)
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, s2); err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*sandboxextv1beta1.SandboxClaim{claim2, orphan} {
		testenv.Eventually(t, "claim "+cl.Name+" released", func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(cl), &sandboxextv1beta1.SandboxClaim{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	testenv.Eventually(t, "s2's transcript archived", func() (bool, error) {
		_, err := store.Stats(ctx, "team", s2.Status.SessionID)
		return errors.Is(err, transcript.ErrNotFound), nil
	})
}

// failedSessionIsStalled: a claim on a warm pool that does not exist cannot start; the
// session says so in its status.sandbox, and its Ready=False/Stalled read as Failed by
// kstatus and Degraded by the Argo CD health script.
func failedSessionIsStalled(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	s3 := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:nopool:main", AgentID: "nopool", Sandboxed: true}}
	if err := c.Create(ctx, s3); err != nil {
		t.Fatal(err)
	}
	nopool := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "nopool", Namespace: "team"}}
	if _, err := sandbox.EnsureClaim(ctx, c, s3, nopool); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the session's sandbox Failed and the session Stalled", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(s3), s3)
		return s3.Status.Sandbox != nil && s3.Status.Sandbox.Phase == sessionsv1alpha1.SandboxFailed &&
			meta.IsStatusConditionTrue(s3.Status.Conditions, sessionsv1alpha1.ConditionStalled), err
	})
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s3)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := kstatus.Compute(&unstructured.Unstructured{Object: obj}); err != nil || res.Status != kstatus.FailedStatus {
		t.Errorf("kstatus of a session whose sandbox cannot start = %+v, %v; want Failed", res, err)
	}
	script, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	obj["kind"] = "AgentSession"
	if h, err := argocdhealth.Evaluate(string(script), obj); err != nil || h.Status != "Degraded" || !strings.Contains(h.Message, "SandboxFailed") {
		t.Errorf("Argo CD health of a session whose sandbox cannot start = %+v, %v; want Degraded, SandboxFailed", h, err)
	}

}

// readyReason is the reason of an Agent's Ready condition, "" without one.
func readyReason(a *sessionsv1alpha1.Agent) string {
	if cond := meta.FindStatusCondition(a.Status.Conditions, sessionsv1alpha1.ConditionReady); cond != nil {
		return cond.Reason
	}
	return ""
}
