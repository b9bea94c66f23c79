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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

type spawnArgs struct {
	Task              string                         `json:"task"`
	Label             string                         `json:"label"`
	AgentID           string                         `json:"agentId"`
	Model             string                         `json:"model"`
	Thinking          sessionsv1alpha1.ThinkingLevel `json:"thinking"`
	RunTimeoutSeconds Number                         `json:"runTimeoutSeconds"`
	Thread            bool                           `json:"thread"`
	Mode              string                         `json:"mode"`
	Cleanup           string                         `json:"cleanup"`
	Sandbox           string                         `json:"sandbox"`
	Attachments       []sessionsv1alpha1.Attachment  `json:"attachments"`
	// AttachAs says where a sandboxed child finds its attachments; validated and recorded on the run.
	AttachAs *sessionsv1alpha1.AttachAs `json:"attachAs"`
	// Context is isolated (the default) or fork: the child starts from this session's
	// recent conversation.
	Context string `json:"context"`
}

// SpawnResult is the sessions_spawn result.
type SpawnResult struct {
	Status          string `json:"status"`
	RunID           string `json:"runId"`
	ChildSessionKey string `json:"childSessionKey"`
	// Attachments are the receipts of the files the child will find in its workspace.
	Attachments []sessionsv1alpha1.AttachmentReceipt `json:"attachments,omitempty"`
}

func spawnTool() Tool {
	str := map[string]any{"type": "string"}
	return Tool{Name: "sessions_spawn",
		Description: "Spawn a sub-agent run in a new session; it announces its result back here. Never blocks.",
		Schema: Schema(map[string]any{
			"task": str, "label": str, "agentId": str, "model": str,
			"thinking":          map[string]any{"type": "string", "enum": []string{"off", "minimal", "low", "medium", "high", "xhigh"}},
			"runTimeoutSeconds": map[string]any{"type": "number"},
			"thread":            map[string]any{"type": "boolean"},
			"mode":              map[string]any{"type": "string", "enum": []string{"run", "session"}},
			"cleanup":           map[string]any{"type": "string", "enum": []string{"delete", "keep"}},
			"sandbox":           map[string]any{"type": "string", "enum": []string{"inherit", "require"}},
			"context":           map[string]any{"type": "string", "enum": []string{"isolated", "fork"}, "description": "isolated (default): the child starts with its task alone; fork: it starts from this session's recent conversation (same agent only)"},
			"attachments": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"name": str, "content": str, "mimeType": str, "encoding": map[string]any{"type": "string", "enum": []string{"utf8", "base64"}}}}},
			"attachAs": map[string]any{"type": "object", "additionalProperties": false,
				"description": "{ mountPath? }, a relative path inside the child's workspace: a sandboxed child finds its attachments at /workspace/<mountPath> in its sandbox. An unsandboxed child's attachments land in .agents/attachments/<uuid>/ and mountPath is only recorded",
				"properties":  map[string]any{"mountPath": map[string]any{"type": "string", "maxLength": 255}}},
		}, "task"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a spawnArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if a.Task == "" {
				return nil, errors.New("task is required")
			}
			if err := forkable(a, c.Session); err != nil {
				return nil, err
			}
			if errs := policy.CheckAttachAs(a.AttachAs, field.NewPath("attachAs")); len(errs) > 0 {
				return nil, errs.ToAggregate()
			}
			return c.spawn(ctx, a)
		}}
}

// forkable says why a spawn cannot fork, as admission would (policy's fork guard), before
// anything is created: a fork copies the requester's conversation, so it needs a requester
// and runs under the requester's own agent.
func forkable(a spawnArgs, self *sessionsv1alpha1.AgentSession) error {
	if sessionsv1alpha1.SpawnContext(a.Context) != sessionsv1alpha1.ContextFork {
		return nil
	}
	if self == nil {
		return errors.New(`context "fork" starts the child from the calling session's conversation and this call speaks for no session; use context "isolated"`)
	}
	if a.AgentID != "" && a.AgentID != self.Spec.AgentID {
		return fmt.Errorf(`context "fork" runs the child under this session's own agent %s, not %s: omit agentId or use context "isolated"`, self.Spec.AgentID, a.AgentID)
	}
	return nil
}

func (c *Call) spawn(ctx context.Context, a spawnArgs) (any, error) {
	agentID := a.AgentID
	if agentID == "" {
		agentID = c.agentID()
	}
	if agentID == "" {
		// A person's spawn: the namespace's default agent, as admission chooses it. With none
		// (or none readable) agentId stays empty and admission refuses, naming the Agents.
		a.AgentID, _, _ = lookup.New(c.Reader, c.apiReader()).DefaultAgentID(ctx, c.Namespace)
		agentID = a.AgentID
	}
	run := &sessionsv1alpha1.SubagentRun{
		ObjectMeta: metav1.ObjectMeta{Name: c.ObjectName("spawn-"), Namespace: c.Namespace},
		Spec: sessionsv1alpha1.SubagentRunSpec{
			Task: a.Task, Label: a.Label, AgentID: a.AgentID, Model: a.Model, Thinking: a.Thinking,
			Thread: a.Thread, Mode: sessionsv1alpha1.SpawnMode(a.Mode), Cleanup: sessionsv1alpha1.Cleanup(a.Cleanup),
			Sandbox: sessionsv1alpha1.SandboxMode(a.Sandbox), Attachments: a.Attachments, AttachAs: a.AttachAs, Context: sessionsv1alpha1.SpawnContext(a.Context),
			RequesterSessionKey: c.sessionKey(),
		},
	}
	if agentID != "" {
		run.Annotations = map[string]string{sessionsv1alpha1.ChildSessionKeyAnnotation: sessionkey.SubagentKey(agentID, c.callUUID())}
	}
	if a.RunTimeoutSeconds.Set {
		t := int32(max(a.RunTimeoutSeconds.V, 0))
		run.Spec.RunTimeoutSeconds = &t
	}
	if denied, err := c.createOnce(ctx, run); denied != nil || err != nil {
		return denied, err
	}
	res := SpawnResult{Status: StatusAccepted, RunID: string(run.UID), ChildSessionKey: run.Annotations[sessionsv1alpha1.ChildSessionKeyAnnotation]}
	for _, a := range run.Spec.Attachments {
		// Admission decoded each one already; a receipt that fails here is left out.
		if r, _, err := policy.AttachmentReceipt(a); err == nil {
			res.Attachments = append(res.Attachments, r)
		}
	}
	return res, nil
}

func agentsListTool() Tool {
	return Tool{Name: "agents_list",
		Description: "List the agent ids this agent may spawn sub-agents under (sessions_spawn agentId).",
		Schema:      Schema(map[string]any{}),
		Run:         func(ctx context.Context, c *Call, _ json.RawMessage) (any, error) { return c.agentsList(ctx) }}
}

// AllowedAgents is the agent ids an agent may spawn under: itself, its allowAgents, and
// with "*" every Agent of the namespace (all, sorted).
func AllowedAgents(self string, allow []string, all []string) []string {
	ids := []string{self}
	if slices.Contains(allow, "*") {
		ids = append(ids, all...)
	} else {
		ids = append(ids, allow...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// agentsList is the agents the calling session's agent may spawn under; a person may name
// any Agent of the namespace (admission still judges the spawn). descriptions carries each
// listed Agent's spec.description, for those that have one.
func (c *Call) agentsList(ctx context.Context) (any, error) {
	self, allow := "", []string{"*"}
	if c.Agent != nil {
		self, allow = c.Agent.Name, c.Agent.Spec.Subagents.AllowAgents
	}
	var list sessionsv1alpha1.AgentList
	if err := c.Reader.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		return nil, err
	}
	var all []string
	described := map[string]string{}
	for _, a := range list.Items {
		all = append(all, a.Name)
		if a.Spec.Description != "" {
			described[a.Name] = a.Spec.Description
		}
	}
	if !slices.Contains(allow, "*") {
		all = nil
	}
	ids := AllowedAgents(self, allow, all)
	if self == "" {
		ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	}
	out := map[string]any{"agents": ids}
	descriptions := map[string]string{}
	for _, id := range ids {
		if d, ok := described[id]; ok {
			descriptions[id] = d
		}
	}
	if len(descriptions) > 0 {
		out["descriptions"] = descriptions
	}
	return out, nil
}
