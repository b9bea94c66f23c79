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

package transcriptstore_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The manager's changes of sends, through its transcript client and the internal API, reach
// /events' hub as sends.changed, each judged by its target session, as the store's own watch
// of sends published them.
func TestSendChangesFromTheManagerReachTheHub(t *testing.T) {
	hub := events.NewHub(64, "e")
	sub := hub.Subscribe("")
	defer sub.Close()
	srv := httptest.NewServer(transcriptstore.NewAPIHandler(transcripttest.OpenStore(t, t.TempDir()), nil, hub))
	defer srv.Close()
	c := client.NewLoopbackClient(srv.URL)

	key := "agent:main:webchat:group:g"
	send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", UID: "u1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "hi"}}
	publish := func(t string, s *sessionsv1alpha1.SessionSend) {
		data, _ := json.Marshal(s)
		c.PublishSendChange(transcript.SendChange{Type: t, Object: data})
	}
	publish(transcript.ChangeAdded, send)
	done := send.DeepCopy()
	done.Status.Phase, done.Status.TargetSessionKey = sessionsv1alpha1.SendCompleted, key
	publish(transcript.ChangeModified, done)
	publish(transcript.ChangeDeleted, done)

	type seen struct{ Kind, Phase, Namespace, Key, Name, SendPhase string }
	var got []seen
	for len(got) < 3 {
		select {
		case e := <-sub.C:
			var ch events.SessionChange
			if err := json.Unmarshal(e.Data, &ch); err != nil {
				t.Fatal(err)
			}
			var s sessionsv1alpha1.SessionSend
			if err := json.Unmarshal(ch.Object, &s); err != nil {
				t.Fatal(err)
			}
			if len(s.ManagedFields) != 0 {
				t.Errorf("the published send keeps its managed fields")
			}
			got = append(got, seen{e.Kind, ch.Phase, e.Namespace, e.SessionKey, e.Name, string(s.Status.Phase)})
		case <-time.After(10 * time.Second):
			t.Fatalf("events seen: %v", got)
		}
	}
	name := sessionkey.ObjectName(key)
	want := []seen{
		{events.KindSendsChanged, events.PhaseCreated, "team", key, name, ""},
		{events.KindSendsChanged, events.PhaseUpdated, "team", key, name, "Completed"},
		{events.KindSendsChanged, "deleted", "team", key, name, "Completed"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

// The internal API refuses a change it cannot publish: an unknown type, an object that is
// not a send, a batch over the bound.
func TestSendChangesRefusesWhatItCannotPublish(t *testing.T) {
	srv := httptest.NewServer(transcriptstore.NewAPIHandler(transcripttest.OpenStore(t, t.TempDir()), nil, events.NewHub(8, "e")))
	defer srv.Close()
	over := `{"changes":[` + strings.TrimSuffix(strings.Repeat(`{"type":"ADDED","object":{}},`, transcript.MaxSendChanges+1), ",") + `]}`
	cases := map[string]struct {
		body string
		want int
	}{
		"unknown type":  {`{"changes":[{"type":"BOOKMARK","object":{}}]}`, http.StatusBadRequest},
		"not an object": {`{"changes":[{"type":"ADDED","object":"x"}]}`, http.StatusBadRequest},
		"too many":      {over, http.StatusRequestEntityTooLarge},
		"none":          {`{"changes":[]}`, http.StatusNoContent},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+transcript.APISendChangesPath, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
