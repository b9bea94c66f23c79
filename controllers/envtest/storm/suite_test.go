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

// Package storm runs agents that call each other on every input through the whole manager:
// controllers, the turn engine on the scripted provider and the admission webhooks behind a
// real API server, the manager speaking as its own user so the webhook tells its tool-made
// objects from a person's.
package storm

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/controllers/managertest"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var (
	suite *managertest.Suite
	k8s   client.Client
	ctx   = context.Background()
)

func TestStorm(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "storm suite")
}

var _ = BeforeSuite(func() {
	suite = managertest.Start(managertest.Options{Webhooks: true})
	k8s = suite.Client
})

var _ = AfterSuite(func() { suite.Stop() })
