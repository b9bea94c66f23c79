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

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// The gateway's newer sessions_list parameters reach sessionrows; without them the
// parameters are the seeds' alone.
func TestListArgsParams(t *testing.T) {
	cases := map[string]struct {
		raw  string
		want sessionrows.ListParams
	}{
		"seeds' parameters only": {raw: `{"kinds":["main"],"limit":5}`, want: sessionrows.ListParams{Kinds: []string{"main"}, Limit: 5}},
		"newer filters": {raw: `{"label":"ops","agentId":"bob","search":"deploy","archived":true,"includeLastMessage":true}`,
			want: sessionrows.ListParams{Limit: sessionrows.DefaultListLimit, Label: "ops", AgentID: "bob", Search: "deploy", Archived: true, IncludeLastMessage: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var a listArgs
			if err := DecodeArgs(json.RawMessage(tc.raw), &a); err != nil {
				t.Fatal(err)
			}
			p, err := a.params()
			if diff := cmp.Diff(tc.want, p); err != nil || diff != "" {
				t.Errorf("err %v; (-want +got):\n%s", err, diff)
			}
		})
	}
}

// historyFixture is a call over one session whose transcript holds texts, oldest first.
func historyFixture(t *testing.T, texts ...string) *Call {
	t.Helper()
	s := session("agent:bob:main", "bob", "sid-bob")
	store := transcripttest.NewMemoryStore()
	if _, err := store.CreateSession(t.Context(), transcript.SessionHeader{Namespace: ns, SessionID: "sid-bob", SessionKey: s.Spec.Key}); err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if _, err := store.Append(t.Context(), ns, "sid-bob", transcript.AppendRequest{Message: transcript.Message{
			Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}}); err != nil {
			t.Fatal(err)
		}
	}
	fc := newFakeClient(s)
	return &Call{Env: &Env{Client: fc, Reader: fc, Store: store}, Namespace: ns}
}

// sessions_history masks credential-like text and says so, and says when older messages
// were left out.
func TestHistoryRedactsAndFlags(t *testing.T) {
	type result struct {
		Texts                      []string
		Truncated, ContentRedacted bool
	}
	cases := map[string]struct {
		texts []string
		args  string
		want  result
	}{
		"nothing to mask": {texts: []string{"hello"}, args: `{"sessionKey":"agent:bob:main"}`,
			want: result{Texts: []string{"hello"}}},
		"a key is masked": {texts: []string{"my key is sk-abcdefghijklmnop0123456789"}, args: `{"sessionKey":"agent:bob:main"}`,
			want: result{Texts: []string{"my key is [REDACTED]"}, ContentRedacted: true}},
		"older messages left out": {texts: []string{"one", "two"}, args: `{"sessionKey":"agent:bob:main","limit":1}`,
			want: result{Texts: []string{"two"}, Truncated: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := historyFixture(t, tc.texts...)
			out, err := historyTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			h := out.(HistoryResult)
			got := result{Truncated: h.Truncated, ContentRedacted: h.ContentRedacted}
			for _, m := range h.Messages {
				got.Texts = append(got.Texts, m.Message.Content[0].Text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The masked page is a copy: the store's records keep their text.
func TestRedactRecordsCopies(t *testing.T) {
	recs := []transcript.Record{{Message: transcript.Message{Content: []transcript.ContentBlock{
		{Type: transcript.BlockToolCall, Arguments: json.RawMessage(`{"token":"abcdefghijkl1234"}`)}}}}}
	out, redacted := redactRecords(recs)
	if !redacted || string(out[0].Message.Content[0].Arguments) != `{"token":"[REDACTED]"}` {
		t.Fatalf("redactRecords = %s, %v", out[0].Message.Content[0].Arguments, redacted)
	}
	if string(recs[0].Message.Content[0].Arguments) != `{"token":"abcdefghijkl1234"}` {
		t.Errorf("the input was changed: %s", recs[0].Message.Content[0].Arguments)
	}
}

// A waited send's outcome as the tool reports it: ok with the reply; ok with reply "" and
// noReply when the target answered no text or exactly REPLY_SKIP.
func TestWaitResult(t *testing.T) {
	cases := map[string]struct {
		st   sessionsv1alpha1.SessionSendStatus
		want StatusResult
	}{
		"a reply":    {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: "pong"}, want: StatusResult{Status: StatusOK, Reply: "pong"}},
		"no text":    {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK}, want: StatusResult{Status: StatusOK, NoReply: true}},
		"blank text": {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: " \n"}, want: StatusResult{Status: StatusOK, NoReply: true}},
		"REPLY_SKIP": {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: "REPLY_SKIP\n"}, want: StatusResult{Status: StatusOK, NoReply: true}},
		"timeout":    {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendTimeout, Error: "late"}, want: StatusResult{Status: StatusTimeout, Error: "late"}},
		"error":      {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendError, Error: "boom"}, want: StatusResult{Status: StatusError, Error: "boom"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient()
			c := &Call{Env: &Env{Client: fc, Reader: fc, Watcher: fc}, Namespace: ns}
			s := &sessionsv1alpha1.SessionSend{Status: tc.st}
			s.Name, s.Namespace = "s1", ns
			got, err := c.Wait(t.Context(), s, 0)
			if err != nil {
				t.Fatal(err)
			}
			got.RunID = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// sessions_send names its target by label or by an agent's main session as well.
func TestSendTargetArguments(t *testing.T) {
	labelled := session("agent:bob:webchat:group:ops", "bob", "sid-ops")
	labelled.Spec.Label = "ops"
	cases := map[string]struct {
		args    string
		wantKey string
		wantErr string
	}{
		"by key":        {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":0}`, wantKey: "agent:bob:main"},
		"by label":      {args: `{"label":"ops","message":"hi","timeoutSeconds":0}`, wantKey: "agent:bob:webchat:group:ops"},
		"by agent":      {args: `{"agentId":"cy","message":"hi","timeoutSeconds":0}`, wantKey: "agent:cy:main"},
		"no target":     {args: `{"message":"hi"}`, wantErr: "name the target with one of sessionKey, label or agentId"},
		"no message":    {args: `{"label":"ops"}`, wantErr: "message is required"},
		"unknown label": {args: `{"label":"nope","message":"hi"}`, wantErr: `no active session has the label "nope"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(labelled)
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, ID: name}
			_, err := sendTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sends sessionsv1alpha1.SessionSendList
			if err := fc.List(t.Context(), &sends); err != nil || len(sends.Items) != 1 {
				t.Fatalf("sends = %v, %v; want one", sends.Items, err)
			}
			if got := sends.Items[0].Spec.SessionKey; got != tc.wantKey {
				t.Errorf("spec.sessionKey = %q, want %q", got, tc.wantKey)
			}
		})
	}
}

// context fork needs a calling session and its own agent; isolated (or none) is the seeds'.
func TestForkable(t *testing.T) {
	self := session("agent:bob:main", "bob", "sid-bob")
	cases := map[string]struct {
		a       spawnArgs
		self    *sessionsv1alpha1.AgentSession
		wantErr string
	}{
		"isolated by default":  {a: spawnArgs{Task: "t"}, self: nil},
		"fork, same agent":     {a: spawnArgs{Task: "t", Context: "fork"}, self: self},
		"fork, agent named":    {a: spawnArgs{Task: "t", Context: "fork", AgentID: "bob"}, self: self},
		"fork, another agent":  {a: spawnArgs{Task: "t", Context: "fork", AgentID: "cy"}, self: self, wantErr: `context "fork" runs the child under this session's own agent bob, not cy: omit agentId or use context "isolated"`},
		"fork without session": {a: spawnArgs{Task: "t", Context: "fork"}, wantErr: `context "fork" starts the child from the calling session's conversation and this call speaks for no session; use context "isolated"`},
	}
	for name, tc := range cases {
		err := forkable(tc.a, tc.self)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("%s: forkable = %q, want %q", name, got, tc.wantErr)
		}
	}
}
