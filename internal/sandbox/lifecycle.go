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

package sandbox

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// EnsureClaim returns the session's SandboxClaim, making it first if there is none. A claim
// already there (made before a restart, or by a racing turn) is the session's if it controls
// it; one it does not control is refused, never taken over.
func EnsureClaim(ctx context.Context, c client.Client, session *sessionsv1alpha1.AgentSession, agent *sessionsv1alpha1.Agent) (*sandboxextv1beta1.SandboxClaim, error) {
	want := Claim(session, agent)
	got := &sandboxextv1beta1.SandboxClaim{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err = c.Create(ctx, want); err == nil {
			claimsTotal.WithLabelValues("created").Inc()
			return want, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			claimsTotal.WithLabelValues("failed").Inc()
			return nil, fmt.Errorf("claim a sandbox: %w", err)
		}
		err = c.Get(ctx, client.ObjectKeyFromObject(want), got)
	}
	if err != nil {
		return nil, fmt.Errorf("claim a sandbox: %w", err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != session.UID {
		return nil, fmt.Errorf("SandboxClaim %s/%s exists and is not this session's", got.Namespace, got.Name)
	}
	return got, nil
}

// BoundSandbox returns the Sandbox a claim is bound to, or nil while it is not bound yet.
func BoundSandbox(ctx context.Context, c client.Reader, claim *sandboxextv1beta1.SandboxClaim) (*sandboxv1beta1.Sandbox, error) {
	name := claim.Status.SandboxStatus.Name
	if name == "" {
		return nil, nil
	}
	sb := &sandboxv1beta1.Sandbox{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: name}, sb); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return sb, nil
}

// SetMode suspends (Suspended) or resumes (Running) a Sandbox: agent-sandbox's controller
// removes its Pod and keeps its volumes, or starts a Pod on them again.
func SetMode(ctx context.Context, c client.Client, sb *sandboxv1beta1.Sandbox, mode sandboxv1beta1.SandboxOperatingMode) error {
	if sb.Spec.OperatingMode == mode {
		return nil
	}
	patch := client.MergeFrom(sb.DeepCopy())
	sb.Spec.OperatingMode = mode
	return c.Patch(ctx, sb, patch)
}

// Release deletes the session's claim; agent-sandbox deletes its Sandbox, Pod and workspace.
func Release(ctx context.Context, c client.Client, session *sessionsv1alpha1.AgentSession) error {
	claim := &sandboxextv1beta1.SandboxClaim{}
	claim.Namespace, claim.Name = session.Namespace, ClaimName(session)
	return client.IgnoreNotFound(c.Delete(ctx, claim, client.PropagationPolicy("Background")))
}
