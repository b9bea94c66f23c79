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

package turns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A tool call that a rule says needs a person does not hold its turn: the turn creates the
// call's ToolApproval, records that it asked, and ends with TurnResult.AwaitingApproval set.
// Its executor slot, lane and goroutine are free while a person decides. The owner's
// controller shows AwaitingApproval and, once the approval is decided, submits the same
// turn again: the repeated turn replays its records from the transcript (no model call is
// made twice) and reaches the call again, now decided. Approved runs it, Denied and Expired
// give the model an error result. The approval's transcript records say where the call
// stands, so a restart anywhere in between runs nothing twice.

// ProvenanceToolApproval marks the system records of an approval: asked, then decided.
const ProvenanceToolApproval = "tool_approval"

// Key suffixes of a call's approval records, after the call's own step key.
const (
	askedSuffix   = "/approval-asked"
	decidedSuffix = "/approval-decided"
)

// awaitingApproval ends a turn whose tool call waits for a person; it is no failure.
type awaitingApproval struct{ name string }

func (a *awaitingApproval) Error() string { return "awaiting approval " + a.name }

// ApprovalName is the ToolApproval of the call at callKey in turn: the same on every run of
// the turn, so a repeated turn finds the object instead of making a second.
func ApprovalName(turnID, callKey string) string {
	sum := sha256.Sum256([]byte(turnID + "\x00" + callKey))
	return "tap-" + hex.EncodeToString(sum[:10])
}

// awaitOutcome turns the end of a waiting turn into its result: not an error, the name of
// the approval it waits on.
func (t *turn) awaitOutcome(err error) error {
	var a *awaitingApproval
	if errors.As(err, &a) {
		t.res.AwaitingApproval = a.name
		return nil
	}
	return err
}

// gate is the approval stage of a tool call. ran says it produced the call's result: the
// approved call's own, or the error of a denial or expiry; otherwise the call runs as
// usual (no rule requires approval). An error ends the turn: awaitingApproval while a
// person has not decided.
func (t *turn) gate(ctx context.Context, call *provider.ToolCall) (text string, isErr, ran bool, err error) {
	v, err := t.approvalVerdict(ctx, call.Name)
	if err != nil || !v.Require {
		return "", false, false, err
	}
	key := t.key()
	name := ApprovalName(t.req.ID, key)
	_, asked := t.win.Done[key+askedSuffix]
	ta, err := t.approval(ctx, name)
	if err != nil {
		return "", false, false, err
	}
	if ta == nil && !asked {
		if ta, err = t.askApproval(ctx, name, call, v); err != nil {
			return "", false, false, err
		}
	}
	if ta != nil && !ta.Status.Decided() {
		t.queueAsked(key, call, ta)
		startWaitSpan(ctx, call, ta)
		return "", false, false, &awaitingApproval{name: name}
	}
	phase, by, reason := sessionsv1alpha1.ApprovalExpired, "", "the ToolApproval "+name+" was deleted"
	if ta != nil {
		phase, by, reason = ta.Status.Phase, ta.Status.DecidedBy, ta.Spec.Reason
	}
	if _, decided := t.win.Done[key+decidedSuffix]; decided && phase == sessionsv1alpha1.ApprovalApproved {
		// The decided record is durable before an approved call runs: with it and no result,
		// the call started and its result was lost. It is not run a second time.
		return errorResult(errors.New("interrupted: the approved call was started but its result was lost; it is not run again")), true, true, nil
	}
	t.queueDecided(key, call, phase, by, reason, ta)
	switch phase {
	case sessionsv1alpha1.ApprovalApproved:
		if err := t.flush(ctx); err != nil {
			return "", false, false, err
		}
		text, isErr := t.e.tools.run(ctx, t, call)
		return text, isErr, true, nil
	case sessionsv1alpha1.ApprovalDenied:
		return errorResult(errors.New("denied: " + reason)), true, true, nil
	default:
		return errorResult(errors.New("expired: no decision was made in time; the call did not run")), true, true, nil
	}
}

// approvalVerdict asks the namespace's and the Agent's rules about a call of tool.
func (t *turn) approvalVerdict(ctx context.Context, tool string) (policy.ApprovalVerdict, error) {
	return t.e.approvals.Verdict(ctx, t.req.Namespace, t.agent, tool)
}

// approval reads the call's ToolApproval; nil when there is none.
func (t *turn) approval(ctx context.Context, name string) (*sessionsv1alpha1.ToolApproval, error) {
	return t.e.approvals.Find(ctx, t.req.Namespace, name)
}

// askApproval creates the call's ToolApproval, owned by the turn's owner (deleted with it).
func (t *turn) askApproval(ctx context.Context, name string, call *provider.ToolCall, v policy.ApprovalVerdict) (*sessionsv1alpha1.ToolApproval, error) {
	o := t.req.Owner
	ta := &sessionsv1alpha1.ToolApproval{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.req.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: o.Kind, Name: o.Name,
				UID: OwnerUIDOf(t.req.ID), Controller: ptr.To(true)}}},
		Spec: sessionsv1alpha1.ToolApprovalSpec{SessionKey: t.session.Spec.Key, AgentID: t.session.Spec.AgentID, Tool: call.Name,
			Arguments: textutil.Truncate(string(call.Arguments), sessionsv1alpha1.MaxApprovalArguments),
			Owner:     sessionsv1alpha1.ApprovalOwner{Kind: o.Kind, Name: o.Name},
			ExpiresAt: metav1.NewTime(t.e.now().Add(v.Timeout).Truncate(time.Second))},
	}
	return t.e.approvals.Ask(ctx, ta)
}

// queueAsked records, once, that the call waits for a person: the whole call is here, the
// ToolApproval holds at most 8 KiB of its arguments.
func (t *turn) queueAsked(key string, call *provider.ToolCall, ta *sessionsv1alpha1.ToolApproval) {
	t.queueApprovalRecord(key+askedSuffix, call, fmt.Sprintf("approval asked: %s %s (ToolApproval %s, expires %s)",
		call.Name, string(call.Arguments), ta.Name, ta.Spec.ExpiresAt.UTC().Format(time.RFC3339)))
}

// queueDecided records how the call was decided: by whom, when and why.
func (t *turn) queueDecided(key string, call *provider.ToolCall, phase sessionsv1alpha1.ApprovalPhase, by, reason string, ta *sessionsv1alpha1.ToolApproval) {
	t.queueApprovalRecord(key+decidedSuffix, call, decidedText(phase, by, reason, ta))
}

// decidedText says how an approval was decided: "approval decided: Approved by carol at
// <time>: <reason>".
func decidedText(phase sessionsv1alpha1.ApprovalPhase, by, reason string, ta *sessionsv1alpha1.ToolApproval) string {
	text := "approval decided: " + string(phase)
	if by != "" {
		text += " by " + by
	}
	if ta != nil && ta.Status.DecidedAt != nil {
		text += " at " + ta.Status.DecidedAt.UTC().Format(time.RFC3339)
	}
	if reason != "" {
		text += ": " + reason
	}
	return text
}

// queueApprovalRecord queues, once, a system record of an approval under key k: of the
// tool call it is about, or of no call (nil: a budget's ask, budget_ask.go).
func (t *turn) queueApprovalRecord(k string, call *provider.ToolCall, text string) {
	if _, ok := t.win.Done[k]; ok {
		return
	}
	for _, p := range t.pending {
		if p.IdempotencyKey == k {
			return
		}
	}
	m := transcript.Message{Role: transcript.RoleSystem, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}},
		Provenance: &transcript.Provenance{Kind: ProvenanceToolApproval}}
	if call != nil {
		m.ToolCallID, m.ToolName, m.Provenance.SourceTool = call.ID, call.Name, call.Name
	}
	t.pending = append(t.pending, transcript.AppendRequest{IdempotencyKey: k, Message: m})
}

// startWaitSpan marks in the turn's trace that a call waits for a person; the wait spans
// turns (it ends when the decision lands), so the span is a point with the approval's name.
func startWaitSpan(ctx context.Context, call *provider.ToolCall, ta *sessionsv1alpha1.ToolApproval) {
	_, span := tracing.Tracer().Start(ctx, "await_approval "+call.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("gen_ai.tool.name", call.Name), attribute.String("gen_ai.tool.call.id", call.ID),
			attribute.String("agent_sessions.approval.name", ta.Name)))
	span.End()
}
