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
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// A reply longer than the 8 KiB a status keeps reaches every door whole: sessions_send over
// /mcp (the Go MCP SDK) and an A2A task's artifact (@a2a-js/sdk); status says it was cut.
var _ = Describe("A long reply, whole at every door", Ordered, func() {
	var long, node, script, caller string

	BeforeAll(func() {
		var b strings.Builder
		for i := 0; b.Len() < 20<<10; i++ {
			fmt.Fprintf(&b, "w%05d ", i)
		}
		long = b.String() + "THE-END"
		applyReady(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata:
  name: longtalker
spec:
  model:
    provider: scripted
    script:
    - match: "^long"
      reply: "`+long+`"
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata:
  name: longtalker-main
spec:
  key: agent:longtalker:main
  agentId: longtalker
  chatType: direct
`, "longtalker")
		node, script = nodeScript("a2a-client-v1.mjs", a2aClientV1, testenv.MCPPackages.A2ASDK)
		caller = a2aCallerToken("long-caller-")
	})

	It("returns the whole reply from sessions_send over /mcp; status keeps 8 KiB and says so", func() {
		text, isErr := callTool(cluster.Token, "sessions_send", map[string]any{
			"sessionKey": "agent:longtalker:main", "message": "long please", "timeoutSeconds": 60})
		Expect(isErr).To(BeFalse(), text)
		var res struct{ Status, Reply, RunID string }
		Expect(json.Unmarshal([]byte(text), &res)).To(Succeed(), text)
		Expect(res.Status).To(Equal("ok"))
		Expect(res.Reply).To(Equal(long))

		out, err := kubectl("get", "sessionsends", "-o", `jsonpath={range .items[?(@.status.replyTruncated==true)]}{.status.runId}{"|"}{.status.turns[0].replySeq}{"\n"}{end}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`(?m)^` + res.RunID + `\|[1-9]`))
	})

	It("returns the whole reply as the A2A task's artifact", func() {
		var r a2aV1Result
		runNodeJSON(node, script, &r, cluster.HistoryURL()+"/a2a/default/longtalker/", caller, "JSONRPC", "send", "long over a2a")
		Expect([]any{r.Refused, r.State}).To(Equal([]any{"", "completed"}))
		Expect(r.Reply).To(Equal(long))
	})
})
