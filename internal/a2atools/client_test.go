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

package a2atools

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
)

// echoAgent answers "echo: <text>" as a task's artifact; "wait" works until cancelled, and
// the ids it was asked to cancel go to cancelled.
type echoAgent struct{ started, cancelled chan a2a.TaskID }

func (e *echoAgent) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	task := a2a.NewSubmittedTask(rc, rc.Message)
	if err := q.Write(ctx, task); err != nil {
		return err
	}
	text := rc.Message.Parts[0].(a2a.TextPart).Text
	if text == "wait" {
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
			return err
		}
		e.started <- rc.TaskID
		<-ctx.Done()
		return nil
	}
	if err := q.Write(ctx, a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "echo: " + text})); err != nil {
		return err
	}
	done := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCompleted, nil)
	done.Final = true
	return q.Write(ctx, done)
}

func (e *echoAgent) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.cancelled <- rc.TaskID
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// remoteAgent serves echoAgent over JSON-RPC with its card; the card names endpoint (the
// server's own /rpc when empty) and says streaming. Every request must carry the token.
func remoteAgent(t *testing.T, streaming bool, endpoint string) (*httptest.Server, *echoAgent) {
	agent := &echoAgent{started: make(chan a2a.TaskID, 8), cancelled: make(chan a2a.TaskID, 8)}
	mux := http.NewServeMux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if endpoint == "" {
		endpoint = srv.URL + "/rpc"
	}
	card := &a2a.AgentCard{Name: "echo", Description: "echoes", URL: endpoint, PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion: "0.3.0", Capabilities: a2a.AgentCapabilities{Streaming: streaming},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "says it back"}}}
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent)))
	return srv, agent
}

func agentWith(remote string) *sessionsv1alpha1.Agent {
	return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "tripper", UID: "u", Generation: 1},
		Spec: sessionsv1alpha1.AgentSpec{Tools: sessionsv1alpha1.ToolsSpec{A2AAgents: []sessionsv1alpha1.A2AAgent{{Name: "echo", URL: remote,
			Headers: []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{
				SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "header"}}}}}}}}}
}

func options(refuse string) mcptools.Options {
	return mcptools.Options{
		ReadSecret: func(context.Context, *sessionsv1alpha1.Agent, *corev1.SecretKeySelector) ([]byte, error) {
			return []byte("Bearer s3cret"), nil
		},
		CheckURL: func(_ context.Context, _ string, u *url.URL) error {
			if refuse != "" && strings.Contains(u.String(), refuse) {
				return errors.New("not on the allow list")
			}
			return nil
		},
	}
}

// A remote agent's card makes the tool a2a__<name>; a call sends the message, waits for the
// task, and returns its artifact's text, streaming or not. The remote here is an A2A 0.3
// agent (the SDK's v0): its card offers 0.3 only, which calls then speak.
func TestCallWaitsForTheTask(t *testing.T) {
	for name, streaming := range map[string]bool{"streaming": true, "blocking send": false} {
		t.Run(name, func(t *testing.T) {
			srv, _ := remoteAgent(t, streaming, "")
			set := NewClient(options("")).Resolve(t.Context(), agentWith(srv.URL))
			if d := cmp.Diff([]sessionsv1alpha1.A2AAgentStatus{{Name: "echo", CardRead: true, AgentName: "echo", Streaming: streaming, ProtocolVersion: "0.3"}}, set.Status()); d != "" {
				t.Fatalf("status (-want +got):\n%s", d)
			}
			if len(set.Tools()) != 1 || set.Tools()[0].Name != "a2a__echo" {
				t.Fatalf("tools %+v, want a2a__echo", set.Tools())
			}
			got := set.Call(t.Context(), "a2a__echo", []byte(`{"message":"hello"}`))
			if d := cmp.Diff(mcptools.Result{Text: "echo: hello"}, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
}

// A remote the egress list refuses, or whose card sends the client to another origin, is
// refused with the reason status reports; no tool is offered.
func TestRefusedRemotes(t *testing.T) {
	srv, _ := remoteAgent(t, true, "http://elsewhere.example/rpc")
	for name, tc := range map[string]struct {
		refuse, reason string
	}{
		"card names another origin": {reason: mcptools.ReasonOriginRefused},
		"egress refused":            {refuse: "127.0.0.1", reason: mcptools.ReasonEgressRefused},
	} {
		t.Run(name, func(t *testing.T) {
			set := NewClient(options(tc.refuse)).Resolve(t.Context(), agentWith(srv.URL))
			if st := set.Status(); len(st) != 1 || st[0].CardRead || st[0].Reason != tc.reason {
				t.Errorf("status %+v, want reason %s", st, tc.reason)
			}
			if len(set.Tools()) != 0 {
				t.Errorf("tools %+v, want none", set.Tools())
			}
		})
	}
}

// A call that ends before its task (its run cancelled) cancels the remote task. The call
// learns the task's id from the stream: a cancel that overtakes the stream's first event
// cannot name the task, so each attempt gives the stream longer before it cancels.
func TestCancelledCallCancelsTheRemoteTask(t *testing.T) {
	srv, agent := remoteAgent(t, true, "")
	set := NewClient(options("")).Resolve(t.Context(), agentWith(srv.URL))
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan mcptools.Result, 1)
		go func() { done <- set.Call(ctx, "a2a__echo", []byte(`{"message":"wait"}`)) }()
		started := <-agent.started
		time.Sleep(time.Duration(attempt*attempt) * 50 * time.Millisecond)
		cancel()
		if r := <-done; !r.IsError {
			t.Fatalf("result %+v, want an error", r)
		}
		select {
		case id := <-agent.cancelled:
			if id != started {
				t.Errorf("cancelled %s, want %s", id, started)
			}
			return
		default:
			if attempt == 8 {
				t.Fatal("the remote task was never cancelled")
			}
		}
	}
}
