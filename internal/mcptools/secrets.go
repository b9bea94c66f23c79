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
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
)

// ManagerOptions are the pool options the manager runs with: header Secrets read under the
// Secret rule (SecretsFrom), server URLs judged by the egress policy before a dial and every
// dialed address judged again (so a name that resolves to loopback later does not help).
func ManagerOptions(r client.Reader, p *egress.Policy) Options {
	return Options{
		ReadSecret: SecretsFrom(r),
		CheckURL:   func(_ context.Context, _ string, u *url.URL) error { return p.CheckURL(u.String()) },
		Transport:  p.Transport(egress.ClientOptions{}),
	}
}

// SecretsFrom reads header values with r (uncached: the manager does not cache Secrets),
// only from a Secret the Agent may use (internal/secretaccess: vouched for by the Agent's
// writer, or opted in). For any other Secret the error is one fixed sentence, whether the
// Secret exists or not.
func SecretsFrom(r client.Reader) SecretReader {
	return func(ctx context.Context, agent *sessionsv1alpha1.Agent, ref *corev1.SecretKeySelector) ([]byte, error) {
		s, err := secretaccess.Get(ctx, r, agent, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			// Only a vouched Secret gets here: its writer may read it, so this tells nothing new.
			return nil, fmt.Errorf("secret %q not found", ref.Name)
		case err != nil:
			return nil, err
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return nil, fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
		}
		return v, nil
	}
}
