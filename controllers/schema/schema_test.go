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

package schema

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// newNamespace creates a fresh namespace so cases never see each other's objects.
func newNamespace() string {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName("schema-")
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.GetName()
}

// readSamples decodes every YAML document of config/samples/*.yaml except the kustomization.
func readSamples() []*unstructured.Unstructured {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "sessions_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			err := dec.Decode(&u.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			Expect(err).NotTo(HaveOccurred(), f)
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs
}

func validSession(ns string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", AgentID: "main"},
	}
}

func validSend(ns string) *sessionsv1alpha1.SessionSend {
	return &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{Name: "send", Namespace: ns},
		Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: "main", Message: "hi"},
	}
}

func validRun(ns string) *sessionsv1alpha1.SubagentRun {
	return &sessionsv1alpha1.SubagentRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: ns},
		Spec:       sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "research"},
	}
}

func validAgent(ns string) *sessionsv1alpha1.Agent {
	return &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: ns},
		Spec:       sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}},
	}
}

func validPolicy(ns string) *sessionsv1alpha1.SessionPolicy {
	return &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
}

var _ = Describe("the samples", func() {
	It("are all accepted", func() {
		ns := newNamespace()
		samples := readSamples()
		Expect(len(samples)).To(BeNumerically(">=", 7))
		for _, u := range samples {
			u.SetNamespace(ns)
			Expect(k8s.Create(ctx, u)).To(Succeed(), "%s/%s", u.GetKind(), u.GetName())
		}
	})
})

var _ = Describe("defaults", func() {
	It("are the seeds' defaults", func() {
		ns := newNamespace()
		send, run, agent, policy := validSend(ns), validRun(ns), validAgent(ns), validPolicy(ns)
		for _, o := range []client.Object{send, run, agent, policy} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Expect(send.Spec.TimeoutSeconds).To(Equal(ptr.To[int32](30)))
		Expect(run.Spec.Cleanup).To(Equal(sessionsv1alpha1.CleanupKeep))
		Expect(run.Spec.Sandbox).To(Equal(sessionsv1alpha1.SandboxInherit))
		Expect(agent.Spec.Subagents.ArchiveAfterMinutes).To(Equal(ptr.To[int32](60)))
		Expect(agent.Spec.Subagents.MaxSpawnDepth).To(Equal(ptr.To[int32](1)))
		Expect(agent.Spec.Subagents.MaxChildren).To(Equal(ptr.To[int32](5)))
		Expect(agent.Spec.Sandbox.SessionToolsVisibility).To(Equal(sessionsv1alpha1.ToolsVisibilitySpawned))
		Expect(policy.Spec.AgentToAgent.MaxPingPongTurns).To(Equal(ptr.To[int32](5)))
		Expect(policy.Spec.Visibility).To(Equal(sessionsv1alpha1.VisibilityTree))
	})

	It("keep an explicit fire-and-forget timeout of 0", func() {
		send := validSend(newNamespace())
		send.Spec.TimeoutSeconds = ptr.To[int32](0)
		Expect(k8s.Create(ctx, send)).To(Succeed())
		Expect(send.Spec.TimeoutSeconds).To(Equal(ptr.To[int32](0)))
	})
})

// invalidCreate is an object the API server must refuse, and a piece of the message it gives.
type invalidCreate struct {
	obj  func(ns string) client.Object
	want string
}

var _ = DescribeTable("invalid objects are rejected on create",
	func(c invalidCreate) {
		err := k8s.Create(ctx, c.obj(newNamespace()))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring(c.want))
	},
	Entry("session: chatType outside the enum", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.ChatType = "channel"
		return s
	}, `spec.chatType: Unsupported value: "channel"`}),
	Entry("session: channel outside the enum", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.Channel = "myspace"
		return s
	}, `spec.channel: Unsupported value: "myspace"`}),
	Entry("session: sendPolicy outside the enum", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.SendPolicy = "inherit"
		return s
	}, `spec.sendPolicy: Unsupported value: "inherit"`}),
	Entry("session: key missing", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.Key = ""
		return s
	}, "spec.key"}),
	Entry("session: agentId not an agent id", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.AgentID = "Main Agent"
		return s
	}, "spec.agentId"}),
	Entry("session: parentSessionKey without spawnedBy", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.ParentSessionKey = "agent:main:main"
		return s
	}, "parentSessionKey requires spawnedBy"}),
	Entry("send: negative timeoutSeconds", invalidCreate{func(ns string) client.Object {
		s := validSend(ns)
		s.Spec.TimeoutSeconds = ptr.To[int32](-1)
		return s
	}, "spec.timeoutSeconds: Invalid value: -1"}),
	Entry("send: message missing", invalidCreate{func(ns string) client.Object {
		s := validSend(ns)
		s.Spec.Message = ""
		return s
	}, "spec.message"}),
	Entry("send: sessionKey missing", invalidCreate{func(ns string) client.Object {
		s := validSend(ns)
		s.Spec.SessionKey = ""
		return s
	}, "spec.sessionKey"}),
	Entry("spawn: cleanup outside the enum", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Cleanup = "archive"
		return r
	}, `spec.cleanup: Unsupported value: "archive"`}),
	Entry("spawn: sandbox outside the enum", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Sandbox = "never"
		return r
	}, `spec.sandbox: Unsupported value: "never"`}),
	Entry("spawn: mode session without thread", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Mode = sessionsv1alpha1.ModeSession
		return r
	}, "mode session requires thread: true"}),
	Entry("spawn: thinking outside the levels", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Thinking = "max"
		return r
	}, `spec.thinking: Unsupported value: "max": supported values: "off", "minimal", "low", "medium", "high", "xhigh"`}),
	Entry("session: thinkingLevel outside the levels", invalidCreate{func(ns string) client.Object {
		s := validSession(ns)
		s.Spec.ThinkingLevel = "extreme"
		return s
	}, `spec.thinkingLevel: Unsupported value: "extreme": supported values: "off", "minimal", "low", "medium", "high", "xhigh"`}),
	Entry("policy: defaultAgentId not an agent id", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Spec.DefaultAgentID = "Research Agent"
		return p
	}, "spec.defaultAgentId"}),
	Entry("spawn: negative runTimeoutSeconds", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.RunTimeoutSeconds = ptr.To[int32](-5)
		return r
	}, "spec.runTimeoutSeconds"}),
	Entry("spawn: attachment encoding outside the enum", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Attachments = []sessionsv1alpha1.Attachment{{Name: "a", Content: "x", Encoding: "hex"}}
		return r
	}, `spec.attachments[0].encoding: Unsupported value: "hex"`}),
	Entry("spawn: task missing", invalidCreate{func(ns string) client.Object {
		r := validRun(ns)
		r.Spec.Task = ""
		return r
	}, "spec.task"}),
	Entry("policy: maxPingPongTurns above 5", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Spec.AgentToAgent.MaxPingPongTurns = ptr.To[int32](6)
		return p
	}, "spec.agentToAgent.maxPingPongTurns: Invalid value: 6"}),
	Entry("policy: visibility outside the enum", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Spec.Visibility = "world"
		return p
	}, `spec.visibility: Unsupported value: "world"`}),
	Entry("policy: not named default", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Name = "strict"
		return p
	}, "it is named default"}),
	Entry("policy: rule action outside the enum", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Spec.SendPolicy.Rules = []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord"}, Action: "maybe"}}
		return p
	}, `spec.sendPolicy.rules[0].action: Unsupported value: "maybe"`}),
	Entry("policy: rule matching nothing", invalidCreate{func(ns string) client.Object {
		p := validPolicy(ns)
		p.Spec.SendPolicy.Rules = []sessionsv1alpha1.SendRule{{Action: sessionsv1alpha1.ActionDeny}}
		return p
	}, "a match needs at least one of channel, chatType, keyPrefix"}),
	Entry("agent: provider outside the enum", invalidCreate{func(ns string) client.Object {
		a := validAgent(ns)
		a.Spec.Model.Provider = "gemini"
		return a
	}, `spec.model.provider: Unsupported value: "gemini"`}),
	Entry("agent: openai without a model name", invalidCreate{func(ns string) client.Object {
		a := validAgent(ns)
		a.Spec.Model.Provider = sessionsv1alpha1.ProviderOpenAI
		return a
	}, "name is required for the openai and anthropic providers"}),
	Entry("agent: archiveAfterMinutes of 0", invalidCreate{func(ns string) client.Object {
		a := validAgent(ns)
		a.Spec.Subagents.ArchiveAfterMinutes = ptr.To[int32](0)
		return a
	}, "spec.subagents.archiveAfterMinutes: Invalid value: 0"}),
	Entry("agent: name that is not an agent id", invalidCreate{func(ns string) client.Object {
		a := validAgent(ns)
		a.Name = "main.v2"
		return a
	}, "metadata.name is the agent id"}),
)

var _ = Describe("immutable fields", func() {
	It("refuse a change of AgentSession spec.key but allow other fields", func() {
		s := validSession(newNamespace())
		Expect(k8s.Create(ctx, s)).To(Succeed())
		s.Spec.DisplayName = "renamed"
		Expect(k8s.Update(ctx, s)).To(Succeed())
		s.Spec.Key = "agent:main:other"
		err := k8s.Update(ctx, s)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.key is immutable"))
	})

	It("refuse any change of a SessionSend spec but cancel, which only goes false to true", func() {
		s := validSend(newNamespace())
		Expect(k8s.Create(ctx, s)).To(Succeed())
		for name, change := range map[string]func(*sessionsv1alpha1.SessionSend){
			"message":                 func(s *sessionsv1alpha1.SessionSend) { s.Spec.Message = "changed" },
			"fromSessionKey added":    func(s *sessionsv1alpha1.SessionSend) { s.Spec.FromSessionKey = "agent:x:main" },
			"ttlSecondsAfterFinished": func(s *sessionsv1alpha1.SessionSend) { s.Spec.TTLSecondsAfterFinished = ptr.To[int32](5) },
		} {
			changed := s.DeepCopy()
			change(changed)
			err := k8s.Update(ctx, changed)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: got %v", name, err)
			Expect(err.Error()).To(ContainSubstring("spec is immutable but for cancel; create a new SessionSend"), name)
		}
		s.Spec.Cancel = true
		Expect(k8s.Update(ctx, s)).To(Succeed())
		s.Spec.Cancel = false
		err := k8s.Update(ctx, s)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.cancel cannot go back to false"))
	})

	It("refuse any change of a SubagentRun spec but cancel, which only goes false to true", func() {
		ns := newNamespace()
		r := validRun(ns)
		Expect(k8s.Create(ctx, r)).To(Succeed())
		// Every field the rules hold, set, so that each field's own rule is asked too.
		full := validRun(ns)
		full.Name = "full"
		full.Spec = sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "research", Label: "l", Model: "m",
			Thinking: sessionsv1alpha1.ThinkingLow, RunTimeoutSeconds: ptr.To[int32](5), Thread: true,
			Mode: sessionsv1alpha1.ModeSession, Cleanup: sessionsv1alpha1.CleanupKeep, Sandbox: sessionsv1alpha1.SandboxInherit,
			Attachments:         []sessionsv1alpha1.Attachment{{Name: "a.txt", Content: "x"}},
			RequesterSessionKey: "agent:main:main", TTLSecondsAfterFinished: ptr.To[int32](5),
			Budget: &sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](100)}}
		Expect(k8s.Create(ctx, full)).To(Succeed())
		type change struct {
			of   *sessionsv1alpha1.SubagentRun
			edit func(*sessionsv1alpha1.SubagentRunSpec)
			says string
		}
		const immutable, budget = "spec is immutable but for cancel; create a new SubagentRun", "spec.budget is immutable; create a new SubagentRun"
		for name, c := range map[string]change{
			"task":                      {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Task = "another task" }, immutable},
			"label added":               {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Label = "l" }, immutable},
			"label changed":             {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Label = "m" }, immutable},
			"label removed":             {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Label = "" }, immutable},
			"agentId changed":           {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.AgentID = "ops" }, immutable},
			"agentId removed":           {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.AgentID = "" }, immutable},
			"model added":               {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Model = "m" }, immutable},
			"model changed":             {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Model = "n" }, immutable},
			"thinking added":            {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Thinking = sessionsv1alpha1.ThinkingHigh }, immutable},
			"thinking changed":          {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Thinking = sessionsv1alpha1.ThinkingHigh }, immutable},
			"runTimeoutSeconds":         {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.RunTimeoutSeconds = ptr.To[int32](9) }, immutable},
			"runTimeoutSeconds changed": {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.RunTimeoutSeconds = ptr.To[int32](9) }, immutable},
			"thread added":              {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Thread = true }, immutable},
			"mode added":                {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Mode = sessionsv1alpha1.ModeRun }, immutable},
			"mode changed":              {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Mode = sessionsv1alpha1.ModeRun }, immutable},
			"cleanup changed":           {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Cleanup = sessionsv1alpha1.CleanupDelete }, immutable},
			"sandbox changed":           {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Sandbox = sessionsv1alpha1.SandboxRequire }, immutable},
			"attachments added": {r, func(s *sessionsv1alpha1.SubagentRunSpec) {
				s.Attachments = []sessionsv1alpha1.Attachment{{Name: "a.txt", Content: "x"}}
			}, immutable},
			"attachments changed": {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Attachments[0].Content = "y" }, immutable},
			"requester":           {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.RequesterSessionKey = "agent:x:main" }, immutable},
			"requester changed":   {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.RequesterSessionKey = "agent:x:main" }, immutable},
			"ttl after finished":  {r, func(s *sessionsv1alpha1.SubagentRunSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](5) }, immutable},
			"ttl changed":         {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](6) }, immutable},
			"budget added": {r, func(s *sessionsv1alpha1.SubagentRunSpec) {
				s.Budget = &sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](1)}
			}, budget},
			"budget changed": {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Budget.MaxTokens = ptr.To[int64](1) }, budget},
			"budget removed": {full, func(s *sessionsv1alpha1.SubagentRunSpec) { s.Budget = nil }, budget},
		} {
			changed := c.of.DeepCopy()
			c.edit(&changed.Spec)
			err := k8s.Update(ctx, changed)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: got %v", name, err)
			Expect(err.Error()).To(ContainSubstring(c.says), name)
		}
		r.Spec.Cancel = true
		Expect(k8s.Update(ctx, r)).To(Succeed())
		r.Spec.Cancel = false
		err := k8s.Update(ctx, r)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.cancel cannot go back to false"))
	})
})

var _ = Describe("status words", func() {
	It("refuse a SubagentRun status.status other than accepted", func() {
		r := validRun(newNamespace())
		Expect(k8s.Create(ctx, r)).To(Succeed())
		r.Status.Status = "done"
		err := k8s.Status().Update(ctx, r)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring(`status.status: Unsupported value: "done"`))
		r.Status.Status = sessionsv1alpha1.SpawnAccepted
		Expect(k8s.Status().Update(ctx, r)).To(Succeed())
	})
})
