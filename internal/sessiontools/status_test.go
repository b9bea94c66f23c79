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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

func TestChangeKind(t *testing.T) {
	prov := func(kind string) *transcript.Provenance { return &transcript.Provenance{Kind: kind} }
	cases := map[string]struct {
		m    transcript.Message
		want string
	}{
		"a person's message":      {m: transcript.Message{Role: transcript.RoleUser}, want: ChangeMessage},
		"a person's send":         {m: transcript.Message{Role: transcript.RoleUser, Provenance: prov(transcript.ProvenanceExternal)}, want: ChangeMessage},
		"a child's outcome":       {m: transcript.Message{Role: transcript.RoleUser, Provenance: prov(transcript.ProvenanceSubagentAnnounce)}, want: ChangeChildOutcome},
		"an agent's send is none": {m: transcript.Message{Role: transcript.RoleUser, Provenance: prov(transcript.ProvenanceInterSession)}},
		"a compaction":            {m: transcript.Message{Role: compactionRole}, want: ChangeCompaction},
		"a reply is none":         {m: transcript.Message{Role: transcript.RoleAssistant}},
		"a tool result is none":   {m: transcript.Message{Role: transcript.RoleToolResult}},
	}
	for name, tc := range cases {
		if got := changeKind(&tc.m); got != tc.want {
			t.Errorf("%s: changeKind = %q, want %q", name, got, tc.want)
		}
	}
}

// statusFixture is a call as session agent:bob:main over a transcript of msgs, with a send
// and a run of its own in flight and a finished run.
func statusFixture(t *testing.T, msgs ...transcript.Message) *Call {
	t.Helper()
	s := session("agent:bob:main", "bob", "sid-bob")
	s.Spec.Label, s.Spec.Model, s.Spec.ThinkingLevel = "inbox", "big-model", sessionsv1alpha1.ThinkingLow
	s.Status.Usage = &sessionsv1alpha1.Usage{InputTokens: 10, OutputTokens: 5, Cost: "0.000001", Currency: "USD", Turns: 2}
	s.Status.TotalTokens, s.Status.MessageCount = 15, int64(len(msgs))
	store := transcripttest.NewMemoryStore()
	if _, err := store.CreateSession(t.Context(), transcript.SessionHeader{Namespace: ns, SessionID: "sid-bob", SessionKey: s.Spec.Key}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := store.Append(t.Context(), ns, "sid-bob", transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "send-1"},
		Spec:   sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:cy:main", FromSessionKey: s.Spec.Key},
		Status: sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendRunning}}
	running := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-1", UID: "uid-1"},
		Spec:   sessionsv1alpha1.SubagentRunSpec{Task: "t", Label: "research", RequesterSessionKey: s.Spec.Key},
		Status: sessionsv1alpha1.SubagentRunStatus{Phase: sessionsv1alpha1.RunRunning, ChildSessionKey: "agent:bob:subagent:1"}}
	done := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "run-2"},
		Spec:   sessionsv1alpha1.SubagentRunSpec{Task: "t", RequesterSessionKey: s.Spec.Key},
		Status: sessionsv1alpha1.SubagentRunStatus{Phase: sessionsv1alpha1.RunSucceeded}}
	done.Status.CompletedAt = ptr.To(metav1.Now())
	fc := newFakeClient(s, send, running, done)
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob"}}
	agent.Spec.Model.Name = "small-model"
	return &Call{Env: &Env{Client: fc, Reader: fc, Store: store}, Namespace: ns, Session: s, Agent: agent}
}

func text(role string, prov *transcript.Provenance, s string) transcript.Message {
	return transcript.Message{Role: role, Provenance: prov, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: s}}}
}

// session_status: the card of the calling session, its runs in flight, and the state
// version with the changes since an earlier one.
func TestSessionStatus(t *testing.T) {
	announce := &transcript.Provenance{Kind: transcript.ProvenanceSubagentAnnounce, SourceSessionKey: "agent:bob:subagent:1"}
	agentSend := &transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: "agent:cy:main"}
	msgs := []transcript.Message{
		text(transcript.RoleUser, nil, "plan the release"),                          // 1: a change
		text(transcript.RoleAssistant, nil, "spawning"),                             // 2
		text(transcript.RoleUser, agentSend, "from cy"),                             // 3: not a change
		text(transcript.RoleUser, announce, "Sub-agent announce step.\nStatus: ok"), // 4: a change
		text(transcript.RoleAssistant, nil, "noted"),                                // 5
	}
	type view struct {
		StateVersion int64
		Versions     []int64
		Kinds        []string
		More         bool
	}
	cases := map[string]struct {
		args string
		want view
	}{
		"no changesSince: the version only": {args: `{}`, want: view{StateVersion: 4}},
		"changes since 0":                   {args: `{"changesSince":0}`, want: view{StateVersion: 4, Versions: []int64{1, 4}, Kinds: []string{ChangeMessage, ChangeChildOutcome}}},
		"changes since 1":                   {args: `{"changesSince":1}`, want: view{StateVersion: 4, Versions: []int64{4}, Kinds: []string{ChangeChildOutcome}}},
		"nothing since the version":         {args: `{"changesSince":4}`, want: view{StateVersion: 4}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := statusTool().Run(t.Context(), statusFixture(t, msgs...), json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			card := out.(*StatusCard)
			got := view{StateVersion: card.StateVersion, More: card.MoreChanges}
			for _, c := range card.Changes {
				got.Versions, got.Kinds = append(got.Versions, c.Version), append(got.Kinds, c.Kind)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	out, err := statusTool().Run(t.Context(), statusFixture(t, msgs...), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &StatusCard{SessionKey: "agent:bob:main", SessionID: "sid-bob", AgentID: "bob", Label: "inbox", Phase: "Active",
		Model: "big-model", ModelOverride: "big-model", ThinkingLevel: "low", TotalTokens: 15, MessageCount: 5,
		Usage: sessionsv1alpha1.Usage{InputTokens: 10, OutputTokens: 5, Cost: "0.000001", Currency: "USD", Turns: 2},
		RunsInFlight: []RunInFlight{
			{Kind: "send", Name: "send-1", Phase: "Running", Target: "agent:cy:main"},
			{Kind: "run", Name: "run-1", RunID: "uid-1", Phase: "Running", ChildSessionKey: "agent:bob:subagent:1", Label: "research"},
		}, StateVersion: 4}
	if diff := cmp.Diff(want, out, cmpopts.IgnoreFields(StatusCard{}, "UpdatedAt")); diff != "" {
		t.Errorf("card (-want +got):\n%s", diff)
	}
}

// The version walk pages back through long transcripts, and bounds the changes it returns
// to the newest MaxChanges.
func TestStateOfPagesBack(t *testing.T) {
	var msgs []transcript.Message
	for range 3 * transcript.MaxLimit {
		msgs = append(msgs, text(transcript.RoleAssistant, nil, "busy"))
	}
	msgs[0] = text(transcript.RoleUser, nil, "the only change") // seq 1, three pages back
	c := statusFixture(t, msgs...)
	card, err := c.Status(t.Context(), "agent:bob:main", -1)
	if err != nil || card.StateVersion != 1 {
		t.Fatalf("stateVersion = %v, %v; want 1", card, err)
	}

	msgs = nil
	for range MaxChanges + 5 {
		msgs = append(msgs, text(transcript.RoleUser, nil, "hello"))
	}
	c = statusFixture(t, msgs...)
	card, err = c.Status(t.Context(), "agent:bob:main", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Changes) != MaxChanges || !card.MoreChanges || card.Changes[0].Version != 6 || card.StateVersion != MaxChanges+5 {
		t.Errorf("changes %d (first %d), more %v, version %d; want the newest %d, more, version %d",
			len(card.Changes), card.Changes[0].Version, card.MoreChanges, card.StateVersion, MaxChanges, MaxChanges+5)
	}
}

// A person names the session; a session it cannot see is refused.
func TestSessionStatusArguments(t *testing.T) {
	c := statusFixture(t)
	c.Session, c.Agent = nil, nil
	if _, err := statusTool().Run(t.Context(), c, json.RawMessage(`{}`)); err == nil || err.Error() != "sessionKey is required" {
		t.Errorf("a person without sessionKey: err = %v", err)
	}
	out, err := statusTool().Run(t.Context(), c, json.RawMessage(`{"sessionKey":"agent:bob:main"}`))
	if err != nil || out.(*StatusCard).Model != "big-model" {
		t.Errorf("a person's card = %+v, %v", out, err)
	}
}

// sessions_yield speaks for a session only, and names what it waits for.
func TestYield(t *testing.T) {
	c := statusFixture(t)
	out, err := yieldTool().Run(t.Context(), c, json.RawMessage(`{"message":"later"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := out.(YieldResult)
	if got.Status != StatusYielded || got.Message != "later" || len(got.WaitingFor) != 2 {
		t.Errorf("yield = %+v, want yielded, waiting for the send and the run in flight", got)
	}
	c.Session = nil
	if _, err := yieldTool().Run(t.Context(), c, nil); err == nil {
		t.Errorf("a person's yield: no error, want one (no session to end a turn of)")
	}
}
