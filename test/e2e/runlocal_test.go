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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the local cluster", func() {
	It("starts without an error line: a newcomer reads one as a crash", func() {
		var errs []string
		for _, line := range strings.Split(startupLog, "\n") {
			if strings.Contains(line, `"level":"error"`) {
				errs = append(errs, line)
			}
		}
		Expect(startupLog).To(ContainSubstring("[manager]"), "the start-up log holds the manager's lines")
		Expect(errs).To(BeEmpty(), "make run-local printed error lines at start-up")
	})

	It("answers kubectl get for every kind, with the samples applied", func() {
		out, err := kubectl("get", "agentsessions,sessionsends,subagentruns,agents,sessionpolicies")
		Expect(err).NotTo(HaveOccurred(), out)
		for _, want := range []string{"agent:main:main", "agent:research:main", "ping-research", "research-llamas", "agent.sessions.agents.dev/main", "sessionpolicy.sessions.agents.dev/default"} {
			Expect(out).To(ContainSubstring(want))
		}
	})

	It("lists only Agents for kubectl get agents; the category agent-sessions lists every kind", func() {
		out, err := kubectl("get", "agents", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		for _, line := range strings.Fields(out) {
			Expect(line).To(HavePrefix("agent.sessions.agents.dev/"))
		}
		Expect(out).To(ContainSubstring("agent.sessions.agents.dev/main"))
		out, err = kubectl("get", "agents", "main")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl("get", "agent-sessions", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		for _, want := range []string{"agent.sessions.agents.dev/main", "agentsession.sessions.agents.dev/main-main", "sessionpolicy.sessions.agents.dev/default", "subagentrun.sessions.agents.dev/research-llamas"} {
			Expect(out).To(ContainSubstring(want))
		}
	})

	It("teaches the API through kubectl explain", func() {
		out, err := kubectl("explain", "sessionsend.spec.timeoutSeconds")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("0 is fire-and-forget"))
		Expect(out).To(ContainSubstring("default 30"))
		Expect(out).To(ContainSubstring("(the run goes on): 0 to 600 seconds, default 30."))
	})

	It("prints the short names' columns", func() {
		out, err := kubectl("get", "as")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`KEY\s+KIND\s+CHANNEL\s+MESSAGES\s+UPDATED`))
	})
})
