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
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A streamed task shows its reply as the model writes it: each piece of its run is an
// artifact update of the reply (a model call's first piece starts it, the next append), other
// runs' and namespaces' pieces are not shown, and the completed reply replaces it whole.
func TestStreamShowsTheReplyAsItIsWritten(t *testing.T) {
	send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team", UID: "u1"},
		Status: sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendRunning, Status: sessionsv1alpha1.SendAccepted, TargetSessionKey: "agent:a:main"}}
	done := send.DeepCopy()
	done.Status = sessionsv1alpha1.SessionSendStatus{Phase: sessionsv1alpha1.SendCompleted, Status: sessionsv1alpha1.SendOK, Reply: "Hello world", TargetSessionKey: "agent:a:main"}
	reader := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(done).Build()
	hub := events.NewHub(0, "t")
	h := &agentHandler{call: &sessiontools.Call{Env: &sessiontools.Env{APIReader: reader}}, hub: hub}
	sub := hub.Subscribe("")
	run := string(taskID(send))

	got := make(chan a2a.Event, 32)
	go func() {
		defer close(got)
		h.stream(context.Background(), send, sub, func(e a2a.Event, err error) bool {
			if err != nil {
				t.Error(err)
			}
			got <- e
			return true
		})
	}()
	next := func() a2a.Event {
		select {
		case e := <-got:
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no event")
			return nil
		}
	}
	if _, ok := next().(*a2a.Task); !ok {
		t.Fatal("the stream does not start with the task")
	}
	hdr := transcript.SessionHeader{Namespace: "team", SessionKey: "agent:a:main", SessionID: "sid"}
	hub.PublishDelta(hdr, transcript.Delta{RunID: run, Step: 1, Seq: 1, Text: "thinking"})
	hub.PublishDelta(hdr, transcript.Delta{RunID: "other/round-1", Step: 1, Seq: 1, Text: "not mine"})
	hub.PublishDelta(transcript.SessionHeader{Namespace: "elsewhere", SessionKey: "agent:a:main"}, transcript.Delta{RunID: run, Step: 2, Seq: 1, Text: "not here"})
	hub.PublishDelta(hdr, transcript.Delta{RunID: run, Step: 2, Seq: 1, Text: "Hello"})
	hub.PublishDelta(hdr, transcript.Delta{RunID: run, Step: 2, Seq: 2, Text: " world"})
	obj, _ := json.Marshal(done)
	hub.PublishObject(events.KindSendsChanged, events.PhaseUpdated, "team", "agent:a:main", "main", obj)

	type update struct {
		text           string
		append, last   bool
		task, artifact string
	}
	var updates []update
	for range 4 {
		a, ok := next().(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			t.Fatalf("want an artifact update, got %T", a)
		}
		updates = append(updates, update{a.Artifact.Parts[0].Text(), a.Append, a.LastChunk, string(a.TaskID), string(a.Artifact.ID)})
	}
	want := []update{
		{"thinking", false, false, run, "reply"},
		{"Hello", false, false, run, "reply"},
		{" world", true, false, run, "reply"},
		{"Hello world", false, true, run, "reply"},
	}
	if diff := cmp.Diff(want, updates, cmp.AllowUnexported(update{})); diff != "" {
		t.Errorf("artifact updates (-want +got):\n%s", diff)
	}
	if s, ok := next().(*a2a.TaskStatusUpdateEvent); !ok || s.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the stream ends with %v, want the completed status", s)
	}
}
