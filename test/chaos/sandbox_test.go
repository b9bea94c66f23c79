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

package chaos

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sandboxCrash SIGKILLs the manager after a sandboxed session's first exec made its
// SandboxClaim and before the exec ran (the sandbox is still starting), then restarts it.
// The test stands in for the kubelet this control plane lacks: it marks the sandbox's Pod
// Ready. The send must end once with its one turn, the restarted manager must find the first
// claim (one claim, one Sandbox: nothing leaked), and deleting the session must release it.
func (e *env) sandboxCrash(t *testing.T) {
	if testenv.SandboxAssets() == "" {
		t.Skip("agent-sandbox is not built (make agent-sandbox): no controller binds claims")
	}
	ctx := context.Background()
	ns := e.namespace(t, "sandbox-crash")
	key := "agent:boxed:main"
	boxed := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "boxed"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{
			Match: "^run", Reply: "ran: {{toolResults}}",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "exec", Arguments: &runtime.RawExtension{Raw: []byte(`{"command":"hostname"}`)}}},
		}}}}}
	boxed.Spec.Sandbox.Enabled = true
	sess := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "boxed", Sandboxed: true}}
	e.mustCreate(t, boxed)
	e.createSessions(t, sess)
	e.mustCreate(t, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run"},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "run hostname", TimeoutSeconds: ptr.To[int32](0)}})

	claimKey := client.ObjectKey{Namespace: ns, Name: sandbox.ClaimName(sess)}
	claim := &sandboxextv1beta1.SandboxClaim{}
	e.poll(t, "the first exec's SandboxClaim", func() (bool, error) {
		err := e.k8s.Get(ctx, claimKey, claim)
		return err == nil, client.IgnoreNotFound(err)
	})
	e.cluster.Kill(devcluster.Manager)
	if err := e.cluster.Restart(ctx, devcluster.Manager); err != nil {
		t.Fatal(err)
	}

	// The kubelet's part: the sandbox's Pod runs and is Ready.
	pod := &corev1.Pod{}
	e.poll(t, "the sandbox's Pod", func() (bool, error) {
		if err := e.k8s.Get(ctx, claimKey, claim); err != nil {
			return false, err
		}
		name := claim.Status.SandboxStatus.Name
		if name == "" {
			return false, nil
		}
		sb := &sandboxv1beta1.Sandbox{}
		if err := e.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sb); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if p := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]; p != "" {
			name = p
		}
		err := e.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	now := metav1.Now()
	pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, "127.0.0.1"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if err := e.k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	sends, _ := e.waitTerminal(t, ns, 1, 0)
	if st := sends[0].Status; st.Phase != sessionsv1alpha1.SendCompleted || len(st.Turns) != 1 {
		t.Errorf("the send ended %s with %d turns (error %q), want Completed with 1", st.Phase, len(st.Turns), st.Error)
	}
	if err := e.k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess); err != nil {
		t.Fatal(err)
	}
	var users, execs int
	for _, r := range e.messages(t, sess) {
		switch {
		case r.Message.Role == transcript.RoleUser && text(r.Message) == "run hostname":
			users++
		case r.Message.Role == transcript.RoleToolResult:
			execs++
		}
	}
	if users != 1 || execs != 1 {
		t.Errorf("the transcript holds the message %d times and %d tool results, want each once", users, execs)
	}

	claims := &sandboxextv1beta1.SandboxClaimList{}
	sandboxes := &sandboxv1beta1.SandboxList{}
	if err := e.k8s.List(ctx, claims, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := e.k8s.List(ctx, sandboxes, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) != 1 || claims.Items[0].UID != claim.UID || !metav1.IsControlledBy(&claims.Items[0], sess) || len(sandboxes.Items) != 1 {
		t.Errorf("after the restart: %d claims (the first kept: %v), %d Sandboxes; want the first claim, controlled by the session, and one Sandbox",
			len(claims.Items), len(claims.Items) > 0 && claims.Items[0].UID == claim.UID, len(sandboxes.Items))
	}
	e.poll(t, "status.sandbox adopted the claim", func() (bool, error) {
		err := e.k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)
		return sess.Status.Sandbox != nil && sess.Status.Sandbox.Claim == claim.Name, err
	})

	if err := e.k8s.Delete(ctx, sess); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the deleted session's claim released", func() (bool, error) {
		err := e.k8s.Get(ctx, claimKey, &sandboxextv1beta1.SandboxClaim{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}
