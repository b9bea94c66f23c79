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
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestManageOps(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	test := jsonOp{Op: "test", Path: "/status/sessionId", Value: "sid"}
	cases := map[string]struct {
		raw            string
		hasAnnotations bool
		want           []jsonOp
		wantErr        string
	}{
		"patch a label": {raw: `{"action":"patch","sessionKey":"k","label":"ops"}`,
			want: []jsonOp{{Op: "add", Path: "/spec/label", Value: "ops"}}},
		"patch all three, guarded": {raw: `{"action":"patch","sessionKey":"k","expectedSessionId":"sid","label":"","model":"big","thinkingLevel":"low"}`,
			want: []jsonOp{test, {Op: "add", Path: "/spec/label", Value: ""}, {Op: "add", Path: "/spec/model", Value: "big"}, {Op: "add", Path: "/spec/thinkingLevel", Value: "low"}}},
		"patch the send policy": {raw: `{"action":"patch","sessionKey":"k","sendPolicy":"deny"}`,
			want: []jsonOp{{Op: "add", Path: "/spec/sendPolicy", Value: "deny"}}},
		"inherit unsets the send policy": {raw: `{"action":"patch","sessionKey":"k","sendPolicy":"inherit"}`,
			want: []jsonOp{{Op: "add", Path: "/spec/sendPolicy", Value: "deny"}, {Op: "remove", Path: "/spec/sendPolicy"}}},
		"an unknown send policy": {raw: `{"action":"patch","sessionKey":"k","sendPolicy":"maybe"}`, wantErr: `sendPolicy "maybe": want allow, deny or inherit`},
		"archive": {raw: `{"action":"archive","sessionKey":"k","expectedSessionId":"sid"}`,
			want: []jsonOp{test, {Op: "add", Path: "/metadata/annotations", Value: map[string]string{}},
				{Op: "add", Path: "/metadata/annotations/sessions.agents.dev~1archive-at", Value: "2026-11-25T12:00:00Z"}}},
		"reset, annotations there": {raw: `{"action":"reset","sessionKey":"k","expectedSessionId":"sid"}`, hasAnnotations: true,
			want: []jsonOp{test, {Op: "add", Path: "/metadata/annotations/sessions.agents.dev~1reset", Value: "sid"}}},
		"archive unguarded": {raw: `{"action":"archive","sessionKey":"k"}`, wantErr: "archive needs expectedSessionId (the sessionId from sessions_list)"},
		"reset unguarded":   {raw: `{"action":"reset","sessionKey":"k"}`, wantErr: "reset needs expectedSessionId (the sessionId from sessions_list)"},
		"patch of nothing":  {raw: `{"action":"patch","sessionKey":"k"}`, wantErr: "patch needs one of label, model, thinkingLevel or sendPolicy"},
		"no session":        {raw: `{"action":"patch","label":"x"}`, wantErr: "sessionKey is required"},
		"restore drops the archive request": {raw: `{"action":"restore","sessionKey":"k","expectedSessionId":"sid"}`, hasAnnotations: true,
			want: []jsonOp{test, {Op: "add", Path: "/metadata/annotations/sessions.agents.dev~1archive-at", Value: ""},
				{Op: "remove", Path: "/metadata/annotations/sessions.agents.dev~1archive-at"},
				{Op: "add", Path: "/metadata/annotations/sessions.agents.dev~1restore", Value: "sid"}}},
		"restore unguarded": {raw: `{"action":"restore","sessionKey":"k"}`, wantErr: "restore needs expectedSessionId (the sessionId from sessions_list)"},
		"unknown action":    {raw: `{"action":"revive","sessionKey":"k","expectedSessionId":"sid"}`, wantErr: `unknown action "revive": want patch, archive, restore or reset`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var a ManageArgs
			if err := DecodeArgs(json.RawMessage(tc.raw), &a); err != nil {
				t.Fatal(err)
			}
			got, err := a.ops(now, tc.hasAnnotations)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The sessions tool as a session's own call: within its visibility, guarded by the
// sessionId, a model only its Agent allows.
func TestManage(t *testing.T) {
	self := session("agent:bob:main", "bob", "sid-bob")
	other := session("agent:cy:main", "cy", "sid-cy")
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob"}}
	agent.Spec.Model.Name, agent.Spec.AllowedModels = "small", []string{"big"}
	type result struct {
		Status, Error string
		Label, Model  string
		Annotations   map[string]string
	}
	cases := map[string]struct {
		args string
		want result
	}{
		"patch its own label and model": {args: `{"action":"patch","sessionKey":"main","label":"inbox","model":"big"}`,
			want: result{Status: StatusOK, Label: "inbox", Model: "big"}},
		"a model the agent does not allow": {args: `{"action":"patch","sessionKey":"main","model":"huge"}`,
			want: result{Status: StatusForbidden, Error: `model "huge" is not allowed for agent bob (allowed: small, big); add it to the Agent's spec.allowedModels`}},
		"a stale sessionId": {args: `{"action":"archive","sessionKey":"main","expectedSessionId":"sid-old"}`,
			want: result{Status: StatusForbidden, Error: `session agent:bob:main is now sessionId "sid-bob", not the expected "sid-old": list sessions again and act on the session you mean`}},
		"reset": {args: `{"action":"reset","sessionKey":"main","expectedSessionId":"sid-bob"}`,
			want: result{Status: StatusOK, Annotations: map[string]string{sessionsv1alpha1.ResetAnnotation: "sid-bob"}}},
		"restore of a session not archived": {args: `{"action":"restore","sessionKey":"main","expectedSessionId":"sid-bob"}`,
			want: result{Status: StatusError, Error: "session agent:bob:main is not archived (phase Active): there is nothing to restore"}},
		"restore with a stale sessionId": {args: `{"action":"restore","sessionKey":"main","expectedSessionId":"sid-old"}`,
			want: result{Status: StatusForbidden, Error: `session agent:bob:main is now sessionId "sid-bob", not the expected "sid-old": list sessions again and act on the session you mean`}},
		"its own send policy: owner-only": {args: `{"action":"patch","sessionKey":"main","sendPolicy":"allow"}`,
			want: result{Status: StatusForbidden, Error: "sendPolicy of session agent:bob:main is set by a person with the verb set-send-policy (sessions patch or /send on|off|inherit), never by a session's own call"}},
		"restore of a deleted session": {args: `{"action":"restore","sessionKey":"agent:bob:gone","expectedSessionId":"sid-gone"}`,
			want: result{Status: StatusNotFound, Error: `session "agent:bob:gone" not found: it was deleted (a sub-agent's cleanup: delete, or by hand) and the transcript store keeps no record of it, so there is nothing to restore`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(self.DeepCopy(), other.DeepCopy(), agent.DeepCopy())
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, Session: self, Agent: agent}
			out, err := manageTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			var got result
			got.Status, got.Error = resultStatus(out)
			s := &sessionsv1alpha1.AgentSession{}
			if err := fc.Get(t.Context(), client.ObjectKeyFromObject(self), s); err != nil {
				t.Fatal(err)
			}
			got.Label, got.Model, got.Annotations = s.Spec.Label, s.Spec.Model, s.Annotations
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// Another agent's session is outside the default visibility (tree).
	fc := newFakeClient(self.DeepCopy(), other.DeepCopy(), agent.DeepCopy())
	c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, Session: self, Agent: agent}
	if _, err := manageTool().Run(t.Context(), c, json.RawMessage(`{"action":"patch","sessionKey":"agent:cy:main","label":"x"}`)); err == nil {
		t.Errorf("patched a session outside this session's visibility")
	}
}

// A restore of an archived session is a guarded write of intent that the controller acts
// on: the archive request goes, the restore request names the sessionId. One whose
// transcript a restore already found gone is not found.
func TestManageRestore(t *testing.T) {
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob"}}
	archived := func(reason, msg string) *sessionsv1alpha1.AgentSession {
		s := session("agent:bob:main", "bob", "sid-bob")
		s.Status.Phase = sessionsv1alpha1.SessionArchived
		s.Annotations = map[string]string{sessionsv1alpha1.ArchiveAtAnnotation: "2026-11-25T12:00:00Z", "keep": "me"}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: reason, Message: msg})
		return s
	}
	type result struct {
		Status, Error string
		Annotations   map[string]string
	}
	cases := map[string]struct {
		s    *sessionsv1alpha1.AgentSession
		want result
	}{
		"archived": {s: archived("Archived", "the transcript is archived"),
			want: result{Status: StatusAccepted, Annotations: map[string]string{"keep": "me", sessionsv1alpha1.RestoreAnnotation: "sid-bob"}}},
		"its transcript gone": {s: archived(sessionsv1alpha1.ReasonRestoreFailed, "cannot restore: gone"),
			want: result{Status: StatusNotFound, Error: "session agent:bob:main: cannot restore: gone",
				Annotations: map[string]string{"keep": "me", sessionsv1alpha1.ArchiveAtAnnotation: "2026-11-25T12:00:00Z"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(tc.s.DeepCopy(), agent.DeepCopy())
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, Session: tc.s, Agent: agent}
			out, err := manageTool().Run(t.Context(), c, json.RawMessage(`{"action":"restore","sessionKey":"main","expectedSessionId":"sid-bob"}`))
			if err != nil {
				t.Fatal(err)
			}
			var got result
			got.Status, got.Error = resultStatus(out)
			s := &sessionsv1alpha1.AgentSession{}
			if err := fc.Get(t.Context(), client.ObjectKeyFromObject(tc.s), s); err != nil {
				t.Fatal(err)
			}
			got.Annotations = s.Annotations
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestoreOutcome(t *testing.T) {
	withPhase := func(sid string, phase sessionsv1alpha1.SessionPhase, reason string) *sessionsv1alpha1.AgentSession {
		s := session("agent:bob:main", "bob", sid)
		s.Status.Phase = phase
		if reason != "" {
			meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: reason, Message: "why"})
		}
		return s
	}
	cases := map[string]struct {
		s           *sessionsv1alpha1.AgentSession
		wantStatus  string
		wantSettled bool
	}{
		"active again":          {s: withPhase("sid", sessionsv1alpha1.SessionActive, ""), wantStatus: StatusOK, wantSettled: true},
		"still archived":        {s: withPhase("sid", sessionsv1alpha1.SessionArchived, "Archived")},
		"transcript gone":       {s: withPhase("sid", sessionsv1alpha1.SessionArchived, sessionsv1alpha1.ReasonRestoreFailed), wantStatus: StatusNotFound, wantSettled: true},
		"reset in the meantime": {s: withPhase("sid-2", sessionsv1alpha1.SessionActive, ""), wantStatus: StatusError, wantSettled: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, settled := restoreOutcome(tc.s, "sid")
			status, _ := resultStatus(out)
			if settled != tc.wantSettled || status != tc.wantStatus {
				t.Errorf("restoreOutcome = %q, %v; want %q, %v", status, settled, tc.wantStatus, tc.wantSettled)
			}
		})
	}
}

// resultStatus is the status and error of a sessions tool result.
func resultStatus(out any) (status, errText string) {
	switch r := out.(type) {
	case ManageResult:
		return r.Status, ""
	case *StatusResult:
		return r.Status, r.Error
	}
	return "", ""
}
