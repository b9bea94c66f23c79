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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// starters judges the writer of a SessionSchedule or SessionHook: the operator (the manager
// for a tick, the transcript-store for a delivery) will create SessionSends into the
// session, and create that session on first use, on the writer's word. So the writer must
// be allowed to create SessionSends in the namespace and, when the session does not exist
// yet, to create it; both asked with SubjectAccessReviews as the writer, as act-as is.
type starters struct {
	authz
	Reader    client.Reader
	APIReader client.Reader
}

// judge returns the 403 for a writer who may not start sends into key, or nil. key "" is a
// new hook:<uuid> session per delivery.
func (s starters) judge(ctx context.Context, resource, name, ns, key string) error {
	if s.isManager(ctx) {
		return nil
	}
	user := requestUser(ctx).Username
	ok, err := s.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "sessionsends", "create", ns, "")
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if !ok {
		return forbidden(resource, name, fmt.Sprintf("user %q may not create sessionsends in namespace %s, which this %s would create on their behalf", user, ns, resource))
	}
	objName := ""
	if key != "" {
		existing, err := lookup.New(s.Reader, s.APIReader).SessionByKey(ctx, ns, key)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if existing != nil {
			return nil
		}
		objName = sessionkey.ObjectName(key)
	}
	if ok, err = s.allowed(ctx, sessionsv1alpha1.GroupVersion.Group, "agentsessions", "create", ns, objName); err != nil {
		return apierrors.NewInternalError(err)
	}
	if !ok {
		return forbidden(resource, name, fmt.Sprintf("user %q may not create agentsessions in namespace %s, which this %s would create on first use", user, ns, resource))
	}
	return nil
}

// startKey checks a session key a schedule or hook names: it must parse as a key (not an
// alias such as main, nor a sessionId: the session is created on first use), and one
// scoped to an agent must be agentID's.
func startKey(path *field.Path, key, agentID string) *field.Error {
	if key == "" {
		return nil
	}
	if key == sessionkey.Main || sessionkey.IsReserved(key) {
		return field.Invalid(path, key, "give a session key, such as "+sessionkey.MainKey(agentID)+": "+key+" is an alias")
	}
	if _, err := sessionkey.Parse(key); err != nil {
		return field.Invalid(path, key, err.Error())
	}
	if a := sessionkey.AgentOf(key); a != "" && a != agentID {
		return field.Invalid(path, key, "the session is agent "+a+"'s, not spec.agentId "+agentID+"'s")
	}
	return nil
}

// onSpecChange is the admission.Validator of a kind judged on create and on every change of
// its spec, by the request's own user; deletes and status writes pass.
type onSpecChange[T client.Object] struct {
	check func(context.Context, T) error
	spec  func(T) any
	// warn, when set, says what is admitted but will not work yet (a missing Agent).
	warn func(context.Context, T) admission.Warnings
}

// ValidateCreate implements admission.Validator.
func (v onSpecChange[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	return v.judge(ctx, obj)
}

// ValidateUpdate implements admission.Validator.
func (v onSpecChange[T]) ValidateUpdate(ctx context.Context, old, obj T) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(v.spec(old), v.spec(obj)) {
		return nil, nil
	}
	return v.judge(ctx, obj)
}

// judge is the check, with the warnings of an object it admits.
func (v onSpecChange[T]) judge(ctx context.Context, obj T) (admission.Warnings, error) {
	if err := v.check(ctx, obj); err != nil || v.warn == nil {
		return nil, err
	}
	return v.warn(ctx, obj), nil
}

// ValidateDelete implements admission.Validator.
func (onSpecChange[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

var (
	_ admission.Validator[*sessionsv1alpha1.SessionSchedule] = onSpecChange[*sessionsv1alpha1.SessionSchedule]{}
	_ admission.Validator[*sessionsv1alpha1.SessionHook]     = onSpecChange[*sessionsv1alpha1.SessionHook]{}
)
