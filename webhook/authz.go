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
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// authz answers who the admission request's user is and what RBAC lets them do: the manager
// (its own ServiceAccount, learned with a SelfSubjectReview) speaks for every session; anyone
// else is asked about with a SubjectAccessReview.
type authz struct {
	// Client creates SubjectAccessReviews (never cached).
	Client client.Client
	// Manager is the manager's username; empty trusts nobody.
	Manager string
}

// requestUser is the admission request's user; an empty one (no request in the context)
// is nobody and is allowed nothing.
func requestUser(ctx context.Context) authenticationv1.UserInfo {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return authenticationv1.UserInfo{}
	}
	return req.UserInfo
}

func isDryRun(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && req.DryRun != nil && *req.DryRun
}

func (a authz) isManager(ctx context.Context) bool {
	return a.Manager != "" && requestUser(ctx).Username == a.Manager
}

// allowed asks whether the request's user may do verb on resource (group sessions.agents.dev
// unless group is given) named name in ns.
func (a authz) allowed(ctx context.Context, group, resource, verb, ns, name string) (bool, error) {
	u := requestUser(ctx)
	if u.Username == "" {
		return false, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra(u.Extra),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: group, Resource: resource, Verb: verb, Namespace: ns, Name: name},
	}}
	if err := a.Client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	return sar.Status.Allowed, nil
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if in == nil {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// mayActAs reports whether the request's user may speak for the session with key: the
// manager always; anyone else with the verb act-as on that AgentSession. The session need
// not exist (a child session key names one to be created).
func (a authz) mayActAs(ctx context.Context, ns, key string) (bool, error) {
	if a.isManager(ctx) {
		return true, nil
	}
	return a.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", sessionsv1alpha1.VerbActAs, ns, sessionkey.ObjectName(key))
}

// managerOnlyAnnotations are set by the operator's session tools and trusted by the
// controllers; nobody else may set or change them.
var managerOnlyAnnotations = []string{sessionsv1alpha1.HopsAnnotation, sessionsv1alpha1.ChainRootAnnotation}

// managerOnlyLabels are the labels of the same rule.
var managerOnlyLabels = []string{sessionsv1alpha1.ChainLabel}

// forgedMark returns the refusal of a request that sets or changes one of annotations or a
// manager-only label without being the manager (old nil on create), or "".
func (a authz) forgedMark(ctx context.Context, old, cur client.Object, annotations ...string) string {
	var oldAnnotations, oldLabels map[string]string
	if old != nil {
		oldAnnotations, oldLabels = old.GetAnnotations(), old.GetLabels()
	}
	if k := a.forgedAnnotation(ctx, oldAnnotations, cur.GetAnnotations(), annotations...); k != "" {
		return managerOnly(k)
	}
	if k := a.forgedAnnotation(ctx, oldLabels, cur.GetLabels(), managerOnlyLabels...); k != "" {
		return managerOnlyLabel(k)
	}
	return ""
}

// forgedAnnotation returns the first manager-only annotation that the request sets or
// changes (old nil on create) without being the manager, or "".
func (a authz) forgedAnnotation(ctx context.Context, old, cur map[string]string, keys ...string) string {
	for _, k := range keys {
		if policy.MarkWritten(old, cur, k) && !a.isManager(ctx) {
			return k
		}
	}
	return ""
}
