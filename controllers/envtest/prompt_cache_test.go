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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// newCachingModel is an Anthropic model with a prompt cache: it answers a compaction step
// with a summary and a turn with "ok", and reports as read from its cache 100 tokens for
// each cache breakpoint of the request.
func newCachingModel() *anthropicStub {
	return newAnthropicStub(func(body map[string]any) string {
		raw, _ := json.Marshal(body["messages"])
		reply := "ok"
		if strings.Contains(string(raw), turns.CompactionStepPrefix) {
			reply = "the summary"
		}
		prefix, _ := json.Marshal([]any{body["system"], body["tools"], body["messages"]})
		cached := 100 * strings.Count(string(prefix), `"cache_control"`)
		return fmt.Sprintf(`{"type":"message","model":"claude-test","content":[{"type":"text","text":%q}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":50,"cache_read_input_tokens":%d,"output_tokens":10}}`, reply, cached)
	})
}

// A long session's stable prefix is cached at Anthropic: the tools, the system prompt and
// the summary (the first message) end cached prefixes, and the tokens read from the cache
// are priced at cachedInputPerMillion on the session.
var _ = Describe("Prompt caching of a compacted session", func() {
	It("marks the tools, the system prompt and the summary as cache breakpoints and prices cached input", func() {
		ns := newNamespace()
		model := newCachingModel()
		DeferCleanup(model.Close)
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "anthropic",
			Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}}, StringData: map[string]string{"apiKey": "sk-test"}})).To(Succeed())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "cached", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			SystemPrompt: "You are cached.",
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderAnthropic, Name: "claude-test", BaseURL: model.URL,
				APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "anthropic"}, Key: "apiKey"},
				ContextTokens:   ptr.To[int64](compactionWindow),
				Pricing:         &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", CachedInputPerMillion: "0.3", Currency: "USD"}},
			Memory: sessionsv1alpha1.MemorySpec{Compaction: sessionsv1alpha1.CompactionSpec{TriggerRatio: ptr.To(0.5), KeepRecentMessages: ptr.To[int32](4)}},
		}})).To(Succeed())
		sess := createSession(ns, "agent:cached:main", "cached")
		seed(ns, sess, "old", 30)
		waitSend(createSend(ns, "agent:cached:main", "hello", 30, ""), completed)

		reqs := model.requests()
		Expect(reqs).To(HaveLen(2), "the compaction step, then the turn")
		ephemeral := map[string]any{"type": "ephemeral"}
		Expect(reqs[1]["system"]).To(Equal([]any{
			map[string]any{"type": "text", "text": "You are cached.", "cache_control": ephemeral}}))
		first := reqs[1]["messages"].([]any)[0].(map[string]any)
		Expect(first["role"]).To(Equal("user"))
		Expect(first["content"].([]any)[0]).To(Equal(map[string]any{"type": "text", "text": summaryPreamble + "the summary", "cache_control": ephemeral}),
			"the summary, the conversation's first message, ends the last cached prefix")
		tools := reqs[1]["tools"].([]any)
		Expect(tools[len(tools)-1]).To(HaveKeyWithValue("cache_control", ephemeral), "the tools end the first cached prefix")
		Expect(tools[0]).NotTo(HaveKey("cache_control"))

		// The step's request: its system prompt and no tools, so 100 cached tokens; the
		// turn's: tools, system prompt and summary, 300. Input counts the cached tokens too.
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
			g.Expect(sess.Status.Usage).NotTo(BeNil())
			g.Expect(sess.Status.Usage.CachedInputTokens).To(Equal(int64(400)))
			g.Expect(sess.Status.Usage.InputTokens).To(Equal(int64(500)))
			// (500-400)*3 + 400*0.3 + 20*15 = 720 per million.
			g.Expect(sess.Status.Usage.Cost).To(Equal("0.00072"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
