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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// The sessions tool's actions.
const (
	ActionPatch   = "patch"
	ActionArchive = "archive"
	ActionReset   = "reset"
	ActionRestore = "restore"
)

// ManageArgs are the sessions tool's arguments.
type ManageArgs struct {
	Action     string `json:"action"`
	SessionKey string `json:"sessionKey"`
	// ExpectedSessionID is the sessionId the caller saw (sessions_list): the write is made
	// only while the key still names that session, so a stale key never hits a replacement.
	ExpectedSessionID string `json:"expectedSessionId"`
	// Label, Model and ThinkingLevel are set by patch; "" clears one.
	Label         *string `json:"label"`
	Model         *string `json:"model"`
	ThinkingLevel *string `json:"thinkingLevel"`
	// SendPolicy is set by patch: allow, deny, or inherit ("" too) to unset it. Owner-only:
	// a person holding the verb set-send-policy on the session; never a session's own call.
	SendPolicy *string `json:"sendPolicy"`
}

// ManageResult is the sessions tool's result.
type ManageResult struct {
	Status     string `json:"status"`
	Action     string `json:"action"`
	SessionKey string `json:"sessionKey"`
	SessionID  string `json:"sessionId"`
	// Note says what an accepted restore waits for.
	Note string `json:"note,omitempty"`
}

func manageTool() Tool {
	str := map[string]any{"type": "string"}
	return Tool{Name: "sessions",
		Description: "Manage a visible session: patch its label, model or thinking level, or (a person with the verb set-send-policy only) its sendPolicy; archive it; restore an archived (or retired) one with its transcript; reset it to a new transcript. archive, restore and reset need expectedSessionId (the sessionId from sessions_list), so a key that now names another session is refused.",
		Schema: Schema(map[string]any{
			"action":            map[string]any{"type": "string", "enum": []string{ActionPatch, ActionArchive, ActionRestore, ActionReset}},
			"sessionKey":        map[string]any{"type": "string", "description": "session key, sessionId, or main"},
			"expectedSessionId": map[string]any{"type": "string", "description": "the sessionId the session must still have"},
			"label":             str, "model": str,
			"thinkingLevel": map[string]any{"type": "string", "enum": []string{"", "off", "minimal", "low", "medium", "high", "xhigh"}},
			"sendPolicy": map[string]any{"type": "string", "enum": []string{"allow", "deny", "inherit", ""},
				"description": "patch: the session's send policy override (inherit or \"\" unsets it); owner-only, as /send on|off|inherit: needs the verb set-send-policy, never a session's own call"},
		}, "action", "sessionKey"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a ManageArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if _, err := a.ops(time.Time{}, false); err != nil {
				return nil, err // the arguments alone are wrong: no read needed to say so
			}
			return c.Manage(ctx, a)
		}}
}

// jsonOp is one JSON Patch (RFC 6902) operation.
type jsonOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// ops are the patch operations of the arguments, after the guard; now stamps an archive,
// and hasAnnotations says the session has an annotations map to add to.
func (a ManageArgs) ops(now time.Time, hasAnnotations bool) ([]jsonOp, error) {
	if a.SessionKey == "" {
		return nil, errors.New("sessionKey is required")
	}
	var ops []jsonOp
	switch a.Action {
	case ActionPatch:
		for _, f := range []struct {
			path string
			v    *string
		}{{"/spec/label", a.Label}, {"/spec/model", a.Model}, {"/spec/thinkingLevel", a.ThinkingLevel}} {
			if f.v == nil {
				continue
			}
			// add sets a field whether or not it is there; "" clears it (the CRD's omitempty).
			ops = append(ops, jsonOp{Op: "add", Path: f.path, Value: *f.v})
		}
		if p := a.SendPolicy; p != nil {
			switch *p {
			case string(sessionsv1alpha1.ActionAllow), string(sessionsv1alpha1.ActionDeny):
				ops = append(ops, jsonOp{Op: "add", Path: "/spec/sendPolicy", Value: *p})
			case "inherit", "":
				// add then remove unsets it whether or not it is set (a remove alone fails on a missing one).
				ops = append(ops, jsonOp{Op: "add", Path: "/spec/sendPolicy", Value: string(sessionsv1alpha1.ActionDeny)}, jsonOp{Op: "remove", Path: "/spec/sendPolicy"})
			default:
				return nil, fmt.Errorf("sendPolicy %q: want allow, deny or inherit", *p)
			}
		}
		if len(ops) == 0 {
			return nil, errors.New("patch needs one of label, model, thinkingLevel or sendPolicy")
		}
	case ActionArchive, ActionReset, ActionRestore:
		if a.ExpectedSessionID == "" {
			return nil, fmt.Errorf("%s needs expectedSessionId (the sessionId from sessions_list)", a.Action)
		}
		ann, value := sessionsv1alpha1.ArchiveAtAnnotation, now.UTC().Format(time.RFC3339)
		switch a.Action {
		case ActionReset:
			ann, value = sessionsv1alpha1.ResetAnnotation, a.ExpectedSessionID
		case ActionRestore:
			ann, value = sessionsv1alpha1.RestoreAnnotation, a.ExpectedSessionID
		}
		if !hasAnnotations {
			ops = append(ops, jsonOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
		}
		if a.Action == ActionRestore {
			// The archive request goes with the restore, in the same guarded write; add then
			// remove drops it whether or not it is there (a remove alone fails on a missing one).
			at := "/metadata/annotations/" + escapePointer(sessionsv1alpha1.ArchiveAtAnnotation)
			ops = append(ops, jsonOp{Op: "add", Path: at, Value: ""}, jsonOp{Op: "remove", Path: at})
		}
		ops = append(ops, jsonOp{Op: "add", Path: "/metadata/annotations/" + escapePointer(ann), Value: value})
	default:
		return nil, fmt.Errorf("unknown action %q: want %s, %s, %s or %s", a.Action, ActionPatch, ActionArchive, ActionRestore, ActionReset)
	}
	if a.ExpectedSessionID != "" {
		// The guard is the API server's: the patch applies only while the session is the one
		// the caller saw, however late the write lands.
		ops = append([]jsonOp{{Op: "test", Path: "/status/sessionId", Value: a.ExpectedSessionID}}, ops...)
	}
	return ops, nil
}

// escapePointer escapes a JSON Pointer token (RFC 6901).
func escapePointer(s string) string {
	out := make([]byte, 0, len(s)+2)
	for i := range len(s) {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// Manage runs one action of the sessions tool on a session the caller sees, as the caller:
// the access layer (ManageSession), then RBAC and admission judge the patch.
func (c *Call) Manage(ctx context.Context, a ManageArgs) (any, error) {
	target, err := c.visibleSession(ctx, a.SessionKey)
	if err != nil {
		if nf := (notFoundError{}); a.Action == ActionRestore && errors.As(err, &nf) {
			return c.restoreRetired(ctx, a, err)
		}
		return nil, err
	}
	if a.ExpectedSessionID != "" {
		target = c.fresh(ctx, target)
	}
	if a.ExpectedSessionID != "" && a.ExpectedSessionID != target.Status.SessionID {
		// The guard refused the write: forbidden, as every refusal by a guard is.
		return &StatusResult{Status: StatusForbidden, Error: fmt.Sprintf(
			"session %s is now sessionId %q, not the expected %q: list sessions again and act on the session you mean",
			target.Spec.Key, target.Status.SessionID, a.ExpectedSessionID)}, nil
	}
	if a.SendPolicy != nil && c.Session != nil {
		// Owner-only: the manager's own write would pass admission, so a model never sets it.
		return &StatusResult{Status: StatusForbidden, Error: fmt.Sprintf(
			"sendPolicy of session %s is set by a person with the verb %s (sessions patch or /send on|off|inherit), never by a session's own call",
			target.Spec.Key, sessionsv1alpha1.VerbSetSendPolicy)}, nil
	}
	if a.Model != nil {
		if denied := c.judgeModel(ctx, target, *a.Model); denied != nil {
			return denied, nil
		}
	}
	ops, err := a.ops(c.Now(), target.Annotations != nil)
	if err != nil {
		return nil, err
	}
	if a.Action == ActionArchive && target.Status.Phase == sessionsv1alpha1.SessionArchived {
		return ManageResult{Status: StatusOK, Action: a.Action, SessionKey: target.Spec.Key, SessionID: target.Status.SessionID}, nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	err = c.may(ctx, caller.ManageSession, target.Name)
	if err == nil && a.Action == ActionRestore {
		if refused := restorable(target); refused != nil {
			return refused, nil
		}
	}
	if err == nil {
		err = c.Client.Patch(ctx, target.DeepCopy(), client.RawPatch(types.JSONPatchType, patch))
	}
	if err != nil {
		if r := Refusal(err); r != nil {
			return r, nil
		}
		return nil, err
	}
	if a.Action == ActionRestore {
		return c.waitRestore(ctx, target)
	}
	return ManageResult{Status: StatusOK, Action: a.Action, SessionKey: target.Spec.Key, SessionID: target.Status.SessionID}, nil
}

// judgeModel refuses a model override the session's Agent does not allow (policy).
func (c *Call) judgeModel(ctx context.Context, s *sessionsv1alpha1.AgentSession, model string) *StatusResult {
	agent, err := c.lookup().Agent(ctx, c.Namespace, s.Spec.AgentID)
	if err != nil {
		return &StatusResult{Status: StatusError, Error: err.Error()}
	}
	if agent == nil {
		agent = &sessionsv1alpha1.Agent{}
		agent.Name = s.Spec.AgentID
	}
	if ok, why := policy.SessionModel(agent, model); !ok {
		return &StatusResult{Status: StatusForbidden, Error: why}
	}
	return nil
}
