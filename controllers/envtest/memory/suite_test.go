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

// Package memory runs agents with long-term memory through the whole manager: the turn
// engine on the scripted provider, its memory tools over the store's memory and full-text
// indexes fed from the store's commits, as the transcript-store feeds them.
package memory

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

func TestMemory(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "memory suite")
}

var _ = BeforeSuite(func() {
	suite = managertest.Start(managertest.Options{Indexes: true})
	k8s = suite.Client
})

var _ = AfterSuite(func() { suite.Stop() })
