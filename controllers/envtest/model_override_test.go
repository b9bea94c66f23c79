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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// A spawn's model override, as sessions_spawn takes it, is what the provider is asked for:
// the request a real OpenAI-compatible server received names it.
var _ = Describe("a spawn's model override", func() {
	It("reaches the provider, from the tool call through the run and its child", func() {
		ns := newNamespace()
		model := newRecordingModel()
		DeferCleanup(model.Close)
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "carl", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			Model:         sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "carl-small", BaseURL: model.URL + "/v1"},
			AllowedModels: []string{"carl-large"},
		}})).To(Succeed())
		createAgent(ns, "lead", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip),
			toolRule("^delegate", "sessions_spawn", map[string]any{"task": "count the llamas", "agentId": "carl", "model": "carl-large"}))
		createSession(ns, "agent:lead:main", "lead")

		waitSend(createSend(ns, "agent:lead:main", "delegate", 30, ""), completed)
		var runs sessionsv1alpha1.SubagentRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))
		run := waitRun(&runs.Items[0], runCompleted)
		Expect(run.Spec.Model).To(Equal("carl-large"))
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		Expect(run.Status.Result).To(Equal("reply from carl-large"))
		calls := model.of("carl-large")
		Expect(calls).To(HaveLen(1))
		Expect(calls[0].input).To(Equal("count the llamas"))
		Expect(model.of("carl-small")).To(BeEmpty(), "the Agent's own model was asked instead")
	})
})
