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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// reconcileSandbox keeps a session's status.sandbox as its SandboxClaim and Sandbox are,
// suspends the Sandbox idleSeconds after the claim's last use (the turn engine stamps it),
// and releases the claim of an archived session. After a restart every session is
// reconciled again, so a claim made just before a crash is adopted into the status here;
// a claim whose session is deleted goes with it (the session controls it).
func (r *AgentSessionReconciler) reconcileSandbox(ctx context.Context, s *sessionsv1alpha1.AgentSession) (ctrl.Result, error) {
	if !r.Sandboxes {
		return ctrl.Result{}, nil
	}
	var clk clock.PassiveClock = clock.RealClock{}
	if r.Clock != nil {
		clk = r.Clock
	}
	claim := &sandboxextv1beta1.SandboxClaim{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: sandbox.ClaimName(s)}, claim); err != nil {
		if client.IgnoreNotFound(err) == nil {
			s.Status.Sandbox = nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(claim, s) {
		return ctrl.Result{}, nil
	}
	if s.Status.Phase == sessionsv1alpha1.SessionArchived {
		// An archived session runs no more turns: its sandbox and workspace go.
		s.Status.Sandbox = nil
		return ctrl.Result{}, sandbox.Release(ctx, r.Client, s)
	}
	sb, err := sandbox.BoundSandbox(ctx, r.Client, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := &sessionsv1alpha1.SessionSandboxStatus{Claim: claim.Name}
	if t, err := time.Parse(time.RFC3339, claim.Annotations[sandbox.LastUsedAnnotation]); err == nil {
		st.LastUsed = &metav1.Time{Time: t}
	}
	var res ctrl.Result
	if sb != nil {
		st.Sandbox = sb.Name
		st.RuntimeClassName = ptr.Deref(sb.Spec.PodTemplate.Spec.RuntimeClassName, "")
		// Only a Ready sandbox idles: one still starting or resuming has a turn waiting on it
		// (the wait is woken by events, not by a timer that would stamp its last use).
		if phase, _ := sandbox.Phase(claim, sb); phase == sessionsv1alpha1.SandboxReady {
			if res, err = r.suspendWhenIdle(ctx, s, sb, st.LastUsed, clk); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	var msg string
	st.Phase, msg = sandbox.Phase(claim, sb)
	st.Message = textutil.Truncate(msg, ownerflow.MaxConditionMessage)
	s.Status.Sandbox = st
	return res, nil
}

// suspendWhenIdle suspends a running Sandbox whose last use is idleSeconds (its Agent's) old,
// or says when to look again.
func (r *AgentSessionReconciler) suspendWhenIdle(ctx context.Context, s *sessionsv1alpha1.AgentSession, sb *sandboxv1beta1.Sandbox, lastUsed *metav1.Time, clk clock.PassiveClock) (ctrl.Result, error) {
	if lastUsed == nil || sb.Spec.OperatingMode == sandboxv1beta1.SandboxOperatingModeSuspended {
		return ctrl.Result{}, nil
	}
	agent := &sessionsv1alpha1.Agent{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Spec.AgentID}, agent); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	} // not found: the default idle time
	idle := sandbox.IdleSeconds(agent)
	due, left := sandbox.IdleDue(lastUsed.Time, clk.Now(), idle)
	if !due {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := sandbox.SetMode(ctx, r.Client, sb, sandboxv1beta1.SandboxOperatingModeSuspended); err != nil {
		return ctrl.Result{}, fmt.Errorf("suspend the sandbox: %w", err)
	}
	return ctrl.Result{}, nil
}

// sweepSandboxClaim releases the SandboxClaim of a session that is gone (the cleanup of its
// delete, cleanup.go, releases it in the ordinary course; this catches a claim made by a
// turn racing the deletion). The claim watch maps every claim to its session, and the
// informer lists them all when the manager starts, so after a restart each claim is either
// adopted by its session's reconcile (reconcileSandbox) or released here.
func (r *AgentSessionReconciler) sweepSandboxClaim(ctx context.Context, session types.NamespacedName) error {
	if !r.Sandboxes {
		return nil
	}
	return releaseClaims(ctx, r.Client, session, "")
}

// releaseClaims deletes the SandboxClaims of a session that is gone: those whose session
// label names it and whose controller is that AgentSession (uid; "" is any of that name).
func releaseClaims(ctx context.Context, c client.Client, session types.NamespacedName, uid types.UID) error {
	claims := &sandboxextv1beta1.SandboxClaimList{}
	if err := c.List(ctx, claims, client.InNamespace(session.Namespace), client.MatchingLabels{sandbox.SessionLabel: session.Name}); err != nil {
		return err
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		ref := metav1.GetControllerOf(claim)
		if ref == nil || ref.Kind != "AgentSession" || ref.Name != session.Name || (uid != "" && ref.UID != uid) {
			continue
		}
		ctrl.LoggerFrom(ctx).V(2).Info("releasing the sandbox claim of a session that is gone", "claim", claim.Name)
		if err := c.Delete(ctx, claim, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// sandboxEvents says what changed of the session's sandbox, after its status write landed.
func (r *AgentSessionReconciler) sandboxEvents(base, s *sessionsv1alpha1.AgentSession) {
	was, is := base.Status.Sandbox, s.Status.Sandbox
	switch {
	case is == nil && was != nil:
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "SandboxReleased", "Release", "sandbox claim %s released", was.Claim)
	case is == nil || (was != nil && was.Phase == is.Phase):
	case was == nil:
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "SandboxClaimed", "Claim", "sandbox claim %s made", is.Claim)
		fallthrough
	default:
		if was != nil && was.Phase == sessionsv1alpha1.SandboxSuspended && is.Phase != sessionsv1alpha1.SandboxFailed {
			r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "SandboxResumed", "Resume", "sandbox %s resumed by a turn", is.Sandbox)
		}
		switch is.Phase {
		case sessionsv1alpha1.SandboxReady:
			r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "SandboxReady", "Resume", "sandbox %s ready (runtime %s)", is.Sandbox, runtimeName(is.RuntimeClassName))
		case sessionsv1alpha1.SandboxSuspended:
			r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "SandboxSuspended", "Suspend", "sandbox %s suspended after its idle time", is.Sandbox)
		case sessionsv1alpha1.SandboxFailed:
			r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, "SandboxFailed", "Claim", "sandbox cannot start: %s", is.Message)
		}
	}
}

// earlier is the result that asks to be woken first (no RequeueAfter: never).
func earlier(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

func runtimeName(rc string) string {
	if rc == "" {
		return "default"
	}
	return rc
}

// watchSandboxes wakes a session when its SandboxClaim or the claim's Sandbox changes.
func (r *AgentSessionReconciler) watchSandboxes(b *builder.Builder) *builder.Builder {
	if !r.Sandboxes {
		return b
	}
	toSession := func(_ context.Context, obj client.Object) []reconcile.Request {
		if name := obj.GetLabels()[sandbox.SessionLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
		}
		return nil
	}
	// A Sandbox names its claim as controller; the claim names the session.
	sandboxToSession := func(ctx context.Context, obj client.Object) []reconcile.Request {
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.Kind != "SandboxClaim" {
			return nil
		}
		claim := &sandboxextv1beta1.SandboxClaim{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, claim); err != nil {
			return nil
		}
		return toSession(ctx, claim)
	}
	return b.Watches(&sandboxextv1beta1.SandboxClaim{}, handler.EnqueueRequestsFromMapFunc(toSession)).
		Watches(&sandboxv1beta1.Sandbox{}, handler.EnqueueRequestsFromMapFunc(sandboxToSession))
}
