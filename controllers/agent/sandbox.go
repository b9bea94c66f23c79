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

package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
)

// SandboxOptions turns on sandboxes: a sandboxed Agent gets a SandboxTemplate and a
// SandboxWarmPool of kubernetes-sigs/agent-sandbox, whose controller must run in the cluster.
type SandboxOptions struct {
	// Image is the sandbox image of an Agent that names none (sandboxd, a shell, coreutils).
	Image string
	// PodRecheck is how soon an Agent with a sandbox Pod not Ready yet is looked at again
	// (image pulls show only on Pods, which the manager does not watch); 0 is
	// ownerflow.SecretRecheck.
	PodRecheck time.Duration
}

// +kubebuilder:rbac:groups=extensions.agents.x-k8s.io,resources=sandboxtemplates;sandboxwarmpools,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list

// reconcileSandbox keeps a sandboxed Agent's SandboxTemplate and SandboxWarmPool as
// internal/sandbox builds them (the Agent controls both, so deleting the Agent deletes them),
// removes them when the Agent is no longer sandboxed, and sets status.sandbox. Its verdict
// says why the Agent's sandbox cannot start, and whether to look again.
func (r *AgentReconciler) reconcileSandbox(ctx context.Context, a *sessionsv1alpha1.Agent) (sandbox.PodsVerdict, error) {
	reason, msg, image, err := r.keepSandbox(ctx, a)
	if err != nil || reason != "" || image == "" {
		return sandbox.PodsVerdict{Reason: reason, Message: msg}, err
	}
	// The image of a Pod that cannot pull it shows only on the Pod: the manager watches no
	// Pods, so the Agent is looked at again while one of them is not Ready.
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(a.Namespace), client.MatchingLabels{sandbox.AgentLabel: a.Name}); err != nil {
		return sandbox.PodsVerdict{}, fmt.Errorf("sandbox Pods: %w", err)
	}
	return sandbox.JudgePods(pods.Items, image), nil
}

// keepSandbox is reconcileSandbox's objects: it returns a reason and message when the
// Agent's sandbox cannot start, else the image its sandboxes run ("" when not sandboxed).
func (r *AgentReconciler) keepSandbox(ctx context.Context, a *sessionsv1alpha1.Agent) (string, string, string, error) {
	key := types.NamespacedName{Namespace: a.Namespace, Name: sandbox.Name(a)}
	if !a.Spec.Sandbox.Enabled {
		a.Status.Sandbox = nil
		for _, obj := range []client.Object{&sandboxextv1beta1.SandboxWarmPool{}, &sandboxextv1beta1.SandboxTemplate{}} {
			if err := r.Get(ctx, key, obj); err == nil && metav1.IsControlledBy(obj, a) {
				if err := r.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
					return "", "", "", err
				}
			} else if client.IgnoreNotFound(err) != nil {
				return "", "", "", err
			}
		}
		return "", "", "", nil
	}
	rc, reason, msg, err := r.runtimeClass(ctx, a)
	if err != nil || reason != "" {
		return reason, msg, "", err
	}
	if a.Spec.Sandbox.Image == "" && r.Sandbox.Image == "" {
		return sessionsv1alpha1.ReasonSandboxImageNotSet, "spec.sandbox.image is unset and the manager has no --sandbox-image", "", nil
	}
	want := sandbox.Template(a, r.Sandbox.Image, rc)
	tpl := &sandboxextv1beta1.SandboxTemplate{ObjectMeta: want.ObjectMeta}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, tpl, func() error {
		sandbox.KeepTemplate(tpl, want)
		return controllerutil.SetControllerReference(a, tpl, r.Scheme())
	}); err != nil {
		return "", "", "", fmt.Errorf("sandbox template: %w", err)
	}
	wantPool := sandbox.WarmPool(a)
	pool := &sandboxextv1beta1.SandboxWarmPool{ObjectMeta: wantPool.ObjectMeta}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, pool, func() error {
		sandbox.KeepWarmPool(pool, wantPool)
		return controllerutil.SetControllerReference(a, pool, r.Scheme())
	}); err != nil {
		return "", "", "", fmt.Errorf("sandbox warm pool: %w", err)
	}
	a.Status.Sandbox = &sessionsv1alpha1.AgentSandboxStatus{Template: tpl.Name, WarmPool: pool.Name,
		RuntimeClassName: rc, ReadyReplicas: pool.Status.ReadyReplicas}
	return "", "", want.Spec.PodTemplate.Spec.Containers[0].Image, nil
}

// sandboxToAgent wakes the Agent a Sandbox was made for (its Pod template carries
// sandbox.AgentLabel, from the Agent's SandboxTemplate): the manager watches no Pods, and a
// Sandbox's status changes once its Pod exists and when it becomes Ready, so the Agent
// judges its Pods then (reconcileSandbox) and looks again while one is not Ready. Nothing
// else wakes it when a session's sandbox starts: its template and pool do not change.
func sandboxToAgent(_ context.Context, obj client.Object) []reconcile.Request {
	sb, ok := obj.(*sandboxv1beta1.Sandbox)
	if !ok {
		return nil
	}
	if name := sb.Spec.PodTemplate.ObjectMeta.Labels[sandbox.AgentLabel]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: sb.Namespace, Name: name}}}
	}
	return nil
}

// runtimeClass resolves the RuntimeClass of the Agent's sandboxes (sandbox.RuntimeClass),
// or says why the one the Agent names cannot be used.
func (r *AgentReconciler) runtimeClass(ctx context.Context, a *sessionsv1alpha1.Agent) (string, string, string, error) {
	named := ptr.Deref(a.Spec.Sandbox.RuntimeClassName, "")
	probe := sandbox.GVisor
	if named != "" {
		probe = named
	}
	err := r.APIReader.Get(ctx, types.NamespacedName{Name: probe}, &nodev1.RuntimeClass{})
	switch {
	case apierrors.IsNotFound(err) && named != "":
		return "", sessionsv1alpha1.ReasonRuntimeClassNotFound, fmt.Sprintf("RuntimeClass %q of spec.sandbox.runtimeClassName does not exist", named), nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", "", "", err
	}
	return sandbox.RuntimeClass(a, err == nil), "", "", nil
}
