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

package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UserClient provisions a user of env with a client certificate and returns its client.
func UserClient(env *envtest.Environment, cfg *rest.Config, name string) (client.Client, error) {
	u, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:authenticated"}}, cfg)
	if err != nil {
		return nil, err
	}
	return client.New(u.Config(), client.Options{Scheme: Scheme()})
}

// ShippedRoles creates the ClusterRoles of config/rbac/user_roles.yaml as shipped; those
// that exist are left as they are.
func ShippedRoles(ctx context.Context, c client.Client) error {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", "user_roles.yaml"))
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		role := &rbacv1.ClusterRole{}
		if err := dec.Decode(role); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
}
