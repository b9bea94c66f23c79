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

// Package schema proves the CRDs' OpenAPI schemas and CEL rules against a real API server:
// the samples are accepted, defaults are applied, and invalid objects are rejected with the
// field error a person needs.
package schema

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var (
	cp  *testenv.ControlPlane
	k8s client.Client
	ctx = context.Background()
)

func TestSchema(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "CRD schema suite")
}

var _ = BeforeSuite(func() {
	var err error
	cp, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s = cp.Client
})

var _ = AfterSuite(func() { Expect(cp.Stop()).To(Succeed()) })
