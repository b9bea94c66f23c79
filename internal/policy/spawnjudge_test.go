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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// TestJudgeSpawn holds every refusal of a spawn at admission (docs/concepts/runs-and-announces.md,
// docs/concepts/policy-and-visibility.md, docs/operations/security.md) but the chain limits,
// which the webhook asks after the judge because they count what they admit. A guard of a
// policy answers 403 and lists only the policy's reasons; a field to fix answers 422.
func TestJudgeSpawn(t *testing.T) {
	const childKey = "agent:main:subagent:0b7e2f0c-5d1e-4a43-9c55-2b7c1f4f1a10"
	person := func(mut ...func(*SpawnAdmission)) SpawnAdmission {
		a := SpawnAdmission{SpawnFacts: SpawnFacts{Namespace: "ns", TargetID: "main",
			Target: &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: "ns"}}},
			Spec: &sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "main"}, User: "carol"}
		for _, m := range mut {
			m(&a)
		}
		return a
	}
	fromMain := func(a *SpawnAdmission) {
		a.From, a.MayActAs, a.Spec.RequesterSessionKey = "agent:main:main", true, "agent:main:main"
		a.Requester = &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "main-main", Namespace: "ns"},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", AgentID: "main"}}
		a.RequesterAgent = &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: "ns"}}
	}
	toResearch := func(a *SpawnAdmission) {
		a.Spec.AgentID, a.TargetID = "research", "research"
		a.Target = &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "ns"}}
	}
	hint := func(key string, may, exists bool) func(*SpawnAdmission) {
		return func(a *SpawnAdmission) { a.ChildKey, a.MayActAsChild, a.ChildExists = ptr.To(key), may, exists }
	}
	cases := map[string]struct {
		in   SpawnAdmission
		want verdict
	}{
		"a person's spawn is admitted":                     {in: person(), want: verdict{Code: "admitted"}},
		"an agent's spawn under its own agent is admitted": {in: person(fromMain), want: verdict{Code: "admitted"}},
		"a child-key hint naming a new session of the run's agent is admitted": {in: person(fromMain, hint(childKey, true, false)),
			want: verdict{Code: "admitted"}},

		"a manager-only mark": {in: person(func(a *SpawnAdmission) {
			a.ForgedMark = "annotation sessions.agents.dev/hops is set only by the operator's session tools"
		}), want: verdict{Code: "403", Says: "annotation sessions.agents.dev/hops is set only by the operator's session tools"}},
		"speaking for a session without act-as": {in: person(fromMain, func(a *SpawnAdmission) { a.MayActAs = false }),
			want: verdict{Code: "403", Says: ActAsDenial("carol", "agent:main:main", "spec.requesterSessionKey")}},
		"a requester no session has, of an Agent that exists": {in: person(fromMain, func(a *SpawnAdmission) { a.Requester = nil }),
			want: verdict{Code: "422", Field: "spec.requesterSessionKey", Says: "no AgentSession in namespace ns has this key or sessionId"}},
		"a requester no session has, of an Agent that does not exist": {in: person(fromMain, func(a *SpawnAdmission) { a.Requester, a.RequesterAgent = nil, nil }),
			want: verdict{Code: "422", Field: "spec.requesterSessionKey", Says: "Agent main does not exist in namespace ns; create the Agent first"}},

		"no agent named and no default": {in: person(func(a *SpawnAdmission) {
			a.Spec.AgentID, a.TargetID, a.Target, a.Agents = "", "", nil, []string{"research", "main"}
		}), want: verdict{Code: "422", Field: "spec.agentId", Says: "no default agent in this namespace: name one of its Agents (main, research)"}},
		"an agent id outside the grammar": {in: person(func(a *SpawnAdmission) { a.TargetID, a.Target = "Bad_Agent", nil }),
			want: verdict{Code: "422", Field: "spec.agentId", Says: "must match [a-z0-9][a-z0-9_-]{0,63}"}},
		"an Agent that does not exist": {in: person(func(a *SpawnAdmission) { a.TargetID, a.Target = "ghost", nil }),
			want: verdict{Code: "422", Field: "spec.agentId", Says: "Agent ghost does not exist in this namespace"}},
		"mode session without thread": {in: person(func(a *SpawnAdmission) { a.Spec.Mode = sessionsv1alpha1.ModeSession }),
			want: verdict{Code: "422", Field: "spec.mode", Says: "mode session requires thread: true"}},
		"fork without a requester": {in: person(func(a *SpawnAdmission) { a.Spec.Context = sessionsv1alpha1.ContextFork }),
			want: verdict{Code: "422", Field: "spec.context", Says: "this spawn has no requesterSessionKey; use context isolated"}},
		"fork under another agent": {in: person(fromMain, toResearch, func(a *SpawnAdmission) {
			a.Spec.Context = sessionsv1alpha1.ContextFork
			a.RequesterAgent.Spec.Subagents.AllowAgents = []string{"*"}
		}), want: verdict{Code: "422", Field: "spec.context", Says: "context fork runs under the requester's own agent main, not research"}},
		"a model outside the Agent's allowedModels": {in: person(func(a *SpawnAdmission) {
			a.Spec.Model, a.Target.Spec.AllowedModels = "gpt-9", []string{"small"}
		}), want: verdict{Code: "422", Field: "spec.model", Says: `Unsupported value: "gpt-9"`}},
		"an attachment that escapes the workspace": {in: person(func(a *SpawnAdmission) {
			a.Spec.Attachments = []sessionsv1alpha1.Attachment{{Name: "../etc/passwd", Content: "x"}}
		}), want: verdict{Code: "422", Field: "spec.attachments[0].name"}},
		"more attachments than the SessionPolicy allows": {in: person(func(a *SpawnAdmission) {
			a.Spec.Attachments = []sessionsv1alpha1.Attachment{{Name: "a.txt", Content: "x"}, {Name: "b.txt", Content: "y"}}
			a.Policy = &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{
				Attachments: &sessionsv1alpha1.AttachmentLimits{MaxCount: ptr.To[int32](1)}}}
		}), want: verdict{Code: "422", Field: "spec.attachments"}},

		"an agent allowAgents does not name": {in: person(fromMain, toResearch),
			want: verdict{Code: "403", Says: `spec.agentId: Forbidden: agent main may not spawn under agent research: add "research" (or "*") to Agent main spec.subagents.allowAgents`}},
		"a sub-agent spawning past maxSpawnDepth": {in: person(fromMain, func(a *SpawnAdmission) { a.Depth = 1 }),
			want: verdict{Code: "403", Says: "agent:main:main is a sub-agent session (spawn depth 1) and sub-agents may not spawn"}},
		"a requester with maxChildren active runs": {in: person(fromMain, func(a *SpawnAdmission) { a.ActiveChildren = DefaultMaxChildren }),
			want: verdict{Code: "403", Says: "agent:main:main already has 5 active sub-agent runs"}},
		"sandbox require under an unsandboxed Agent": {in: person(func(a *SpawnAdmission) { a.Spec.Sandbox = sessionsv1alpha1.SandboxRequire }),
			want: verdict{Code: "403", Says: "sandbox require, but agent main runs unsandboxed"}},
		"a sandboxed requester spawning an unsandboxed child": {in: person(fromMain, func(a *SpawnAdmission) { a.Requester.Spec.Sandboxed = true }),
			want: verdict{Code: "403", Says: "a sandboxed session may only spawn sandboxed children"}},
		"a sandboxed requester spawning a child whose sandbox cannot start": {in: person(fromMain, func(a *SpawnAdmission) {
			a.Requester.Spec.Sandboxed, a.Target.Spec.Sandbox.Enabled = true, true
			a.Target.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: sessionsv1alpha1.ReasonRuntimeClassNotFound, Message: `RuntimeClass "kata" does not exist`}}
		}), want: verdict{Code: "403", Says: `sandbox cannot start: RuntimeClassNotFound: RuntimeClass "kata" does not exist`}},
		"a policy's guard and a field to fix: the 403 lists the policy's reasons only": {in: person(fromMain, func(a *SpawnAdmission) {
			a.Depth, a.Spec.Mode = 1, sessionsv1alpha1.ModeSession
		}), want: verdict{Code: "403", Says: "spec.requesterSessionKey: Forbidden: agent:main:main is a sub-agent session"}},

		"a child-key hint without act-as on it": {in: person(fromMain, hint(childKey, false, false)),
			want: verdict{Code: "403", Says: ActAsDenial("carol", childKey, "annotation "+sessionsv1alpha1.ChildSessionKeyAnnotation)}},
		"a child-key hint of another agent": {in: person(fromMain, hint("agent:ops:subagent:0b7e2f0c-5d1e-4a43-9c55-2b7c1f4f1a10", true, false)),
			want: verdict{Code: "403", Says: "the child session key must be agent:main:subagent:<uuid> with a lower-case UUID"}},
		"a child-key hint naming an existing session": {in: person(fromMain, hint(childKey, true, true)),
			want: verdict{Code: "403", Says: "session " + childKey + " already exists: a sub-agent always runs in a new session"}},
		"a spent budget": {in: person(func(a *SpawnAdmission) { a.BudgetDenial = "namespace budget spent until 10:00" }),
			want: verdict{Code: "403", Says: "namespace budget spent until 10:00"}},
		"the first refusal wins": {in: person(fromMain, func(a *SpawnAdmission) { a.MayActAs, a.ForgedMark, a.Depth = false, "forged", 1 }),
			want: verdict{Code: "403", Says: "forged"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { sameVerdict(t, tc.want, JudgeSpawn(tc.in)) })
	}
}

// TestFieldRefusal: a policy's guard answers 403 with only its reasons; fields alone, 422.
func TestFieldRefusal(t *testing.T) {
	spec := field.NewPath("spec")
	cases := map[string]struct {
		errs field.ErrorList
		want *Refusal
	}{
		"none": {},
		"a field to fix": {errs: field.ErrorList{field.Invalid(spec.Child("mode"), "session", "x")},
			want: &Refusal{Invalid: field.ErrorList{field.Invalid(spec.Child("mode"), "session", "x")}}},
		"a policy's guard beside a field to fix": {errs: field.ErrorList{field.Invalid(spec.Child("mode"), "session", "x"), field.Forbidden(spec.Child("agentId"), "y")},
			want: &Refusal{Forbidden: "spec.agentId: Forbidden: y"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FieldRefusal(tc.errs)); diff != "" {
				t.Errorf("FieldRefusal (-want +got):\n%s", diff)
			}
		})
	}
}
