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
	"cmp"
	"context"
	"fmt"
	"k8s.io/klog/v2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// AgentReconciler reports whether an Agent can run turns: its provider configuration is
// valid and its API key Secret holds the key. GitOps tools read the Ready condition.
type AgentReconciler struct {
	client.Client
	// APIReader reads Secrets uncached: the manager does not cache every Secret.
	APIReader client.Reader
	// MCP probes the Agent's MCP tool servers for status.mcpServers and the Ready message;
	// nil skips them.
	MCP *mcptools.Pool
	// A2A reads the Agent's remote A2A agents' cards for status.a2aAgents and the Ready
	// message, in the same probes; nil skips them.
	A2A *a2atools.Client
	// Sandbox turns on sandboxes (agent_sandbox.go); nil leaves spec.sandbox.enabled a flag
	// of the sessions only.
	Sandbox *SandboxOptions
	// probes runs those probes off the workers; set up with MCP or A2A by setupWith.
	probes *MCPProbes
}

// agentWorkers is how many Agents are reconciled at once. A reconcile never waits on an MCP
// server (MCPProbes), so a few suffice; more than one so no Agent waits behind another's
// Secret reads and status write.
const agentWorkers = 4

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agents,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

func (r *AgentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &sessionsv1alpha1.Agent{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		if apierrors.IsNotFound(err) && r.MCP != nil {
			r.MCP.Forget(req.NamespacedName)
		}
		if apierrors.IsNotFound(err) && r.A2A != nil {
			r.A2A.Forget(req.NamespacedName)
		}
		if apierrors.IsNotFound(err) && r.probes != nil {
			r.probes.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := a.DeepCopy()
	ctrl.LoggerFrom(ctx).V(2).Info("checking agent", "agent", klog.KObj(a), "provider", a.Spec.Model.Provider,
		"mcpServers", len(a.Spec.Tools.MCPServers))
	cond := metav1.Condition{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "ProviderConfigured",
		Message: fmt.Sprintf("%s provider configured", a.Spec.Model.Provider), ObservedGeneration: a.Generation}
	reason, msg, err := r.check(ctx, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	var res ctrl.Result
	if r.Sandbox != nil {
		v, err := r.reconcileSandbox(ctx, a)
		if err != nil {
			return ctrl.Result{}, err
		}
		if reason == "" {
			reason, msg = v.Reason, v.Message
		}
		if v.Pending {
			res.RequeueAfter = cmp.Or(r.Sandbox.PodRecheck, ownerflow.SecretRecheck)
		}
		if s := a.Status.Sandbox; s != nil {
			cond.Message += "; sandbox runtime " + cmp.Or(s.RuntimeClassName, "default")
		}
	}
	if summary, retry := r.mcpStatus(a); summary != "" {
		cond.Message += "; " + summary
		if retry {
			res.RequeueAfter = ownerflow.SecretRecheck
		}
	}
	if reason == "" {
		reason, msg = mcpRefused(a.Status.MCPServers)
	}
	if reason == "" {
		reason, msg = a2aRefused(a.Status.A2AAgents)
	}
	switch {
	case reason != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, textutil.Truncate(msg, ownerflow.MaxConditionMessage)
		// Secrets are not watched (the manager does not cache them): look again later.
		res.RequeueAfter = min(cmp.Or(res.RequeueAfter, ownerflow.SecretRecheck), ownerflow.SecretRecheck)
	case mcpProbing(a.Status.MCPServers) || a2aProbing(a.Status.A2AAgents):
		// Not known yet: the probe's end reconciles the Agent again.
		cond.Status, cond.Reason = metav1.ConditionUnknown, mcpReasonProbing
	}
	ownerflow.ApplyReady(ctx, a, &a.Status.Conditions, &a.Status.ObservedGeneration, cond)
	_, err = ownerflow.WriteStatus(ctx, r.Client, base, a)
	return res, err
}

// check returns a reason and message when the Agent cannot run turns. The Secret is read
// only when its use is allowed (secretaccess); for any other, the condition says it is not
// usable and nothing about whether it or its key exists.
func (r *AgentReconciler) check(ctx context.Context, a *sessionsv1alpha1.Agent) (string, string, error) {
	cfg := provider.Config{Provider: string(a.Spec.Model.Provider), Model: a.Spec.Model.Name, BaseURL: a.Spec.Model.BaseURL}
	if ref := a.Spec.Model.APIKeySecretRef; ref != nil {
		sec, err := secretaccess.Get(ctx, r.APIReader, a, ref.Name)
		switch {
		case secretaccess.IsUnusable(err):
			return "SecretNotUsable", err.Error(), nil
		case apierrors.IsNotFound(err):
			// Only a Secret the Agent's writer may get gets here: telling them is no leak.
			return "SecretNotFound", fmt.Sprintf("API key Secret %q not found", ref.Name), nil
		case err != nil:
			return "", "", err
		case len(sec.Data[ref.Key]) == 0:
			return "SecretKeyMissing", fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key), nil
		}
		cfg.APIKey = string(sec.Data[ref.Key])
	} else if policy.NeedsAPIKey(a.Spec.Model.Provider) {
		return "SecretNotSet", fmt.Sprintf("the %s provider needs spec.model.apiKeySecretRef", a.Spec.Model.Provider), nil
	}
	if _, err := provider.New(cfg); err != nil {
		return "InvalidProvider", err.Error(), nil
	}
	return "", "", nil
}

// SetupWith registers the reconciler; probes runs its MCP probes (nil when MCP is nil).
func (r *AgentReconciler) SetupWith(b *builder.Builder, probes *MCPProbes) error {
	b = b.For(&sessionsv1alpha1.Agent{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: agentWorkers})
	if r.Sandbox != nil {
		b = b.Owns(&sandboxextv1beta1.SandboxTemplate{}).Owns(&sandboxextv1beta1.SandboxWarmPool{}).
			Watches(&sandboxv1beta1.Sandbox{}, handler.EnqueueRequestsFromMapFunc(sandboxToAgent))
	}
	if r.MCP != nil || r.A2A != nil {
		r.probes = probes
		b = b.WatchesRawSource(source.Channel(probes.done, &handler.EnqueueRequestForObject{}))
	}
	return b.Named("agent").Complete(ownerflow.RequeueConflicts(r))
}
