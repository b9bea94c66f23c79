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
	"errors"
	"fmt"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// DefaultMaxPingPongTurns is the seeds' bound when no SessionPolicy sets one.
const DefaultMaxPingPongTurns = 5

// nextPingPong says which round comes next in the reply-back loop and in which session, or
// ok=false when the loop is over: no requester (or it is the target), the last reply was
// REPLY_SKIP or empty, or maxTurns ping-pong turns (rounds after the first) have run.
// Rounds alternate: even rounds run in the requester, odd rounds in the target.
func nextPingPong(turns []sessionsv1alpha1.SendTurn, from, target string, maxTurns int) (round int, session string, ok bool) {
	if from == "" || from == target || len(turns) == 0 {
		return 0, "", false
	}
	last := turns[len(turns)-1]
	if last.Skipped || last.Error != "" || len(turns)-1 >= maxTurns {
		return 0, "", false
	}
	round = len(turns) + 1
	if round%2 == 0 {
		return round, from, true
	}
	return round, target, true
}

// latestReply is the announce's "latest ping-pong reply": that of the last turn that said
// something, never the REPLY_SKIP or empty reply that ended the exchange, nor a failed turn.
func latestReply(turns []sessionsv1alpha1.SendTurn) sessionsv1alpha1.SendTurn {
	for i := len(turns) - 1; i >= 0; i-- {
		if t := turns[i]; !t.Skipped && t.Error == "" {
			return t
		}
	}
	return sessionsv1alpha1.SendTurn{}
}

// maxPingPong is the namespace's agentToAgent.maxPingPongTurns, 0..5, default 5.
func maxPingPong(p *sessionsv1alpha1.SessionPolicy) int {
	if p == nil || p.Spec.AgentToAgent.MaxPingPongTurns == nil {
		return DefaultMaxPingPongTurns
	}
	return int(*p.Spec.AgentToAgent.MaxPingPongTurns)
}

// replyBack runs the ping-pong turns one after the other; each turn's input is the other
// side's latest reply. It reports done once the loop is over.
func (r *SessionSendReconciler) replyBack(ctx context.Context, f *ownerflow.Flow[*sessionsv1alpha1.SessionSend]) (bool, error) {
	send, st := f.Obj, &f.Obj.Status
	pol, err := r.Lookup.SessionPolicy(ctx, send.Namespace)
	if err != nil {
		return false, err
	}
	for {
		round, session, ok := nextPingPong(st.Turns, send.Spec.FromSessionKey, f.Session.Spec.Key, maxPingPong(pol))
		if !ok {
			return true, nil
		}
		last := st.Turns[len(st.Turns)-1]
		if why, err := r.replyBackDenied(ctx, send.Namespace, pol, session); err != nil || why != "" {
			if why != "" {
				// The exchange ends where the send policy would refuse a send into that session.
				st.Turns = append(st.Turns, sessionsv1alpha1.SendTurn{Round: int32(round), Session: session, Skipped: true, Error: textutil.Truncate(why, ownerflow.MaxErrorText)})
			}
			return why != "", err
		}
		input, err := r.WholeText(ctx, send.Namespace, last.Session, last.Reply, last.ReplySeq)
		if err != nil {
			return false, err
		}
		res, finished, err := r.RunTurn(ctx, f, fmt.Sprintf("round-%d", round), func() turns.TurnRequest {
			return turns.TurnRequest{SessionKey: session, Input: ownerflow.TextMessage(input,
				&transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: last.Session, SourceTool: "sessions_send"}),
				SystemContext: protocol.ReplyBack(last.Session, round-1, maxPingPong(pol))}
		})
		if !finished || err != nil {
			st.Phase = sessionsv1alpha1.SendReplyBack
			return false, err
		}
		st.Usage = usage.Add(st.Usage, res.Usage())
		turn := sessionsv1alpha1.SendTurn{Round: int32(round), Session: session, Skipped: endsPingPong(res.Text)}
		turn.Reply, turn.ReplySeq = ownerflow.StatusText(res.Text, res.ReplySeq)
		if res.Err != nil {
			turn.Error = textutil.Truncate(res.Err.Error(), ownerflow.MaxErrorText)
		}
		st.Turns = append(st.Turns, turn)
		if errors.Is(res.Err, budget.ErrExceeded) {
			return false, r.stopForBudget(ctx, f, res.Err.Error())
		}
	}
}

// replyBackDenied is why the send policy refuses a reply-back turn in the session named key
// ("" when it allows it): every turn of the exchange runs only where a send could.
func (r *SessionSendReconciler) replyBackDenied(ctx context.Context, namespace string, pol *sessionsv1alpha1.SessionPolicy, key string) (string, error) {
	s, err := r.Lookup.SessionByKey(ctx, namespace, key)
	if err != nil || s == nil {
		return "", err
	}
	var sp *sessionsv1alpha1.SendPolicySpec
	if pol != nil {
		sp = &pol.Spec.SendPolicy
	}
	if d := policy.TurnAllowed(sp, s); !d.Allowed {
		return "reply-back stopped: " + d.Reason, nil
	}
	return "", nil
}
