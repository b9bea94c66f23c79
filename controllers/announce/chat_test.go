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

package announce

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/delivery/chatfake"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const chatToken = "987654:bot-token-never-shown"

// chatKeys are sessions whose keys name a chat on each platform.
var chatKeys = map[string]string{
	chatfake.Telegram: "agent:main:telegram:group:-1001234",
	chatfake.Discord:  "agent:main:discord:channel:998877",
	chatfake.WhatsApp: "agent:main:whatsapp:direct:15551234567",
	chatfake.Slack:    "agent:main:slack:channel:C0123",
}

// chatFixture is a namespace whose SessionPolicy sends channel kind to a local platform.
type chatFixture struct {
	c        client.Client
	platform *chatfake.Server
	allow    *egress.Policy
	clock    *clocktesting.FakeClock
}

func newChatFixture(t *testing.T, kind string, objs ...client.Object) *chatFixture {
	t.Helper()
	platform := chatfake.New(kind, chatToken)
	srv := httptest.NewServer(platform)
	t.Cleanup(srv.Close)
	allow, err := egress.Parse([]string{srv.URL}, false)
	if err != nil {
		t.Fatal(err)
	}
	sink := sessionsv1alpha1.DeliverySink{Channel: sessionsv1alpha1.Channel(kind), Kind: sessionsv1alpha1.DeliveryKind(kind), APIURL: srv.URL, RatePerMinute: ptr.To[int32](600),
		SecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "bot"}, Key: "token"}}
	if kind == chatfake.WhatsApp {
		sink.PhoneNumberID = chatfake.PhoneNumberID
	}
	objs = append(objs,
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}, Spec: sessionsv1alpha1.SessionPolicySpec{Delivery: []sessionsv1alpha1.DeliverySink{sink}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bot", Namespace: "ns", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			Data: map[string][]byte{"token": []byte(chatToken + "\n")}})
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...)).Build()
	return &chatFixture{c: c, platform: platform, allow: allow, clock: clocktesting.NewFakeClock(epoch)}
}

// announcer is a new one each call: a manager that restarted, with nothing in memory.
func (f *chatFixture) announcer() *Announcer {
	d := delivery.New(f.allow)
	return &Announcer{lookup: lookup.New(f.c, nil), apiReader: f.c, deliverer: d, clock: f.clock}
}

func chatSession(key string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}}
}

// longReply is an announce of three parts on kind.
func longReply(kind string) string {
	format, _ := delivery.FormatOf(kind)
	return "Status: ok\nResult: " + strings.Repeat("word ", format.Limit/2)
}

// An announce of three parts is delivered one part per reconcile, each recorded before the
// next; a manager restarted between any two goes on from the next part: every part reaches
// the chat once, in order.
func TestChatAnnounceResumesAfterRestart(t *testing.T) {
	for kind, key := range chatKeys {
		t.Run(kind, func(t *testing.T) {
			f := newChatFixture(t, kind)
			in := Input{Session: chatSession(key), reply: longReply(kind), Key: "uid/announce"}
			var got *sessionsv1alpha1.Announce
			for i := range 3 {
				got, _ = f.announcer().announce(context.Background(), in)
				want := sessionsv1alpha1.AnnounceDelivering
				if i == 2 {
					want = sessionsv1alpha1.AnnounceDelivered
				}
				if got.Status != want || len(got.DeliveredParts) != i+1 || got.Parts != 3 {
					t.Fatalf("reconcile %d: status %s, %d of %d parts (%s)", i, got.Status, len(got.DeliveredParts), got.Parts, got.Reason)
				}
				in.Prev = got
			}
			// A repeated reconcile of a delivered announce posts nothing.
			if again, _ := f.announcer().announce(context.Background(), in); again.Status != sessionsv1alpha1.AnnounceDelivered {
				t.Fatalf("again: %s", again.Status)
			}
			msgs := f.platform.Messages()
			if len(msgs) != 3 {
				t.Fatalf("the chat got %d messages, want 3", len(msgs))
			}
			for i, m := range msgs {
				if !strings.HasPrefix(m.Text, fmt.Sprintf("(%d/3) ", i+1)) || m.ID != got.DeliveredParts[i].MessageID {
					t.Errorf("message %d: id %s (recorded %s), starts %q", i, m.ID, got.DeliveredParts[i].MessageID, m.Text[:12])
				}
			}
		})
	}
}

// The chat id comes from deliveryContext.to, else lastTo, else the key; a session that
// names none fails with the fields to set.
func TestChatAnnounceChatID(t *testing.T) {
	cases := map[string]struct {
		session    *sessionsv1alpha1.AgentSession
		wantTo     string
		wantReason string
	}{
		"deliveryContext.to": {session: &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSessionSpec{
			Key: "agent:main:telegram:group:-1", AgentID: "main", LastTo: "-2", DeliveryContext: &sessionsv1alpha1.DeliveryContext{To: "group:-3"}}}, wantTo: "-3"},
		"lastTo": {session: &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSessionSpec{
			Key: "agent:main:telegram:group:-1", AgentID: "main", LastTo: "-2"}}, wantTo: "-2"},
		"the key": {session: chatSession("agent:main:telegram:group:-1001234"), wantTo: "-1001234"},
		"none": {session: &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSessionSpec{
			Key: "agent:main:main", AgentID: "main", Channel: "telegram"}},
			wantReason: "no telegram chat id for session agent:main:main: set spec.deliveryContext.to or spec.lastTo (its key names no chat)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newChatFixture(t, chatfake.Telegram)
			got, _ := f.announcer().announce(context.Background(), Input{Session: tc.session, reply: "done", Key: "k"})
			if tc.wantReason != "" {
				if got.Status != sessionsv1alpha1.AnnounceFailed || got.Reason != tc.wantReason {
					t.Fatalf("got %s %q, want failed %q", got.Status, got.Reason, tc.wantReason)
				}
				return
			}
			msgs := f.platform.Messages()
			if got.Status != sessionsv1alpha1.AnnounceDelivered || len(msgs) != 1 || msgs[0].To != tc.wantTo {
				t.Fatalf("got %s (%s), messages %+v, want one to %s", got.Status, got.Reason, msgs, tc.wantTo)
			}
		})
	}
}

// A thread-bound run's announce starts a thread with its first part, records it, and posts
// the rest there; the announces of its child (a send into it) go to the same thread.
func TestChatAnnounceThreadBinding(t *testing.T) {
	for kind, key := range chatKeys {
		t.Run(kind, func(t *testing.T) {
			f := newChatFixture(t, kind)
			in := Input{Session: chatSession(key), reply: longReply(kind), Key: "run/announce", ThreadID: "subagent-run", Bind: true}
			for range 3 {
				in.Prev, _ = f.announcer().announce(context.Background(), in)
			}
			run := in.Prev
			if run.Status != sessionsv1alpha1.AnnounceDelivered || run.Thread == nil || run.Thread.Channel != kind {
				t.Fatalf("run announce %s, thread %+v", run.Status, run.Thread)
			}
			msgs := f.platform.Messages()
			if msgs[0].Thread != "" || msgs[1].Thread == "" || msgs[2].Thread != msgs[1].Thread {
				t.Fatalf("threads %q %q %q, want the first top-level and the rest in one thread", msgs[0].Thread, msgs[1].Thread, msgs[2].Thread)
			}
			// The child session of the run, with the context the run gives it (its requester's
			// chat, named by the requester's key alone, and the run's thread): its announces,
			// after a send into it, go to the run's thread.
			owner := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "ns", UID: "run-uid"},
				Spec: sessionsv1alpha1.SubagentRunSpec{Thread: true}, Status: sessionsv1alpha1.SubagentRunStatus{Announce: run}}
			if err := f.c.Create(context.Background(), owner); err != nil {
				t.Fatal(err)
			}
			child := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: "ns",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SubagentRun", Name: "run", UID: "run-uid", Controller: ptr.To(true)}}},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:subagent:1", AgentID: "main",
					DeliveryContext: ptr.To(policy.ThreadDestination(chatSession(key), "subagent-run-uid"))}}
			got, _ := f.announcer().announce(context.Background(), Input{Session: child, reply: "later", Key: "send/announce"})
			msgs = f.platform.Messages()
			if got.Status != sessionsv1alpha1.AnnounceDelivered || len(msgs) != 4 || msgs[3].Thread != msgs[1].Thread {
				t.Fatalf("child announce %s (%s); last message in %q, want %q", got.Status, got.Reason, msgs[len(msgs)-1].Thread, msgs[1].Thread)
			}
		})
	}
}

// A 429 waits the platform's retry_after: the part is not tried again before it, even by a
// reconcile woken early or a restarted manager, and is delivered after.
func TestChatAnnounceHonours429(t *testing.T) {
	f := newChatFixture(t, chatfake.Telegram)
	f.platform.Fail(chatfake.Failure{Status: http.StatusTooManyRequests, Text: "Too Many Requests: retry after 7", Wait: 7})
	in := Input{Session: chatSession(chatKeys[chatfake.Telegram]), reply: "done", Key: "k"}
	got, wait := f.announcer().announce(context.Background(), in)
	if got.Status != sessionsv1alpha1.AnnounceDelivering || wait != 7*time.Second || got.Attempts != 1 || got.NextAttemptAt == nil {
		t.Fatalf("got %s, wait %s, attempts %d", got.Status, wait, got.Attempts)
	}
	in.Prev = got
	f.clock.Step(6 * time.Second)
	if early, wait := f.announcer().announce(context.Background(), in); early.Status != sessionsv1alpha1.AnnounceDelivering || wait != time.Second {
		t.Fatalf("early: %s, wait %s", early.Status, wait)
	}
	if n := f.platform.Requests(); n != 1 {
		t.Fatalf("the platform got %d requests before the wait ended, want 1", n)
	}
	f.clock.Step(time.Second)
	if got, _ = f.announcer().announce(context.Background(), in); got.Status != sessionsv1alpha1.AnnounceDelivered || got.Attempts != 0 || got.Error != "" {
		t.Fatalf("after the wait: %s (%s)", got.Status, got.Reason)
	}
}

// A 4xx fails at once with the platform's text, and the token is nowhere in the status.
func TestChatAnnounceClientErrorFails(t *testing.T) {
	for kind, key := range chatKeys {
		t.Run(kind, func(t *testing.T) {
			f := newChatFixture(t, kind)
			f.platform.Fail(chatfake.Failure{Status: http.StatusForbidden, Text: "Missing Access to " + kind})
			got, _ := f.announcer().announce(context.Background(), Input{Session: chatSession(key), reply: "done", Key: "k"})
			if got.Status != sessionsv1alpha1.AnnounceFailed || got.Attempts != 1 || !strings.Contains(got.Error, "Missing Access to "+kind) {
				t.Fatalf("got %s, attempts %d, error %q (%s)", got.Status, got.Attempts, got.Error, got.Reason)
			}
			raw, _ := json.Marshal(got)
			if strings.Contains(string(raw), chatToken) || strings.Contains(string(raw), "bot-token") {
				t.Fatalf("the token is in the status: %s", raw)
			}
		})
	}
}

// 5xx answers are tried --delivery-attempts times in all, then the announce fails.
func TestChatAnnounceAttemptsBounded(t *testing.T) {
	f := newChatFixture(t, chatfake.Discord)
	f.platform.Fail(chatfake.Failure{Status: 502, Text: "Bad Gateway"}, chatfake.Failure{Status: 503, Text: "Service Unavailable"},
		chatfake.Failure{Status: 500, Text: "Internal"})
	in := Input{Session: chatSession(chatKeys[chatfake.Discord]), reply: "done", Key: "k"}
	for i := range 3 {
		a := f.announcer()
		a.deliverer.Attempts = 3
		got, wait := a.announce(context.Background(), in)
		want := sessionsv1alpha1.AnnounceDelivering
		if i == 2 {
			want = sessionsv1alpha1.AnnounceFailed
		}
		if got.Status != want {
			t.Fatalf("attempt %d: %s (%s)", i+1, got.Status, got.Reason)
		}
		f.clock.Step(wait)
		in.Prev = got
	}
	if !strings.Contains(in.Prev.Reason, "after 3 attempts") || len(f.platform.Messages()) != 0 {
		t.Errorf("reason %q, %d messages", in.Prev.Reason, len(f.platform.Messages()))
	}
}

// A tool call that waits for a person is told to the session's chat on a chat sink.
func TestApprovalRequestedReachesTheChat(t *testing.T) {
	key := chatKeys[chatfake.Slack]
	session := chatSession(key)
	f := newChatFixture(t, chatfake.Slack, session)
	ta := &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Name: "ta-1", Namespace: "ns", UID: "ta-uid"},
		Spec: sessionsv1alpha1.ToolApprovalSpec{SessionKey: key, AgentID: "main", Tool: "mcp__fs__delete", ExpiresAt: metav1.NewTime(epoch)}}
	_, _ = f.announcer().NotifyApproval(context.Background(), ta)
	msgs := f.platform.Messages()
	if len(msgs) != 1 || msgs[0].To != "C0123" || !strings.Contains(msgs[0].Text, "mcp__fs__delete") || !strings.Contains(msgs[0].Text, "ToolApproval ta-1") {
		t.Fatalf("messages %+v, want one to C0123 naming the tool and the approval", msgs)
	}
}
