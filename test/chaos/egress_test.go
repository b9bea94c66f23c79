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

package chaos

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// hostileEgress is a namespace user pointing the manager's credentials at the Pod's own
// loopback (127.0.0.2 here; the suite allows only 127.0.0.1 for its own fakes), and an
// amplifying agent: none of it reaches the listener or grows a record past the bound.
func (e *env) hostileEgress(t *testing.T) {
	ns := e.namespace(t, "hostile-egress")
	var hits atomic.Int32
	thief := listenOn(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	const amplify = "{{input}}"
	e.mustCreate(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm"}, StringData: map[string]string{"key": "sk-stolen"}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exfil"}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
			Provider: sessionsv1alpha1.ProviderOpenAI, Name: "m", BaseURL: thief.URL + "/v1",
			APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "llm"}, Key: "key"},
		}}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "amp"}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
			Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: "(?s).", Reply: strings.Repeat(amplify, 400)}},
		}}},
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Delivery:     []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: thief.URL + "/hook"}},
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{MaxPingPongTurns: ptr.To[int32](0)},
			Visibility:   sessionsv1alpha1.VisibilityAgent,
		}},
	)
	session := func(key, agent string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agent, ChatType: sessionsv1alpha1.ChatTypeGroup,
				DeliveryContext: &sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: "room"}}}
	}
	exfil, amp := session("agent:exfil:webchat:group:x", "exfil"), session("agent:amp:webchat:group:a", "amp")
	e.createSessions(t, exfil, amp, session("agent:amp:main", "amp"))
	e.mustCreate(t,
		&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exfil"},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: exfil.Spec.Key, Message: "hi", TimeoutSeconds: ptr.To[int32](60)}},
		&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "amplify"},
			// From another agent's session: only a send between agents has an announce step.
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: amp.Spec.Key, Message: strings.Repeat("a", 64<<10), TimeoutSeconds: ptr.To[int32](60),
				FromSessionKey: "agent:amp:main"}},
	)
	ended, _ := e.waitTerminal(t, ns, 2, 0)
	for _, s := range ended {
		switch s.Name {
		case "exfil":
			if s.Status.Status != sessionsv1alpha1.SendError || !strings.Contains(s.Status.Error, "egress") || !strings.Contains(s.Status.Error, "loopback") {
				t.Errorf("send to a loopback base URL ended %s with %q, want an egress refusal", s.Status.Status, s.Status.Error)
			}
		case "amplify":
			// The amplified reply is announced too: the sink on loopback is refused.
			if a := s.Status.Announce; a == nil || a.Status != sessionsv1alpha1.AnnounceFailed || !strings.Contains(a.Reason, "egress") {
				t.Errorf("announce to a loopback sink: %+v, want failed with an egress refusal", a)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback listener got %d requests carrying the manager's credentials", n)
	}
	// The amplified reply is bounded in the transcript.
	if err := e.k8s.Get(context.Background(), client.ObjectKeyFromObject(amp), amp); err != nil {
		t.Fatal(err)
	}
	// A model's reply is at most MaxOutputText (26 MB unbounded); an input the operator
	// composes from replies (the announce step quotes the request and two replies) stays
	// within a small multiple of it.
	for _, r := range e.messages(t, amp) {
		n := len(text(r.Message))
		if (r.Message.Role == transcript.RoleAssistant && n > provider.MaxOutputText) || n > 1<<20 {
			t.Errorf("%s record %d holds %d bytes of text, more than the bound", r.Message.Role, r.Seq, n)
		}
	}
}

// listenOn serves h on addr.
func listenOn(t *testing.T, addr string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
