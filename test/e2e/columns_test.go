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

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var _ = Describe("kubectl get columns", func() {
	It("show the error in -o wide and a finished run's phase, never the spawn receipt", func() {
		out, err := kubectl("get", "sessionsends", "-o", "wide")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`ANNOUNCE\s+ERROR\s+AGE`))
		out, err = kubectl("wait", "--for=condition=Completed", "subagentrun/research-llamas", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "subagentrun", "research-llamas", "-o", "wide")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`REQUESTER\s+ERROR\s+AGE`))
		Expect(out).To(ContainSubstring("Succeeded"))
		Expect(out).NotTo(ContainSubstring("accepted"))
	})

	It("show 0 messages and an update time for a session with no message yet", func() {
		out, err := applyYAML(`apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: e2e-quiet}
spec: {key: "cron:e2e-quiet", agentId: main}
`)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() string {
			out, _ := kubectl("get", "agentsession", "e2e-quiet", "--no-headers", "-o", "custom-columns=M:.status.messageCount,U:.status.updatedAt")
			return out
		}, testenv.Timeout, testenv.Interval).Should(MatchRegexp(`^0\s+\d{4}-\d\d-\d\dT`))
	})
})
