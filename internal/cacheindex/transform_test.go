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

package cacheindex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestTrimFinishedSend(t *testing.T) {
	send := func(phase sessionsv1alpha1.SendPhase) *sessionsv1alpha1.SessionSend {
		return &sessionsv1alpha1.SessionSend{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
			Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "a long message"},
			Status: sessionsv1alpha1.SessionSendStatus{Phase: phase, Status: sessionsv1alpha1.SendOK, Reply: "a long reply", RunID: "uid/round-1",
				Turns:      []sessionsv1alpha1.SendTurn{{Round: 1, Session: "agent:bob:main", Reply: "a long reply"}},
				Announce:   &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Message: "the announce", Target: "webchat:room"},
				Conditions: []metav1.Condition{{Type: sessionsv1alpha1.ConditionCompleted, Status: metav1.ConditionTrue}}},
		}
	}
	trimmed := func(phase sessionsv1alpha1.SendPhase) *sessionsv1alpha1.SessionSend {
		return &sessionsv1alpha1.SessionSend{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
			Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main"},
			// The target, left out of the status as spec.sessionKey itself, is kept without the run id.
			Status: sessionsv1alpha1.SessionSendStatus{Phase: phase, Status: sessionsv1alpha1.SendOK, TargetSessionKey: "agent:bob:main",
				Announce: &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered}},
		}
	}
	unresolved := &sessionsv1alpha1.SessionSend{Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:nope", Message: "hi"},
		Status: sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendFailed, Status: sessionsv1alpha1.SendError, Error: "target not found"}}
	cases := map[string]struct {
		in, want any
	}{
		"a running send is kept whole":       {in: send(sessionsv1alpha1.SendRunning), want: send(sessionsv1alpha1.SendRunning)},
		"a send in reply-back is kept":       {in: send(sessionsv1alpha1.SendReplyBack), want: send(sessionsv1alpha1.SendReplyBack)},
		"a completed send keeps its outcome": {in: send(sessionsv1alpha1.SendCompleted), want: trimmed(sessionsv1alpha1.SendCompleted)},
		"a failed send keeps its outcome":    {in: send(sessionsv1alpha1.SendFailed), want: trimmed(sessionsv1alpha1.SendFailed)},
		"a cancelled send keeps its outcome": {in: send(sessionsv1alpha1.SendCancelled), want: trimmed(sessionsv1alpha1.SendCancelled)},
		"a send failed before resolving has no target": {in: unresolved, want: &sessionsv1alpha1.SessionSend{Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:nope"},
			Status: sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendFailed, Status: sessionsv1alpha1.SendError}}},
		"other kinds pass through": {in: &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, want: &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TrimFinishedSend(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrimFinishedRun(t *testing.T) {
	done := metav1.Now()
	run := func(completedAt *metav1.Time) *sessionsv1alpha1.SubagentRun {
		return &sessionsv1alpha1.SubagentRun{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
			Spec: sessionsv1alpha1.SubagentRunSpec{Task: "a long task", RequesterSessionKey: "agent:main:main",
				Attachments: []sessionsv1alpha1.Attachment{{Name: "big.bin", Content: "a megabyte"}}},
			Status: sessionsv1alpha1.SubagentRunStatus{Phase: sessionsv1alpha1.RunSucceeded, ChildSessionKey: "agent:x:subagent:1", Result: "a long result",
				Notes: "n", Stats: &sessionsv1alpha1.RunStats{Runtime: "1s"}, Attachments: []sessionsv1alpha1.AttachmentReceipt{{Name: "big.bin"}},
				Announce:    &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Message: "the announce"},
				Conditions:  []metav1.Condition{{Type: sessionsv1alpha1.ConditionCompleted, Status: metav1.ConditionTrue}},
				OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: completedAt}},
		}
	}
	trimmed := &sessionsv1alpha1.SubagentRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec:       sessionsv1alpha1.SubagentRunSpec{RequesterSessionKey: "agent:main:main"},
		Status: sessionsv1alpha1.SubagentRunStatus{Phase: sessionsv1alpha1.RunSucceeded, ChildSessionKey: "agent:x:subagent:1",
			Announce:    &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered},
			Conditions:  []metav1.Condition{{Type: sessionsv1alpha1.ConditionCompleted, Status: metav1.ConditionTrue}},
			OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &done}},
	}
	cases := map[string]struct {
		in, want any
	}{
		"a run still announcing is kept whole": {in: run(nil), want: run(nil)},
		"a finished run keeps its outcome":     {in: run(&done), want: trimmed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TrimFinishedRun(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
