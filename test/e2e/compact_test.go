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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("kubectl sessions compact", func() {
	It("folds a session's history into a compaction record that history prints", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: compactor
spec:
  model:
    provider: scripted
    script:
    - match: "^Compaction step"
      reply: we talked twice
  memory:
    compaction:
      keepRecentMessages: 0
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: compactor-main
spec:
  key: agent:compactor:main
  agentId: compactor
`)
		Expect(err).NotTo(HaveOccurred(), out)
		for _, msg := range []string{"first", "second"} {
			out, code := plugin("send", "agent:compactor:main", msg)
			Expect(code).To(Equal(0), out)
		}
		out, code := plugin("compact", "agent:compactor:main")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("agent:compactor:main compaction requested"))
		out, err = kubectl("wait", "--for=jsonpath={.status.compactions}=1", "agentsession/compactor-main", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "agentsession/compactor-main", "-o", "jsonpath={.metadata.annotations}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).NotTo(ContainSubstring("compact-request"))
		out, code = plugin("history", "agent:compactor:main", "--limit", "10")
		Expect(code).To(Equal(0), out)
		Expect(out).To(MatchRegexp(`compaction of 1-4\s+we talked twice`))
	})
})
