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

package a2aserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// A send's phase and status are the task's state; a completed one carries the reply as its
// artifact, a failed or cancelled one its error as the status message.
func TestTaskFollowsTheSend(t *testing.T) {
	at := metav1.Now()
	for name, tc := range map[string]struct {
		st        sessionsv1alpha1.SessionSendStatus
		state     a2a.TaskState
		artifacts []*a2a.Artifact
		message   string
	}{
		"not yet seen by the controller": {state: a2a.TaskStateSubmitted},
		"accepted":                       {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendAccepted, Phase: sessionsv1alpha1.SendRunning}, state: a2a.TaskStateWorking},
		"running, no status yet":         {st: sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendRunning}, state: a2a.TaskStateWorking},
		"a tool call waits for a person": {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendAccepted, Phase: sessionsv1alpha1.SendAwaitingApproval}, state: a2a.TaskStateInputRequired},
		"timed out, the run goes on":     {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendTimeout, Phase: sessionsv1alpha1.SendRunning}, state: a2a.TaskStateWorking},
		"ok": {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Phase: sessionsv1alpha1.SendCompleted, Reply: "pong", OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &at}},
			state: a2a.TaskStateCompleted, artifacts: []*a2a.Artifact{replyArtifact("pong")}},
		"error":     {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendError, Phase: sessionsv1alpha1.SendFailed, Error: "model down"}, state: a2a.TaskStateFailed, message: "model down"},
		"cancelled": {st: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendError, Phase: sessionsv1alpha1.SendCancelled, Error: "cancelled"}, state: a2a.TaskStateCanceled, message: "cancelled"},
	} {
		t.Run(name, func(t *testing.T) {
			task := Task(&sessionsv1alpha1.SessionSend{Status: tc.st}, "uid/round-1", "ctx")
			if task.Status.State != tc.state {
				t.Errorf("state %q, want %q", task.Status.State, tc.state)
			}
			if d := cmp.Diff(tc.artifacts, task.Artifacts); d != "" {
				t.Errorf("artifacts (-want +got):\n%s", d)
			}
			got := ""
			if m := task.Status.Message; m != nil {
				got = messageText(m)
			}
			if got != tc.message {
				t.Errorf("status message %q, want %q", got, tc.message)
			}
		})
	}
}

// The card names the agent, describes it from spec.description, streams, asks a bearer
// token, and offers A2A 1.0 over JSON-RPC and HTTP+JSON, then 0.3 over JSON-RPC, at one URL.
func TestCard(t *testing.T) {
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "planner"}, Spec: sessionsv1alpha1.AgentSpec{Description: "plans trips"}}
	c := Card(a, "https://store/a2a/team/planner")
	got := map[string]any{"name": c.Name, "description": c.Description, "streaming": c.Capabilities.Streaming, "skill": c.Skills[0].Description}
	want := map[string]any{"name": "planner", "description": "plans trips", "streaming": true, "skill": "plans trips"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("card (-want +got):\n%s", d)
	}
	url := "https://store/a2a/team/planner"
	wantIfaces := []*a2a.AgentInterface{
		{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
		{URL: url, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		{URL: url, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
	}
	if d := cmp.Diff(wantIfaces, c.SupportedInterfaces); d != "" {
		t.Errorf("supportedInterfaces (-want +got):\n%s", d)
	}
	if s, ok := c.SecuritySchemes[SecurityScheme].(a2a.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" {
		t.Errorf("security scheme %#v, want HTTP Bearer", c.SecuritySchemes[SecurityScheme])
	}
}

// A refusal is an invalid request and a lost task is not found, each with its message; any
// other error is an internal error that still says what happened.
func TestProtocolErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"task not found": {err: a2a.ErrTaskNotFound, want: a2a.ErrTaskNotFound},
		"refused":        {err: refused(apierrors.NewForbidden(schema.GroupResource{Resource: "sessionsends"}, "", errors.New("no"))), want: a2a.ErrInvalidRequest},
		"anything else":  {err: errGone, want: a2a.ErrInternalError},
	} {
		t.Run(name, func(t *testing.T) {
			got := protocolError(tc.err)
			if !errors.Is(got, tc.want) || !strings.Contains(got.Error(), tc.err.Error()) {
				t.Errorf("protocolError(%v) = %v, want %v with the message", tc.err, got, tc.want)
			}
		})
	}
}

// 0.3's method names all hold a slash, 1.0's none: the request's method picks the version.
func TestLegacyMethod(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe"}`:        true,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`:  false,
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage"}`:     false,
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`:                false,
		`not json`: false,
	} {
		if got := legacyMethod([]byte(body)); got != want {
			t.Errorf("legacyMethod(%s) = %v, want %v", body, got, want)
		}
	}
}

// A task id's slash sent unescaped in an HTTP+JSON path is escaped, so the id stays one
// segment; other paths are left as they are.
func TestEscapeTaskID(t *testing.T) {
	for path, want := range map[string]string{
		"/tasks/3f2b-uid/round-1":           "/tasks/3f2b-uid%2Fround-1",
		"/tasks/3f2b-uid/round-1:cancel":    "/tasks/3f2b-uid%2Fround-1:cancel",
		"/tasks/3f2b-uid/round-1:subscribe": "/tasks/3f2b-uid%2Fround-1:subscribe",
		"/tasks/3f2b-uid/announce":          "",
		"/tasks":                            "",
		"/message:send":                     "",
	} {
		if got := escapeTaskID(path); got != want {
			t.Errorf("escapeTaskID(%q) = %q, want %q", path, got, want)
		}
	}
}
