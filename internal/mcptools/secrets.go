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

package mcptools

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretsFrom reads header values with r (uncached: the manager does not cache Secrets).
// It applies no rule of its own about which Secret an Agent may name; a stricter reader
// (the trust-boundary rules) wraps or replaces it.
func SecretsFrom(r client.Reader) SecretReader {
	return func(ctx context.Context, namespace string, ref *corev1.SecretKeySelector) ([]byte, error) {
		var s corev1.Secret
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &s)
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("Secret %q not found", ref.Name)
		case err != nil:
			return nil, err
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return nil, fmt.Errorf("Secret %q has no key %q", ref.Name, ref.Key)
		}
		return v, nil
	}
}
