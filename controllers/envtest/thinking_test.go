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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// anthropicStub is an Anthropic Messages server that keeps every request body it received
// and answers each with the response JSON answer makes of it.
type anthropicStub struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newAnthropicStub(answer func(body map[string]any) string) *anthropicStub {
	m := &anthropicStub{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.bodies = append(m.bodies, body)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer(body)))
	}))
	return m
}

func (m *anthropicStub) requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.bodies...)
}

// newThinkingModel is a model that thinks before it acts: its first answer is a signed
// thinking block and a workspace_list call, its answer to the tool's result is "done".
func newThinkingModel() *anthropicStub {
	return newAnthropicStub(func(body map[string]any) string {
		raw, _ := json.Marshal(body["messages"])
		if strings.Contains(string(raw), `"tool_result"`) {
			return `{"type":"message","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":30,"output_tokens":2}}`
		}
		return `{"type":"message","model":"m","content":[
			{"type":"thinking","thinking":"I should list the workspace.","signature":"sig-1"},
			{"type":"tool_use","id":"toolu_1","name":"workspace_list","input":{}}],
			"stop_reason":"tool_use","usage":{"input_tokens":20,"output_tokens":40}}`
	})
}

// A spawn's thinking level reaches the model as the provider's setting (Anthropic: an
// extended-thinking budget within max_tokens), the model's signed thinking goes back to it
// within the tool loop, and the transcript records the level of each model call.
var _ = Describe("The thinking level of a spawn", func() {
	It("reaches an Anthropic model as a thinking budget and is recorded on the turn", func() {
		ns := newNamespace()
		model := newThinkingModel()
		DeferCleanup(model.Close)
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthropic",
			Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}}, StringData: map[string]string{"apiKey": "sk-test"}})).To(Succeed())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "thinker", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderAnthropic, Name: "claude-test", BaseURL: model.URL,
				APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "anthropic"}, Key: "apiKey"}},
		}})).To(Succeed())
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look around", AgentID: "thinker", Thinking: sessionsv1alpha1.ThinkingHigh}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded), "%+v", run.Status)
		Expect(run.Status.Result).To(Equal("done"))

		reqs := model.requests()
		Expect(reqs).To(HaveLen(2), "the tool call, then the answer to its result")
		for _, body := range reqs {
			Expect(body["thinking"]).To(Equal(map[string]any{"type": "enabled", "budget_tokens": float64(16384)}))
			Expect(body["max_tokens"]).To(BeNumerically(">", 16384))
		}
		msgs := reqs[1]["messages"].([]any)
		var assistant map[string]any
		for _, m := range msgs {
			if mm := m.(map[string]any); mm["role"] == "assistant" {
				assistant = mm
			}
		}
		Expect(assistant).NotTo(BeNil(), "the second call carries the first answer")
		Expect(assistant["content"].([]any)[0]).To(Equal(map[string]any{
			"type": "thinking", "thinking": "I should list the workspace.", "signature": "sig-1"}))

		child := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), child)).To(Succeed())
		var levels []string
		var thought []transcript.ContentBlock
		for _, r := range messages(ns, child) {
			if r.Message.Role != transcript.RoleAssistant {
				continue
			}
			levels = append(levels, r.Message.ThinkingLevel)
			for _, b := range r.Message.Content {
				if b.Type == transcript.BlockThinking {
					thought = append(thought, b)
				}
			}
		}
		Expect(levels).To(Equal([]string{"high", "high"}))
		Expect(thought).To(Equal([]transcript.ContentBlock{{Type: transcript.BlockThinking,
			Thinking: "I should list the workspace.", ThinkingSignature: "sig-1"}}))
	})
})
