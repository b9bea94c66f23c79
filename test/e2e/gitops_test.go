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

package e2e

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// GitOps tools apply the same manifests over and over: what the API server, the webhooks
// and the controllers add must never show as drift, nor make an apply conflict.
var _ = Describe("GitOps applies", func() {
	samples := filepath.Join(testenv.RepoRoot(), "config", "samples")
	policySet := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "policy-set.yaml")

	// manifests are the samples and a policy set, each in a namespace of its own (one
	// SessionPolicy per namespace).
	manifests := func(ns string) [][]string {
		return [][]string{{"-n", ns, "-k", samples}, {"-n", ns + "-policy", "-f", policySet}}
	}
	apply := func(ns string, flags ...string) {
		for _, m := range manifests(ns) {
			out, err := kubectl(append(append([]string{"apply"}, flags...), m...)...)
			Expect(err).NotTo(HaveOccurred(), out)
		}
	}
	// expectNoDiff runs kubectl diff, which exits 1 on any difference.
	expectNoDiff := func(ns string, flags ...string) {
		for _, m := range manifests(ns) {
			out, err := kubectl(append(append([]string{"diff"}, flags...), m...)...)
			Expect(err).NotTo(HaveOccurred(), "kubectl diff %v %v:\n%s", flags, m, out)
			Expect(out).To(BeEmpty())
			GinkgoWriter.Printf("kubectl diff %v %v: exit 0, %d bytes of output\n", flags, m, len(out))
		}
	}
	// settled waits until the operator has done with everything it was given.
	settled := func(ns string) {
		for _, w := range [][]string{
			{"-n", ns, "--for=condition=Ready", "agents", "--all"},
			{"-n", ns, "--for=condition=Ready", "sessionpolicy/default"},
			{"-n", ns, "--for=condition=Completed", "sessionsend/ping-research", "subagentrun/research-llamas"},
			{"-n", ns + "-policy", "--for=condition=Ready", "agent/ops", "sessionpolicy/default"},
		} {
			out, err := kubectl(append([]string{"wait", "--timeout=60s"}, w...)...)
			Expect(err).NotTo(HaveOccurred(), out)
		}
	}
	create := func(ns string) {
		for _, n := range []string{ns, ns + "-policy"} {
			out, err := kubectl("create", "namespace", n)
			Expect(err).NotTo(HaveOccurred(), out)
		}
	}

	It("shows no drift after client-side applies, nor when moving to server-side apply", func() {
		ns := "gitops-csa"
		create(ns)
		apply(ns)
		settled(ns)
		apply(ns)
		expectNoDiff(ns)
		// (No diff --server-side yet: kubectl's server-side apply rewrites its own
		// last-applied-configuration annotation, which such a diff shows, for any kind.)
		// A team (or Argo CD's ServerSideApply=true) moves to server-side apply: the fields
		// kubectl's client-side apply owned move over without a conflict.
		apply(ns, "--server-side")
		expectNoDiff(ns, "--server-side")
	})

	It("shows no drift and no conflict after server-side applies", func() {
		ns := "gitops-ssa"
		create(ns)
		apply(ns, "--server-side")
		settled(ns)
		apply(ns, "--server-side")
		expectNoDiff(ns, "--server-side")
		// A GitOps controller takes over what kubectl applied, under its own field manager
		// (Flux's): the fields the API defaulted inside lists must not conflict.
		flux := "--field-manager=kustomize-controller"
		apply(ns, "--server-side", flux)
		expectNoDiff(ns, "--server-side", flux)
	})
})
