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

package policy

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func agent(mut ...func(*sessionsv1alpha1.Agent)) *sessionsv1alpha1.Agent {
	a := &sessionsv1alpha1.Agent{}
	for _, m := range mut {
		m(a)
	}
	return a
}

func spawnInput(mut ...func(*SpawnInput)) SpawnInput {
	in := SpawnInput{
		Spec:           &sessionsv1alpha1.SubagentRunSpec{Task: "t"},
		Requester:      session("agent:main:main", func(s *sessionsv1alpha1.AgentSession) { s.Spec.AgentID = "main" }),
		RequesterAgent: agent(),
		TargetID:       "main",
		Target:         agent(),
		Limits:         LimitsFor(nil),
	}
	for _, m := range mut {
		m(&in)
	}
	return in
}

// errorsOf reduces a field.ErrorList to "type field" strings plus the detail, for tables.
func errorsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestCheckSpawn(t *testing.T) {
	cases := map[string]struct {
		in         SpawnInput
		want       []string
		wantDetail string
	}{
		"own agent is always allowed": {in: spawnInput()},
		"bad agent id": {
			in:   spawnInput(func(in *SpawnInput) { in.TargetID = "Bad_Agent" }),
			want: []string{"FieldValueInvalid spec.agentId"},
		},
		"unknown target agent": {
			in:   spawnInput(func(in *SpawnInput) { in.Target = nil }),
			want: []string{"FieldValueNotFound spec.agentId"},
		},
		"unknown other agent: no allowAgents hint": {
			in:         spawnInput(func(in *SpawnInput) { in.TargetID, in.Target = "ghost", nil }),
			want:       []string{"FieldValueNotFound spec.agentId"},
			wantDetail: "Agent ghost does not exist in this namespace",
		},
		"other agent not in allowAgents": {
			in:         spawnInput(func(in *SpawnInput) { in.TargetID = "research" }),
			want:       []string{"FieldValueForbidden spec.agentId"},
			wantDetail: `add "research" (or "*") to Agent main spec.subagents.allowAgents`,
		},
		"other agent allowed by name": {
			in: spawnInput(func(in *SpawnInput) {
				in.TargetID = "research"
				in.RequesterAgent.Spec.Subagents.AllowAgents = []string{"research"}
			}),
		},
		"star allows any agent": {
			in: spawnInput(func(in *SpawnInput) {
				in.TargetID = "ops"
				in.RequesterAgent.Spec.Subagents.AllowAgents = []string{"*"}
			}),
		},
		"a person spawning skips the requester guards": {
			in: spawnInput(func(in *SpawnInput) { in.Requester, in.TargetID = nil, "research" }),
		},
		"a sub-agent may not spawn": {
			in:         spawnInput(func(in *SpawnInput) { in.Depth = 1 }),
			want:       []string{"FieldValueForbidden spec.requesterSessionKey"},
			wantDetail: "sub-agents may not spawn",
		},
		"a deeper maxSpawnDepth lets a sub-agent spawn": {
			in: spawnInput(func(in *SpawnInput) {
				in.Depth = 1
				in.RequesterAgent.Spec.Subagents.MaxSpawnDepth = ptr.To[int32](2)
			}),
		},
		"max children reached": {
			in:         spawnInput(func(in *SpawnInput) { in.ActiveChildren = 5 }),
			want:       []string{"FieldValueForbidden spec.requesterSessionKey"},
			wantDetail: "maxChildren (5)",
		},
		"under a raised max children": {
			in: spawnInput(func(in *SpawnInput) {
				in.ActiveChildren = 5
				in.RequesterAgent.Spec.Subagents.MaxChildren = ptr.To[int32](6)
			}),
		},
		"sandbox require with an unsandboxed target": {
			in:   spawnInput(func(in *SpawnInput) { in.Spec.Sandbox = sessionsv1alpha1.SandboxRequire }),
			want: []string{"FieldValueForbidden spec.sandbox"},
		},
		"sandbox require with a sandboxed target": {
			in: spawnInput(func(in *SpawnInput) {
				in.Spec.Sandbox = sessionsv1alpha1.SandboxRequire
				in.Target.Spec.Sandbox.Enabled = true
			}),
		},
		"sandboxed requester, unsandboxed child": {
			in:         spawnInput(func(in *SpawnInput) { in.Requester.Spec.Sandboxed = true }),
			want:       []string{"FieldValueForbidden spec.agentId"},
			wantDetail: "may only spawn sandboxed children",
		},
		"sandboxed requester, sandboxed child whose sandbox cannot start": {
			in: spawnInput(func(in *SpawnInput) {
				in.Requester.Spec.Sandboxed = true
				in.Target.Spec.Sandbox.Enabled = true
				in.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
					Reason: sessionsv1alpha1.ReasonRuntimeClassNotFound, Message: `RuntimeClass "kata" does not exist`}}
			}),
			want:       []string{"FieldValueForbidden spec.agentId"},
			wantDetail: `sandbox cannot start: RuntimeClassNotFound: RuntimeClass "kata" does not exist`,
		},
		"sandboxed requester, sandboxed child whose image cannot be pulled": {
			in: spawnInput(func(in *SpawnInput) {
				in.Requester.Spec.Sandboxed = true
				in.Target.Spec.Sandbox.Enabled = true
				in.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
					Reason: sessionsv1alpha1.ReasonSandboxImagePullFailed, Message: "sandbox Pod p cannot pull image x:1: ImagePullBackOff: back-off"}}
			}),
			want:       []string{"FieldValueForbidden spec.agentId"},
			wantDetail: "sandbox cannot start: SandboxImagePullFailed: sandbox Pod p cannot pull image x:1: ImagePullBackOff",
		},
		"sandboxed requester, sandboxed child without an image": {
			in: spawnInput(func(in *SpawnInput) {
				in.Requester.Spec.Sandboxed = true
				in.Target.Spec.Sandbox.Enabled = true
				in.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
					Reason: sessionsv1alpha1.ReasonSandboxImageNotSet, Message: "spec.sandbox.image is unset"}}
			}),
			want:       []string{"FieldValueForbidden spec.agentId"},
			wantDetail: "sandbox cannot start: SandboxImageNotSet",
		},
		"unsandboxed requester, sandboxed child whose image cannot be pulled": {
			in: spawnInput(func(in *SpawnInput) {
				in.Target.Spec.Sandbox.Enabled = true
				in.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
					Reason: sessionsv1alpha1.ReasonSandboxImagePullFailed, Message: "back-off"}}
			}),
		},
		"sandboxed requester, sandboxed child not Ready for another reason": {
			in: spawnInput(func(in *SpawnInput) {
				in.Requester.Spec.Sandboxed = true
				in.Target.Spec.Sandbox.Enabled = true
				in.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "SecretNotFound"}}
			}),
		},
		"any model when the Agent lists none, as the spec says": {
			in: spawnInput(func(in *SpawnInput) { in.Spec.Model = "gpt-9" }),
		},
		"a model outside the Agent's allowedModels": {
			in: spawnInput(func(in *SpawnInput) {
				in.Spec.Model = "gpt-9"
				in.Target.Spec.AllowedModels = []string{"small"}
			}),
			want: []string{"FieldValueNotSupported spec.model"},
		},
		"model allowed": {
			in: spawnInput(func(in *SpawnInput) {
				in.Spec.Model = "small"
				in.Target.Spec.AllowedModels = []string{"small"}
			}),
		},
		"fork under the requester's agent": {
			in: spawnInput(func(in *SpawnInput) { in.Spec.Context = sessionsv1alpha1.ContextFork }),
		},
		"fork under another agent": {
			in: spawnInput(func(in *SpawnInput) {
				in.Spec.Context, in.TargetID = sessionsv1alpha1.ContextFork, "research"
				in.RequesterAgent.Spec.Subagents.AllowAgents = []string{"research"}
			}),
			want: []string{"FieldValueInvalid spec.context"},
		},
		"fork without a requester": {
			in: spawnInput(func(in *SpawnInput) {
				in.Spec.Context, in.Requester, in.RequesterAgent = sessionsv1alpha1.ContextFork, nil, nil
			}),
			want: []string{"FieldValueInvalid spec.context"},
		},
		"mode session without thread": {
			in:   spawnInput(func(in *SpawnInput) { in.Spec.Mode = sessionsv1alpha1.ModeSession }),
			want: []string{"FieldValueInvalid spec.mode"},
		},
		"a person's spawn naming no agent, several Agents": {
			in: spawnInput(func(in *SpawnInput) {
				in.Requester, in.TargetID, in.Target, in.Agents = nil, "", nil, []string{"research", "main"}
			}),
			want:       []string{"FieldValueRequired spec.agentId"},
			wantDetail: "no default agent in this namespace: name one of its Agents (main, research) or set spec.defaultAgentId on SessionPolicy default",
		},
		"a person's spawn naming no agent, no Agent": {
			in:         spawnInput(func(in *SpawnInput) { in.Requester, in.TargetID, in.Target = nil, "", nil }),
			want:       []string{"FieldValueRequired spec.agentId"},
			wantDetail: "this namespace has no Agent",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := CheckSpawn(tc.in)
			if diff := cmp.Diff(tc.want, errorsOf(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.wantDetail != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantDetail)) {
				t.Errorf("%v does not mention %q", errs, tc.wantDetail)
			}
		})
	}
}

func TestCheckAttachments(t *testing.T) {
	text := func(name string, n int) sessionsv1alpha1.Attachment {
		return sessionsv1alpha1.Attachment{Name: name, Content: strings.Repeat("x", n)}
	}
	many := func(n int) []sessionsv1alpha1.Attachment {
		out := make([]sessionsv1alpha1.Attachment, n)
		for i := range out {
			out[i] = text("f"+strings.Repeat("i", i+1), 1)
		}
		return out
	}
	lowered := LimitsFor(&sessionsv1alpha1.SessionPolicySpec{Attachments: &sessionsv1alpha1.AttachmentLimits{
		MaxCount: ptr.To[int32](2), MaxFileBytes: ptr.To[int64](10), MaxTotalBytes: ptr.To[int64](15)}})
	cases := map[string]struct {
		atts   []sessionsv1alpha1.Attachment
		limits AttachmentLimits
		want   []string
	}{
		"fine":                   {atts: []sessionsv1alpha1.Attachment{text("a.txt", 10), {Name: "b.bin", Content: base64.StdEncoding.EncodeToString([]byte{0, 1, 2}), Encoding: sessionsv1alpha1.EncodingBase64}}},
		"50 is the most":         {atts: many(51), want: []string{"FieldValueTooMany spec.attachments"}},
		"exactly 50":             {atts: many(50)},
		"file over 1 MiB":        {atts: []sessionsv1alpha1.Attachment{text("big", MaxAttachmentBytes+1)}, want: []string{"FieldValueTooLong spec.attachments[0].content"}},
		"total over 5 MiB":       {atts: []sessionsv1alpha1.Attachment{text("a", MaxAttachmentBytes), text("b", MaxAttachmentBytes), text("c", MaxAttachmentBytes), text("d", MaxAttachmentBytes), text("e", MaxAttachmentBytes), text("f", 1)}, want: []string{"FieldValueInvalid spec.attachments"}},
		"policy lowers count":    {atts: many(3), limits: lowered, want: []string{"FieldValueTooMany spec.attachments"}},
		"policy lowers file":     {atts: []sessionsv1alpha1.Attachment{text("a", 11)}, limits: lowered, want: []string{"FieldValueTooLong spec.attachments[0].content"}},
		"policy lowers total":    {atts: []sessionsv1alpha1.Attachment{text("a", 8), text("b", 8)}, limits: lowered, want: []string{"FieldValueInvalid spec.attachments"}},
		"duplicate name":         {atts: []sessionsv1alpha1.Attachment{text("a", 1), text("a", 1)}, want: []string{"FieldValueDuplicate spec.attachments[1].name"}},
		"slash":                  {atts: []sessionsv1alpha1.Attachment{text("../etc/passwd", 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"backslash":              {atts: []sessionsv1alpha1.Attachment{text(`a\b`, 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"dot":                    {atts: []sessionsv1alpha1.Attachment{text(".", 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"dot dot":                {atts: []sessionsv1alpha1.Attachment{text("..", 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"NUL":                    {atts: []sessionsv1alpha1.Attachment{text("a\x00b", 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"control character":      {atts: []sessionsv1alpha1.Attachment{text("a\nb", 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"manifest name reserved": {atts: []sessionsv1alpha1.Attachment{text(AttachmentManifestName, 1)}, want: []string{"FieldValueInvalid spec.attachments[0].name"}},
		"base64 with junk":       {atts: []sessionsv1alpha1.Attachment{{Name: "a", Content: "aGVsbG8*", Encoding: sessionsv1alpha1.EncodingBase64}}, want: []string{"FieldValueInvalid spec.attachments[0].content"}},
		"base64 bad padding":     {atts: []sessionsv1alpha1.Attachment{{Name: "a", Content: "aGVsbG8", Encoding: sessionsv1alpha1.EncodingBase64}}, want: []string{"FieldValueInvalid spec.attachments[0].content"}},
		"base64 sizes decoded":   {atts: []sessionsv1alpha1.Attachment{{Name: "a", Content: base64.StdEncoding.EncodeToString(make([]byte, 10)), Encoding: sessionsv1alpha1.EncodingBase64}}, limits: lowered},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.limits == (AttachmentLimits{}) {
				tc.limits = LimitsFor(nil)
			}
			errs := CheckAttachments(tc.atts, tc.limits, field.NewPath("spec", "attachments"))
			if diff := cmp.Diff(tc.want, errorsOf(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultAgentID(t *testing.T) {
	cases := map[string]struct {
		pol    *sessionsv1alpha1.SessionPolicySpec
		agents []string
		want   string
	}{
		"the policy's default":          {pol: &sessionsv1alpha1.SessionPolicySpec{DefaultAgentID: "research"}, agents: []string{"main", "research"}, want: "research"},
		"the policy's default wins":     {pol: &sessionsv1alpha1.SessionPolicySpec{DefaultAgentID: "research"}, agents: []string{"main"}, want: "research"},
		"the only Agent":                {agents: []string{"main"}, want: "main"},
		"the only Agent, policy unset":  {pol: &sessionsv1alpha1.SessionPolicySpec{}, agents: []string{"main"}, want: "main"},
		"several Agents and no default": {agents: []string{"main", "research"}},
		"no Agent":                      {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DefaultAgentID(tc.pol, tc.agents); got != tc.want {
				t.Errorf("DefaultAgentID = %q, want %q", got, tc.want)
			}
		})
	}
}
