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

// Package secretaccess reads the Secrets that Agents and SessionPolicy sinks reference, and
// only those the rule lets the manager use: a Secret the object's last writer may get (the
// webhook recorded the vouch in sessions.agents.dev/vouched-secrets) or one that opted in
// with the label sessions.agents.dev/agent-usable=true. Any other Secret's data is never
// read, and the error says nothing about whether it exists.
package secretaccess

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// UnusableError is the one answer for a Secret the manager may not use.
type UnusableError struct{ Name string }

func (e *UnusableError) Error() string { return policy.UnusableSecret(e.Name) }

// IsUnusable reports whether err is an UnusableError.
func IsUnusable(err error) bool {
	var u *UnusableError
	return errors.As(err, &u)
}

// Get reads the Secret name in owner's namespace when owner may use it. A vouched Secret that
// does not exist comes back as NotFound (its writer may read it, so saying so tells nothing
// new); a Secret neither vouched for nor opted in, present or not, is an UnusableError.
// r must read uncached (the manager caches no Secrets).
func Get(ctx context.Context, r client.Reader, owner metav1.Object, name string) (*corev1.Secret, error) {
	key := types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}
	vouched := policy.SecretUsable(name, owner.GetAnnotations(), nil)
	if !vouched {
		// Only the labels, never the data, of a Secret nobody vouched for.
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.Get(ctx, key, m)
		if apierrors.IsNotFound(err) || err == nil && !policy.OptedIn(m.Labels) {
			return nil, &UnusableError{Name: name}
		}
		if err != nil {
			return nil, err
		}
	}
	s := &corev1.Secret{}
	if err := r.Get(ctx, key, s); err != nil {
		return nil, err
	}
	if !vouched && !policy.OptedIn(s.Labels) {
		// The label went away between the two reads.
		return nil, &UnusableError{Name: name}
	}
	return s, nil
}

// Value is the value of key in the Secret name, under the same rule as Get.
func Value(ctx context.Context, r client.Reader, owner metav1.Object, name, key string) ([]byte, error) {
	s, err := Get(ctx, r, owner, name)
	if err != nil {
		return nil, err
	}
	return s.Data[key], nil
}
