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
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// Spawn defaults when the requester's Agent leaves them unset.
const (
	DefaultMaxSpawnDepth = 1
	DefaultMaxChildren   = 5
)

// SpawnInput is everything the spawn guards look at; the webhook gathers it from the cache.
type SpawnInput struct {
	Spec *sessionsv1alpha1.SubagentRunSpec
	// Requester is the requesting session; nil when a person or a system spawns.
	Requester *sessionsv1alpha1.AgentSession
	// RequesterAgent is the requester's Agent; nil when missing.
	RequesterAgent *sessionsv1alpha1.Agent
	// TargetID is the agent the child runs under; Target its Agent (nil when missing).
	TargetID string
	Target   *sessionsv1alpha1.Agent
	// Depth is the requester's spawn depth (SpawnDepth); ActiveChildren the requester's
	// children that have not finished.
	Depth          int
	ActiveChildren int
	Limits         AttachmentLimits
	// Agents are the namespace's Agent names, gathered only when there is no TargetID: the
	// refusal names them.
	Agents []string
}

// DefaultAgentID is the agent a spawn runs under when it names none and has no requester (a
// person's minimal spawn): the SessionPolicy's defaultAgentId, else the namespace's only
// Agent; "" when there is neither.
func DefaultAgentID(pol *sessionsv1alpha1.SessionPolicySpec, agents []string) string {
	if pol != nil && pol.DefaultAgentID != "" {
		return pol.DefaultAgentID
	}
	if len(agents) == 1 {
		return agents[0]
	}
	return ""
}

// noAgent is the refusal of a spawn that names no agent when the namespace has no default.
func noAgent(path *field.Path, agents []string) *field.Error {
	if len(agents) == 0 {
		return field.Required(path, "this namespace has no Agent to run the spawn: create one first")
	}
	agents = slices.Sorted(slices.Values(agents))
	return field.Required(path, fmt.Sprintf(
		"no default agent in this namespace: name one of its Agents (%s) or set spec.defaultAgentId on SessionPolicy default",
		strings.Join(agents, ", ")))
}

// TargetAgentID is the agent a spawn runs under: spec.agentId, else the requester's agent.
func TargetAgentID(spec *sessionsv1alpha1.SubagentRunSpec, requester *sessionsv1alpha1.AgentSession) string {
	if spec.AgentID != "" {
		return spec.AgentID
	}
	if requester != nil {
		return agentOf(requester)
	}
	return ""
}

// CheckSpawn applies every spawn guard of the seeds and returns what fails, field by field.
func CheckSpawn(in SpawnInput) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if in.TargetID == "" {
		return append(errs, noAgent(spec.Child("agentId"), in.Agents))
	}
	if !sessionkey.ValidAgentID(in.TargetID) {
		errs = append(errs, field.Invalid(spec.Child("agentId"), in.TargetID, "must match [a-z0-9][a-z0-9_-]{0,63}"))
		return errs
	}
	if in.Target == nil {
		nf := field.NotFound(spec.Child("agentId"), in.TargetID)
		nf.Detail = fmt.Sprintf("Agent %s does not exist in this namespace", in.TargetID)
		errs = append(errs, nf)
	}
	if in.Spec.Mode == sessionsv1alpha1.ModeSession && !in.Spec.Thread {
		errs = append(errs, field.Invalid(spec.Child("mode"), in.Spec.Mode, "mode session requires thread: true"))
	}
	if in.Requester != nil {
		errs = append(errs, requesterGuards(in, spec)...)
	}
	errs = append(errs, forkGuard(in, spec)...)
	if in.Target != nil {
		errs = append(errs, targetGuards(in, spec)...)
	}
	errs = append(errs, CheckAttachAs(in.Spec.AttachAs, spec.Child("attachAs"))...)
	return append(errs, CheckAttachments(in.Spec.Attachments, in.Limits, spec.Child("attachments"))...)
}

func requesterGuards(in SpawnInput, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	from := agentOf(in.Requester)
	sub := sessionsv1alpha1.SubagentsSpec{}
	if in.RequesterAgent != nil {
		sub = in.RequesterAgent.Spec.Subagents
	}
	// allowAgents cannot help with an Agent that does not exist: CheckSpawn says so instead.
	if in.Target != nil && in.TargetID != from && !slices.Contains(sub.AllowAgents, "*") && !slices.Contains(sub.AllowAgents, in.TargetID) {
		errs = append(errs, field.Forbidden(spec.Child("agentId"), fmt.Sprintf(
			"agent %s may not spawn under agent %s: add %q (or \"*\") to Agent %s spec.subagents.allowAgents",
			from, in.TargetID, in.TargetID, from)))
	}
	maxDepth := int(deref(sub.MaxSpawnDepth, DefaultMaxSpawnDepth))
	if in.Depth+1 > maxDepth {
		errs = append(errs, field.Forbidden(spec.Child("requesterSessionKey"), fmt.Sprintf(
			"%s is a sub-agent session (spawn depth %d) and sub-agents may not spawn: Agent %s spec.subagents.maxSpawnDepth is %d",
			in.Requester.Spec.Key, in.Depth, from, maxDepth)))
	}
	maxChildren := int(deref(sub.MaxChildren, DefaultMaxChildren))
	if in.ActiveChildren >= maxChildren {
		errs = append(errs, field.Forbidden(spec.Child("requesterSessionKey"), fmt.Sprintf(
			"%s already has %d active sub-agent runs, the most Agent %s spec.subagents.maxChildren (%d) allows",
			in.Requester.Spec.Key, in.ActiveChildren, from, maxChildren)))
	}
	if Sandboxed(in.Requester, in.RequesterAgent) && in.Target != nil && !in.Target.Spec.Sandbox.Enabled {
		errs = append(errs, field.Forbidden(spec.Child("agentId"), fmt.Sprintf(
			"%s is sandboxed and agent %s runs unsandboxed: a sandboxed session may only spawn sandboxed children (set Agent %s spec.sandbox.enabled=true)",
			in.Requester.Spec.Key, in.TargetID, in.TargetID)))
	}
	if Sandboxed(in.Requester, in.RequesterAgent) && in.Target != nil && in.Target.Spec.Sandbox.Enabled {
		if why := sandboxCannotStart(in.Target); why != "" {
			errs = append(errs, field.Forbidden(spec.Child("agentId"), fmt.Sprintf(
				"%s is sandboxed and agent %s's sandbox cannot start: %s", in.Requester.Spec.Key, in.TargetID, why)))
		}
	}
	return errs
}

// sandboxStartReasons are the Agent Ready=False reasons that say its sandbox cannot start.
var sandboxStartReasons = map[string]bool{
	sessionsv1alpha1.ReasonRuntimeClassNotFound:   true,
	sessionsv1alpha1.ReasonSandboxImageNotSet:     true,
	sessionsv1alpha1.ReasonSandboxImagePullFailed: true,
}

// sandboxCannotStart is why an Agent's sandbox cannot start, as its Ready condition says
// (the Agent controller judged its RuntimeClass, its image and its Pods' pulls), or "".
func sandboxCannotStart(a *sessionsv1alpha1.Agent) string {
	c := meta.FindStatusCondition(a.Status.Conditions, sessionsv1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || !sandboxStartReasons[c.Reason] {
		return ""
	}
	return c.Reason + ": " + c.Message
}

// forkGuard: a forked child reads the requester's conversation, so only the requester's own
// agent may run it, and a spawn without a requester has nothing to fork.
func forkGuard(in SpawnInput, spec *field.Path) field.ErrorList {
	if in.Spec.Context != sessionsv1alpha1.ContextFork {
		return nil
	}
	if in.Requester == nil {
		return field.ErrorList{field.Invalid(spec.Child("context"), in.Spec.Context,
			"context fork starts the child from the requester's conversation and this spawn has no requesterSessionKey; use context isolated")}
	}
	if from := agentOf(in.Requester); in.TargetID != from {
		return field.ErrorList{field.Invalid(spec.Child("context"), in.Spec.Context, fmt.Sprintf(
			"context fork runs under the requester's own agent %s, not %s: omit agentId or use context isolated", from, in.TargetID))}
	}
	return nil
}

func targetGuards(in SpawnInput, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if in.Spec.Sandbox == sessionsv1alpha1.SandboxRequire && !in.Target.Spec.Sandbox.Enabled {
		errs = append(errs, field.Forbidden(spec.Child("sandbox"), fmt.Sprintf(
			"sandbox require, but agent %s runs unsandboxed (Agent %s spec.sandbox.enabled is false)", in.TargetID, in.TargetID)))
	}
	if ok, _ := SessionModel(in.Target, in.Spec.Model); !ok {
		errs = append(errs, field.NotSupported(spec.Child("model"), in.Spec.Model, modelChoices(in.Target)))
	}
	return errs
}

func deref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
