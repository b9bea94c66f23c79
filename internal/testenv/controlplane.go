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
	"errors"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlane is a running control plane and an admin client of it: what every suite's
// BeforeSuite starts first.
type ControlPlane struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Client is an uncached admin client, the one specs assert through.
	Client client.Client
}

// Start starts a control plane with this project's CRDs and what opts add (WithWebhooks).
func Start(opts ...Option) (*ControlPlane, error) {
	env := New(opts...)
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &ControlPlane{Env: env, Config: cfg, Client: cl}, nil
}

// Stop stops the control plane; on nil (a suite whose start failed) it does nothing.
func (c *ControlPlane) Stop() error {
	if c == nil {
		return nil
	}
	return c.Env.Stop()
}
