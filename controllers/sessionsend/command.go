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

package sessionsend

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// command carries out a person's standalone /send on|off|inherit (admission required the
// verb set-send-policy of its creator): the target's spec.sendPolicy is set, the command is
// recorded in the target's transcript (role command, never given to the model), and the send
// ends ok with what it set, Completed. Any other send goes on to round 1.
func (r *SessionSendReconciler) command(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	send, target, st := f.Obj, f.Session, &f.Obj.Status
	cmd, ok := policy.IsSendCommand(&send.Spec)
	if !ok {
		return true, nil
	}
	if target.Spec.SendPolicy != cmd.Policy {
		orig := target.DeepCopy()
		target.Spec.SendPolicy = cmd.Policy
		if err := r.Patch(ctx, target, client.MergeFrom(orig)); err != nil {
			return false, err
		}
		f.Event(corev1.EventTypeNormal, "SendPolicySet", "%s", policy.SendCommandReply(cmd, target.Spec.Key))
	}
	res, finished, err := r.RunTurn(ctx, f, "command", func() turns.TurnRequest {
		return turns.TurnRequest{SessionKey: target.Spec.Key, RecordOnly: true, Input: transcript.Message{Role: transcript.RoleCommand,
			Content:    []transcript.ContentBlock{{Type: transcript.BlockText, Text: textutil.Truncate(send.Spec.Message, ownerflow.MaxStatusText)}},
			Provenance: &transcript.Provenance{Kind: transcript.ProvenanceExternal, SourceTool: "sessions_send"}}}
	})
	if !finished || err != nil {
		return false, err
	}
	if res.Err != nil {
		r.failWith(f, "CommandNotRecorded", "the send policy was set; recording the command in the transcript failed: "+res.Err.Error())
		return false, nil
	}
	now := metav1.NewTime(r.Clock.Now())
	send.SetTargetKey(target.Spec.Key)
	st.RunID, st.StartedAt = turns.TurnID(send.UID, "command"), &now
	st.Status, st.Reply = sessionsv1alpha1.SendOK, policy.SendCommandReply(cmd, target.Spec.Key)
	setReplied(send, metav1.ConditionTrue, "Command", st.Reply)
	// A command has no round 1, reply-back or announce: it completes here, in the same
	// status write as its reply, and the steps after it do not run.
	_, err = r.complete(ctx, f)
	return false, err
}
