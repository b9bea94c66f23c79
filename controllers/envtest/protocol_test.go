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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// recordedCall is one chat completion request as the model server saw it.
type recordedCall struct {
	model, system, input string
}

// recordingModel is an OpenAI-compatible chat completions server that records every request
// and answers by the turn's system context, as a model that follows it would: REPLY_SKIP on
// the last reply-back turn, ANNOUNCE_SKIP in an announce step, a short reply otherwise.
type recordingModel struct {
	*httptest.Server
	mu    sync.Mutex
	calls []recordedCall
}

func newRecordingModel() *recordingModel {
	m := &recordingModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c := recordedCall{model: req.Model}
		for _, msg := range req.Messages {
			if msg.Role == "system" {
				c.system = msg.Content
			}
		}
		if n := len(req.Messages); n > 0 {
			c.input = req.Messages[n-1].Content
		}
		m.mu.Lock()
		m.calls = append(m.calls, c)
		m.mu.Unlock()
		reply := "reply from " + req.Model
		switch {
		case strings.Contains(c.system, "announce step"):
			reply = sessionsv1alpha1.AnnounceSkip
		case strings.Contains(c.system, "(0 more turns after this one)"):
			reply = sessionsv1alpha1.ReplySkip
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, req.Model, reply)
	}))
	return m
}

// of returns the calls to model, in order.
func (m *recordingModel) of(model string) []recordedCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []recordedCall
	for _, c := range m.calls {
		if c.model == model {
			out = append(out, c)
		}
	}
	return out
}

// Every turn the operator starts tells a real model its role: the texts of internal/protocol
// reach the model in the system prompt of exactly their turn, and the transcript keeps them.
var _ = Describe("The protocol, taught to the model", func() {
	var ns string
	var model *recordingModel
	BeforeEach(func() {
		ns = newNamespace()
		model = newRecordingModel()
		DeferCleanup(model.Close)
		for _, name := range []string{"alice", "bob", "carl"} {
			Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
				SystemPrompt: "You are " + name + ".",
				Model:        sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: name + "-model", BaseURL: model.URL + "/v1"},
				Subagents:    sessionsv1alpha1.SubagentsSpec{AllowAgents: []string{"carl"}},
			}})).To(Succeed())
		}
		createSession(ns, "agent:alice:main", "alice")
		createSession(ns, "agent:bob:main", "bob")
	})

	It("tells both sides of every reply-back turn about REPLY_SKIP and the turns left", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](2)}})
		send := waitSend(createSend(ns, "agent:bob:main", "hello bob", 30, "agent:alice:main"), completed)
		Expect(send.Status.Turns).To(HaveLen(3), "round 1, alice's reply-back turn, bob's REPLY_SKIP")

		bob, alice := model.of("bob-model"), model.of("alice-model")
		Expect(bob).To(HaveLen(3), "round 1, reply-back turn 2, announce")
		Expect(alice).To(HaveLen(1), "reply-back turn 1")
		Expect(bob[0].system).To(Equal("You are bob.\n\n" + protocol.RoundOne("agent:alice:main")))
		Expect(bob[0].input).To(Equal("hello bob"))
		Expect(alice[0].system).To(Equal("You are alice.\n\n" + protocol.ReplyBack("agent:bob:main", 1, 2)))
		Expect(alice[0].input).To(Equal("reply from bob-model"))
		Expect(bob[1].system).To(Equal("You are bob.\n\n" + protocol.ReplyBack("agent:alice:main", 2, 2)))
		for _, c := range []recordedCall{alice[0], bob[1]} {
			Expect(c.system).To(ContainSubstring("reply exactly REPLY_SKIP to end the exchange"))
		}
		Expect(bob[2].system).To(Equal("You are bob.\n\n" + protocol.AgentAnnounce("agent:alice:main")))
		Expect(bob[2].input).To(HavePrefix("Agent-to-agent announce step."))

		// Each context is a system record of its turn, before that turn's input.
		var bobSession sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, "agent:bob:main"), &bobSession)).To(Succeed())
		Expect(systemTexts(allRecords(ns, &bobSession))).To(Equal([]string{
			protocol.RoundOne("agent:alice:main"), protocol.ReplyBack("agent:alice:main", 2, 2), protocol.AgentAnnounce("agent:alice:main"),
		}))
	})

	It("tells a sub-agent its task and the requester how to take its announce", func() {
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "count the llamas", Label: "llamas", AgentID: "carl",
			RequesterSessionKey: "agent:alice:main"}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))

		carl := model.of("carl-model")
		Expect(carl).To(HaveLen(1))
		Expect(carl[0].system).To(Equal("You are carl.\n\n" + protocol.SubagentTask("agent:alice:main", "llamas", nil)))
		Expect(carl[0].input).To(Equal("count the llamas"))
		Eventually(func() []recordedCall { return model.of("alice-model") }, testenv.Timeout, testenv.Interval).Should(HaveLen(1))
		alice := model.of("alice-model")[0]
		Expect(alice.system).To(Equal("You are alice.\n\n" + protocol.SubagentAnnounce(run.Status.ChildSessionKey)))
		Expect(alice.input).To(HavePrefix("Sub-agent announce step."))
	})
})

// systemTexts are the texts of a transcript's system records, in order.
func systemTexts(recs []transcript.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Message.Role == transcript.RoleSystem {
			out = append(out, r.Message.Content[0].Text)
		}
	}
	return out
}
