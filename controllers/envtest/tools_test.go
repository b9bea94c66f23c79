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

package envtest

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// toolRule makes the scripted agent call a tool on inputs matching match and answer with
// the tool's result.
func toolRule(match, tool string, args map[string]any) sessionsv1alpha1.ScriptRule {
	b, err := json.Marshal(args)
	Expect(err).NotTo(HaveOccurred())
	return sessionsv1alpha1.ScriptRule{Match: match, ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: tool, Arguments: &runtime.RawExtension{Raw: b}}}, Reply: "{{toolResults}}"}
}

// toolResult is the result the turn's tool call got, decoded.
func toolResult(recs []ptrRecord) map[string]any {
	for _, r := range recs {
		if r.Message.Role == transcript.RoleToolResult {
			var out map[string]any
			Expect(json.Unmarshal([]byte(r.Message.Content[0].Text), &out)).To(Succeed())
			return out
		}
	}
	Fail("no tool result in the transcript")
	return nil
}

type ptrRecord = transcript.Record

var _ = Describe("the session tools, called by an agent", func() {
	var ns string
	var alice *sessionsv1alpha1.AgentSession
	BeforeEach(func() {
		ns = newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityAll,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](0)}})
		createAgent(ns, "alice",
			rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip),
			rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip),
			toolRule("^list", "sessions_list", map[string]any{"kinds": []string{"main"}}),
			toolRule("^history", "sessions_history", map[string]any{"sessionKey": "agent:bob:main", "limit": 10}),
			toolRule("^send", "sessions_send", map[string]any{"sessionKey": "agent:bob:main", "message": "ping", "timeoutSeconds": 30}),
			toolRule("^spawn", "sessions_spawn", map[string]any{"task": "look up llamas", "agentId": "bob", "label": "llamas",
				"attachments": []map[string]any{{"name": "notes.txt", "content": "hello"}}}),
			toolRule("^agents", "agents_list", map[string]any{}),
			toolRule("^recent", "sessions_list", map[string]any{"kinds": []string{"main"}, "messageLimit": 4}),
			toolRule("^to myself", "sessions_send", map[string]any{"sessionKey": "main", "message": "hi me", "timeoutSeconds": 30}),
		)
		createAgent(ns, "bob", rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip), rule("^ping", "pong"), rule("^look", "llamas hum"))
		alice = createSession(ns, "agent:alice:main", "alice")
		createSession(ns, "agent:bob:main", "bob")
	})

	// ask sends text to alice as a person would and returns her transcript records of that turn.
	ask := func(text string) []ptrRecord {
		before := len(messages(ns, alice))
		waitSend(createSend(ns, "agent:alice:main", text, 60, ""), completed)
		return messages(ns, alice)[before:]
	}

	It("sessions_list lists the visible sessions in the seeds' row shape", func() {
		res := toolResult(ask("list"))
		Expect(res["count"]).To(BeNumerically("==", 2))
		rows := res["sessions"].([]any)
		keys := []string{rows[0].(map[string]any)["key"].(string), rows[1].(map[string]any)["key"].(string)}
		Expect(keys).To(ConsistOf("agent:alice:main", "agent:bob:main"))
		Expect(rows[0]).To(HaveKey("sessionId"))
		Expect(rows[0]).To(HaveKeyWithValue("kind", "main"))
	})

	It("sessions_list with messageLimit > 0 gives each row its last messages, without tool results", func() {
		ask("send") // bob has messages; alice has tool results among her last ones
		res := toolResult(ask("recent"))
		rows := map[string][]any{}
		for _, r := range res["sessions"].([]any) {
			row := r.(map[string]any)
			Expect(row).To(HaveKey("messages"), "row %s", row["key"])
			rows[row["key"].(string)] = row["messages"].([]any)
		}
		Expect(rows).To(HaveLen(2))

		var bob sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, "agent:bob:main"), &bob)).To(Succeed())
		page, err := store.Read(ctx, ns, bob.Status.SessionID, transcript.ReadOptions{Limit: 4})
		Expect(err).NotTo(HaveOccurred())
		b, err := json.Marshal(page.Messages)
		Expect(err).NotTo(HaveOccurred())
		var want []any
		Expect(json.Unmarshal(b, &want)).To(Succeed())
		Expect(rows["agent:bob:main"]).To(Equal(want))

		Expect(rows["agent:alice:main"]).To(HaveLen(4))
		for _, m := range rows["agent:alice:main"] {
			Expect(m.(map[string]any)["message"]).NotTo(HaveKeyWithValue("role", transcript.RoleToolResult))
		}
	})

	It("sessions_send into the caller's own session is refused at once, with no send created", func() {
		res := toolResult(ask("to myself"))
		Expect(res).To(HaveKeyWithValue("status", Not(Equal("ok"))))
		Expect(res["error"]).To(ContainSubstring("this session itself"))
		var sends sessionsv1alpha1.SessionSendList
		Expect(k8s.List(ctx, &sends, client.InNamespace(ns))).To(Succeed())
		for _, s := range sends.Items {
			Expect(s.Spec.FromSessionKey).To(BeEmpty(), "a send from alice was created: %+v", s.Spec)
		}
	})

	It("sessions_send waits for the reply and returns ok", func() {
		res := toolResult(ask("send"))
		Expect(res).To(HaveKeyWithValue("status", "ok"))
		Expect(res).To(HaveKeyWithValue("reply", "pong"))
		Expect(res["runId"]).To(HaveSuffix("/round-1"))
		var sends sessionsv1alpha1.SessionSendList
		Expect(k8s.List(ctx, &sends, client.InNamespace(ns))).To(Succeed())
		var fromAlice []sessionsv1alpha1.SessionSend
		for _, s := range sends.Items {
			if s.Spec.FromSessionKey == "agent:alice:main" {
				fromAlice = append(fromAlice, s)
			}
		}
		Expect(fromAlice).To(HaveLen(1))
		Expect(fromAlice[0].Status.Reply).To(Equal("pong"))
	})

	It("sessions_history reads another session's transcript", func() {
		ask("send")
		res := toolResult(ask("history"))
		Expect(res).To(HaveKeyWithValue("sessionKey", "agent:bob:main"))
		msgs := res["messages"].([]any)
		Expect(msgs).NotTo(BeEmpty())
		first := msgs[0].(map[string]any)["message"].(map[string]any)
		Expect(first["provenance"]).To(HaveKeyWithValue("kind", "inter_session"))
		Expect(first["provenance"]).To(HaveKeyWithValue("sourceSessionKey", "agent:alice:main"))
	})

	It("sessions_spawn creates a SubagentRun and returns at once with the child's key", func() {
		res := toolResult(ask("spawn"))
		Expect(res).To(HaveKeyWithValue("status", "accepted"))
		// The seeds' receipt, at once: the child will find the file with this size and hash.
		Expect(res["attachments"]).To(Equal([]any{map[string]any{"name": "notes.txt", "bytes": float64(5),
			"sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}}))
		child := res["childSessionKey"].(string)
		Expect(child).To(HavePrefix("agent:bob:subagent:"))
		var runs sessionsv1alpha1.SubagentRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))
		run := &runs.Items[0]
		Expect(run.Spec.RequesterSessionKey).To(Equal("agent:alice:main"))
		Expect(string(run.UID)).To(Equal(res["runId"]))
		waitRun(run, runCompleted)
		Expect(run.Status.ChildSessionKey).To(Equal(child))
		Expect(run.Status.Result).To(Equal("llamas hum"))
	})

	It("agents_list lists the agents this agent may spawn", func() {
		res := toolResult(ask("agents"))
		Expect(res["agents"]).To(Equal([]any{"alice"}))
	})
})
