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
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// The agent-to-agent announce step with a sink that delivers (a local Telegram server): the
// target's exact ANNOUNCE_SKIP delivers nothing and the announce is skipped; any other
// reply is delivered to the target's chat.
func TestAgentAnnounceSkipDeliversNothing(t *testing.T) {
	const token = "987654:bot-token"
	const group = "agent:bob:telegram:group:-1001234"
	for name, tc := range map[string]struct {
		reply    string
		status   sessionsv1alpha1.AnnounceStatus
		messages int
	}{
		"ANNOUNCE_SKIP stays silent":   {reply: sessionsv1alpha1.AnnounceSkip, status: sessionsv1alpha1.AnnounceSkipped},
		"with blank lines around it":   {reply: "\n" + sessionsv1alpha1.AnnounceSkip + "\n", status: sessionsv1alpha1.AnnounceSkipped},
		"any other reply is delivered": {reply: "bob says hi", status: sessionsv1alpha1.AnnounceDelivered, messages: 1},
	} {
		t.Run(name, func(t *testing.T) {
			platform := chatfake.New(chatfake.Telegram, token)
			srv := httptest.NewServer(platform)
			t.Cleanup(srv.Close)
			allow, err := egress.Parse([]string{srv.URL}, false)
			if err != nil {
				t.Fatal(err)
			}
			sink := sessionsv1alpha1.DeliverySink{Channel: chatfake.Telegram, Kind: chatfake.Telegram, APIURL: srv.URL,
				SecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "bot"}, Key: "token"}}
			f := ownerflowtest.NewFixture(t, nil, send(fromAlice, func(s *sessionsv1alpha1.SessionSend) { s.Spec.SessionKey = group }),
				ownerflowtest.Session(group, "bob"), ownerflowtest.Session("agent:alice:main", "alice"),
				&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"},
					Spec: sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{sink}}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bot", Namespace: "ns", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
					Data: map[string][]byte{"token": []byte(token)}})
			f.Runner.Results["u1/round-1"] = turns.TurnResult{Text: sessionsv1alpha1.ReplySkip}
			f.Runner.Results["u1/announce"] = turns.TurnResult{Text: tc.reply}
			r := (&SessionSendReconciler{OwnerDeps: f.Deps(), TTL: time.Hour,
				Announcer: announce.New(lookup.New(f.C, nil), f.C, delivery.New(allow), nil, f.Clock)}).wire()
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: sendKey}); err != nil {
				t.Fatal(err)
			}
			got := &sessionsv1alpha1.SessionSend{}
			if err := f.C.Get(context.Background(), sendKey, got); err != nil {
				t.Fatal(err)
			}
			if a := got.Status.Announce; a == nil || a.Status != tc.status || got.Status.Phase != sessionsv1alpha1.SendCompleted {
				t.Fatalf("announce %+v, phase %s; want %s and Completed", a, got.Status.Phase, tc.status)
			}
			if n := len(platform.Messages()); n != tc.messages {
				t.Errorf("%d messages reached the chat, want %d", n, tc.messages)
			}
		})
	}
}
