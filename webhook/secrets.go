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

package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-agent,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=agents,verbs=create;update,versions=v1alpha1,name=magent.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/mutate-sessions-agents-dev-v1alpha1-sessionpolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=sessions.agents.dev,resources=sessionpolicies,verbs=create;update,versions=v1alpha1,name=msessionpolicy.sessions.agents.dev,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded

// secretGate holds the Secret rule at admission: every Secret an object references must be
// one the request's user may get, or one that opted in with the agent-usable label. It
// records the ones the user vouched for in the VouchedSecretsAnnotation, overwriting what the
// request carried, so the controllers read a Secret only when it opted in or the object's
// last writer could read it. Every create and update is judged again, by its own user: an
// editor who may not read the Secret cannot repoint an Agent that uses it (a new baseURL
// would receive the key).
type secretGate struct {
	authz
	// Secrets reads Secret metadata (labels) uncached: the manager caches no Secrets.
	Secrets client.Reader
}

// vouch judges refs for obj and writes the annotation; the error is a 403 naming the field.
func (g secretGate) vouch(ctx context.Context, kind string, obj metav1.Object, refs []policy.SecretRef) error {
	if g.isManager(ctx) {
		// The manager may get every Secret: it must never vouch. Its writes carry the
		// annotation as it read it.
		return nil
	}
	var vouched []string
	var errs field.ErrorList
	for _, ref := range refs {
		ok, err := g.allowed(ctx, "", "secrets", "get", obj.GetNamespace(), ref.Name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if ok {
			vouched = append(vouched, ref.Name)
			continue
		}
		optedIn, err := g.optedIn(ctx, obj.GetNamespace(), ref.Name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if !optedIn {
			errs = append(errs, field.Forbidden(ref.Path, policy.SecretDenial(requestUser(ctx).Username, ref.Name)))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewForbidden(sessionsv1alpha1.GroupVersion.WithResource(kind).GroupResource(), obj.GetName(), errs.ToAggregate())
	}
	ann := obj.GetAnnotations()
	delete(ann, sessionsv1alpha1.VouchedSecretsAnnotation)
	if len(vouched) > 0 {
		if ann == nil {
			ann = map[string]string{}
		}
		ann[sessionsv1alpha1.VouchedSecretsAnnotation] = policy.FormatVouched(vouched)
	}
	obj.SetAnnotations(ann)
	return nil
}

// optedIn reads only the Secret's metadata: a Secret that does not exist has not opted in,
// and the answer to the user is the same either way.
func (g secretGate) optedIn(ctx context.Context, ns, name string) (bool, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := g.Secrets.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, m)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && policy.OptedIn(m.Labels), err
}

// AgentSecrets vouches for an Agent's Secrets.
type AgentSecrets struct{ secretGate }

var _ admission.Defaulter[*sessionsv1alpha1.Agent] = &AgentSecrets{}

// Default implements admission.Defaulter.
func (d *AgentSecrets) Default(ctx context.Context, a *sessionsv1alpha1.Agent) error {
	return d.vouch(ctx, "agents", a, policy.AgentSecretRefs(a))
}

// PolicySecrets vouches for a SessionPolicy's delivery sink Secrets.
type PolicySecrets struct{ secretGate }

var _ admission.Defaulter[*sessionsv1alpha1.SessionPolicy] = &PolicySecrets{}

// Default implements admission.Defaulter.
func (d *PolicySecrets) Default(ctx context.Context, p *sessionsv1alpha1.SessionPolicy) error {
	return d.vouch(ctx, "sessionpolicies", p, policy.PolicySecretRefs(p))
}
