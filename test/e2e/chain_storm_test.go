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
	"crypto/tls"
	"fmt"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/envtest/storm"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

// The storms of the envtest storm suite, on the binaries make run-local runs: each agent's
// A2A or MCP tool calls this cluster's own /a2a or /mcp door with a ServiceAccount's token,
// and the manager trusts the doors' certificate as it trusts any of its CA's (ca.crt of its
// webhook certificate directory), as in an install.
var _ = Describe("loops through the doors of make run-local", Ordered, func() {
	var storms *storm.Cluster
	BeforeAll(func() {
		cl, err := client.New(cluster.Config, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		storms = &storm.Cluster{Client: cl, Config: cluster.Config, Doors: cluster.HistoryURL()}
	})

	It("stops two Agents whose A2A tools call each other's /a2a at the pair limit", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, storm.A2APeer(storms.Doors), "a", "b")
		// The seed, then a→b and b→a twice each, as in one cluster.
		storms.ExpectStoppedAcrossWire("e2e A2A pair storm", seed, sends, 5, policy.LimitMaxPairRepeats)
	})

	It("stops a triangle of Agents calling on through /a2a at the pair limit", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, storm.A2APeer(storms.Doors), "a", "b", "c")
		storms.ExpectStoppedAcrossWire("e2e A2A triangle storm", seed, sends, 7, policy.LimitMaxPairRepeats)
	})

	It("stops two Agents whose MCP tools send each other through /mcp sessions_send at the pair limit", func() {
		seed, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, storms.MCPPeer, "a", "b")
		storms.ExpectStoppedAcrossWire("e2e MCP pair storm", seed, sends, 5, policy.LimitMaxPairRepeats)
	})

	It("stops two Agents calling each other through an A2A peer that strips the extension at the doors' backstop", func() {
		// The relay is a local peer the manager may call: it serves a certificate of the
		// cluster's CA, and trusts that CA to reach the doors.
		dir := filepath.Dir(cluster.HistoryCAFile)
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
		Expect(err).NotTo(HaveOccurred())
		relay := storms.StrippingRelay(&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, historyClient().Transport)
		_, sends := storms.StormOf(&sessionsv1alpha1.SessionPolicySpec{}, storms.DoorCaller, storm.A2APeer(relay), "a", "b")
		storm.ExpectStoppedAtBackstop("e2e A2A pair storm through a stripping relay", sends)
	})

	It("refuses an outside MCP client's sessions_send loop carrying the chain at the pair limit, marked in _meta", func() {
		ns := storms.RingOf(&sessionsv1alpha1.SessionPolicySpec{}, nil, quiet, "a", "b")
		cs, err := benchfig.ConnectMCP(ctx, cluster.MCPURL(ns), storms.TokenOf(ns, "outside"), cluster.HistoryCAFile)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = cs.Close() }()

		// The client relays as both ends of an a↔b loop would: each call one hop further
		// in one chain, the caller-to-target pairs alternating.
		var carried *policy.CarriedChain
		admitted, limit, text := 0, "", ""
		for i := range 20 {
			from, to := "outside/a", sessionkey.MainKey("b")
			if i%2 == 1 {
				from, to = "outside/b", sessionkey.MainKey("a")
			}
			carried = policy.NextCarried(carried, "outside-"+ns, 1, from, to, nil, nil)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions_send", Meta: mcp.Meta{policy.ChainMetaKey: carried},
				Arguments: map[string]any{"sessionKey": to, "message": fmt.Sprintf("lap %d", i), "timeoutSeconds": 0}})
			Expect(err).NotTo(HaveOccurred())
			if limit = policy.RefusedLimit(res.Meta[policy.ChainMetaKey]); limit != "" {
				Expect(res.IsError).To(BeTrue())
				text = benchfig.ToolText(res)
				break
			}
			Expect(res.IsError).To(BeFalse(), benchfig.ToolText(res))
			admitted++
		}
		GinkgoWriter.Printf("e2e MCP sessions_send loop from outside: %d sends admitted, refused at %q\n", admitted, limit)
		AddReportEntry("e2e MCP sessions_send loop from outside", fmt.Sprintf("%d sends admitted", admitted))
		Expect(limit).To(Equal(policy.LimitMaxPairRepeats), "_meta[%q].refused.limit", policy.ChainMetaKey)
		Expect(text).To(ContainSubstring("spec.limits.maxPairRepeats"))
		Expect(text).To(ContainSubstring("crossed the wire"))
		// a→b and b→a twice each: the pair's in-cluster count without its seed.
		Expect(admitted).To(Equal(4))
		sends := storms.Settle(ns, nil)
		Expect(sends).To(HaveLen(admitted), "a refused call made no send")
		for _, s := range sends {
			c, err := policy.CarriedOf(s.Annotations)
			Expect(err).NotTo(HaveOccurred())
			Expect(c).NotTo(BeNil(), "send %s carries no chain", s.Name)
			Expect(c.ID).To(Equal("outside-"+ns), "send %s", s.Name)
		}
	})

	It("stops a run tree delegating over /a2a at its perRun budget, counting both sides' turns", func() {
		run, turns, sends := storms.RunTreeOverA2A(storms.Doors, 4)
		GinkgoWriter.Printf("e2e run tree over A2A: run %s (%s), its own usage %+v; %d turns on both sides, %d door-made sends\n",
			run.Status.Phase, reasonOf(run.Status.Conditions), run.Status.Usage, turns, len(sends))
		// The run's turn and three door-made sends' turns make its four.
		Expect(sends).To(HaveLen(3))
	})
})

// quiet is an agent that notes every input and calls nothing.
func quiet(string, string, string) *sessionsv1alpha1.Agent {
	return &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted,
		Script: []sessionsv1alpha1.ScriptRule{{Match: "^", Reply: "noted"}}}}}
}

// reasonOf is the reason of the condition that finished an object, "" without one.
func reasonOf(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Status == metav1.ConditionTrue && (c.Type == sessionsv1alpha1.ConditionFailed || c.Type == sessionsv1alpha1.ConditionCompleted) {
			return c.Reason
		}
	}
	return ""
}
