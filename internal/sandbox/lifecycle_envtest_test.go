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

package sandbox_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A session's claim against agent-sandbox's real controller (no kubelet: Pods are objects
// that never run): the claim gets a Sandbox from the Agent's template whose Pod is as hostile
// as the template says; suspending removes the Pod and keeps the Sandbox, resuming brings a
// Pod back; a second EnsureClaim finds the first; releasing deletes the claim.
func TestClaimSuspendResumeRelease(t *testing.T) {
	cfg, c := testenv.StartT(t)
	testenv.StartSandboxController(t, cfg)
	ctx := context.Background()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
	agent.Spec.Sandbox.Enabled = true
	for _, obj := range []client.Object{sandbox.Template(agent, "example/sandbox:1", ""), sandbox.WarmPool(agent)} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	session := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:coder:main", AgentID: "coder", Sandboxed: true}}
	if err := c.Create(ctx, session); err != nil {
		t.Fatal(err)
	}

	claim, err := sandbox.EnsureClaim(ctx, c, session, agent)
	if err != nil {
		t.Fatal(err)
	}
	again, err := sandbox.EnsureClaim(ctx, c, session, agent)
	if err != nil || again.UID != claim.UID {
		t.Fatalf("second EnsureClaim = %v, %v; want the first claim", again, err)
	}

	var sb *sandboxv1beta1.Sandbox
	testenv.Eventually(t, "claim bound to a Sandbox", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return false, err
		}
		sb, err = sandbox.BoundSandbox(ctx, c, claim)
		return sb != nil, err
	})
	if phase, msg := sandbox.Phase(claim, sb); phase != sessionsv1alpha1.SandboxClaimed {
		t.Errorf("phase of a sandbox whose Pod never runs = %s (%s), want Claimed", phase, msg)
	}

	pod := &corev1.Pod{}
	podKey := client.ObjectKey{Namespace: "team", Name: sb.Name}
	if name := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]; name != "" {
		podKey.Name = name
	}
	testenv.Eventually(t, "the sandbox's Pod", func() (bool, error) {
		err := c.Get(ctx, podKey, pod)
		return err == nil, err
	})
	spec := pod.Spec
	ctr := spec.Containers[0]
	switch {
	case ptr.Deref(spec.AutomountServiceAccountToken, true):
		t.Error("the Pod mounts a service account token")
	case !ptr.Deref(spec.SecurityContext.RunAsNonRoot, false) || ptr.Deref(spec.SecurityContext.RunAsUser, 0) == 0:
		t.Errorf("the Pod may run as root: %+v", spec.SecurityContext)
	case ptr.Deref(ctr.SecurityContext.AllowPrivilegeEscalation, true):
		t.Error("the container may escalate privileges")
	case len(ctr.SecurityContext.Capabilities.Drop) != 1 || ctr.SecurityContext.Capabilities.Drop[0] != "ALL":
		t.Errorf("capabilities: %+v", ctr.SecurityContext.Capabilities)
	case ctr.Image != "example/sandbox:1":
		t.Errorf("image = %q", ctr.Image)
	}

	if err := sandbox.SetMode(ctx, c, sb, sandboxv1beta1.SandboxOperatingModeSuspended); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the suspended sandbox's Pod gone", func() (bool, error) {
		err := c.Get(ctx, podKey, &corev1.Pod{})
		return apierrors.IsNotFound(err), err
	})
	testenv.Eventually(t, "Suspended condition", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sb), sb); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(sb.Status.Conditions, string(sandboxv1beta1.SandboxConditionSuspended)), nil
	})
	if phase, _ := sandbox.Phase(claim, sb); phase != sessionsv1alpha1.SandboxSuspended {
		t.Errorf("phase = %s, want Suspended", phase)
	}

	if err := sandbox.SetMode(ctx, c, sb, sandboxv1beta1.SandboxOperatingModeRunning); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the resumed sandbox's Pod", func() (bool, error) {
		err := c.Get(ctx, podKey, &corev1.Pod{})
		return err == nil, err
	})

	if err := sandbox.Release(ctx, c, session); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the claim gone", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(claim), &sandboxextv1beta1.SandboxClaim{})
		return apierrors.IsNotFound(err), err
	})
	// envtest runs no garbage collector: the Sandbox goes with its claim in a cluster because
	// the claim controls it.
	if err := c.Get(ctx, client.ObjectKeyFromObject(sb), sb); err == nil && !metav1.IsControlledBy(sb, claim) {
		t.Errorf("the Sandbox is not controlled by its claim: %+v", sb.OwnerReferences)
	}
}
