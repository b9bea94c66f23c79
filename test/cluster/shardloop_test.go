//go:build cluster

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

package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

// pairBound is the most SessionSends an A→B→A pair makes in one cluster with the default
// maxPairRepeats of 2 (controllers/envtest/storm): the person's send included.
const pairBound = 5

// loopAgentYAML is an Agent of ns that calls its remote A2A agent "peer" (peerNS's agent
// peerName, through the operator's own history Service, which any shard fronts) on every
// input, with the door token of the Secret door-token, and its main session.
func loopAgentYAML(ns, name, peerNS, peerName string) string {
	return fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: Agent
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  model:
    provider: scripted
    script:
    - match: "^"
      reply: "{{toolResults}}"
      toolCalls: [{name: a2a__peer, arguments: {message: "{{input}}"}}]
  tools:
    a2aAgents:
    - name: peer
      url: https://%[5]s.%[6]s.svc:8090/a2a/%[3]s/%[4]s
      headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: door-token, key: authorization}}}]
---
apiVersion: sessions.agents.dev/v1alpha1
kind: AgentSession
metadata: {name: %[2]s-main, namespace: %[1]s}
spec: {key: "agent:%[2]s:main", agentId: %[2]s, chatType: direct}
`, ns, name, peerNS, peerName, historySvc, operatorNS)
}

// shardLoop: two Agents on different shards whose A2A tools call each other through the
// operator's own doors, one person's send to start, stop within the limits the same pair
// has in one cluster: the chain crossed the wire between the shards and was carried.
func shardLoop(ctx context.Context, t *testing.T, ns0, ns1 string) {
	t.Helper()
	token := serviceAccountToken(ctx, t, "loop-caller", "cluster-admin", historyAudience)
	for _, ns := range []string{ns0, ns1} {
		apply(ctx, t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: door-token, namespace: %s, labels: {sessions.agents.dev/agent-usable: "true"}}
stringData: {authorization: "Bearer %s"}
`, ns, token))
	}
	apply(ctx, t, loopAgentYAML(ns0, "ping", ns1, "pong")+"---\n"+loopAgentYAML(ns1, "pong", ns0, "ping"))
	for _, a := range [][2]string{{ns0, "ping"}, {ns1, "pong"}} {
		kubectl(ctx, t, "-n", a[0], "wait", "--for=condition=Ready", "agent/"+a[1], "--timeout="+objectTimeout.String())
	}
	apply(ctx, t, fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata: {name: loop-seed, namespace: %s}
spec: {sessionKey: "agent:ping:main", message: "go round", timeoutSeconds: 0}
`, ns0))
	// The storm is over when every send of both namespaces finished and the count held.
	var sends []string
	last := -1
	if err := harness.Poll(ctx, rolloutTimeout, "the loop across the shards to stop", func() error {
		sends = nil
		running := 0
		for _, ns := range []string{ns0, ns1} {
			out, err := cl.Kubectl(ctx, "-n", ns, "get", "sessionsends", "-o", `jsonpath={range .items[*]}{.metadata.name}{"|"}{.status.completedAt}{"\n"}{end}`)
			if err != nil {
				return err
			}
			for _, line := range strings.Fields(out) {
				name, done, _ := strings.Cut(line, "|")
				if strings.HasPrefix(name, "first") || name == "second" || name == "slow" || name == "during" {
					continue // twoShards' own sends
				}
				sends = append(sends, ns+"/"+name)
				if done == "" {
					running++
				}
			}
		}
		if n := len(sends); running > 0 || n != last {
			last = n
			return fmt.Errorf("%d sends, %d running", n, running)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("a ping-pong loop across the shards stopped at %d SessionSends (bound %d): %v", len(sends), pairBound, sends)
	if len(sends) > pairBound || len(sends) <= 2 {
		t.Errorf("%d SessionSends, want more than 2 (the loop crossed between the shards) and at most %d", len(sends), pairBound)
	}
	var replies []string
	carried := 0
	for _, s := range sends {
		ns, name, _ := strings.Cut(s, "/")
		out := kubectl(ctx, t, "-n", ns, "get", "sessionsend/"+name, "-o",
			`jsonpath={.metadata.annotations.sessions\.agents\.dev/carried-chain}{"|"}{.status.reply}{.status.error}`)
		chain, reply, _ := strings.Cut(out, "|")
		if chain != "" {
			carried++
		}
		replies = append(replies, reply)
	}
	text := strings.Join(replies, "\n")
	if carried != len(sends)-1 || !strings.Contains(text, "chain limit reached") || !strings.Contains(text, "crossed the wire") {
		t.Errorf("%d of %d sends carried the chain; replies: %s", carried, len(sends), text)
	}
	events := kubectl(ctx, t, "-n", ns0, "get", "events", "--field-selector", "involvedObject.name=loop-seed,reason=ChainLimitReached", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(events, "spec.limits.") {
		t.Errorf("the seed's ChainLimitReached Events: %q", events)
	}
	t.Logf("seed %s/loop-seed told: %s", ns0, strconv.Quote(events))
}
