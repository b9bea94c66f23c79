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
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

func TestSendsToItself(t *testing.T) {
	self := session("agent:alice:main", "alice", "sid-alice")
	if SendsToItself("main", nil) {
		t.Errorf("a person has no session to send to")
	}
	cases := map[string]bool{
		"agent:alice:main":           true,
		"main":                       true,
		"global":                     true,
		"sid-alice":                  true,
		"agent:bob:main":             false,
		"agent:alice:telegram:dm:42": false,
		"sid-bob":                    false,
	}
	for ref, want := range cases {
		if got := SendsToItself(ref, self); got != want {
			t.Errorf("SendsToItself(%q) = %v, want %v", ref, got, want)
		}
	}
	group := session("agent:alice:discord:group:g1", "alice", "sid-g1")
	if SendsToItself("main", group) {
		t.Errorf("main from a group session of alice names alice's main session, not the group")
	}
}

// closingWatcher ends the first watch at once, as an API server does now and then.
type closingWatcher struct {
	client.WithWatch
	watches atomic.Int32
}

func (c *closingWatcher) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	if c.watches.Add(1) == 1 {
		w := watch.NewFake()
		w.Stop()
		return w, nil
	}
	return c.WithWatch.Watch(ctx, list, opts...)
}

// A wait outlives its watch: when the watch closes, the send is read again (here it has
// finished meanwhile) instead of the tool call failing.
func TestWaitSendResumesAfterTheWatchCloses(t *testing.T) {
	fc := newFakeClient()
	w := &closingWatcher{WithWatch: fc}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: ns}, Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "hi"}}
	if err := fc.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	done := s.DeepCopy()
	done.Status = sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: "pong"}
	if err := fc.Status().Update(t.Context(), done); err != nil {
		t.Fatal(err)
	}

	c := &Call{Env: &Env{Client: fc, Reader: fc, Watcher: w, Clock: clk}, Namespace: ns}
	type result struct {
		st  *sessionsv1alpha1.SessionSendStatus
		err error
	}
	out := make(chan result, 1)
	go func() {
		st, err := c.waitSend(t.Context(), s, time.Minute)
		out <- result{st, err}
	}()
	for clk.Waiters() < 2 { // the grace timer and the pause before the new watch
		time.Sleep(time.Millisecond)
	}
	clk.Step(rewatchAfter)
	r := <-out
	if r.err != nil || r.st.Status != sessionsv1alpha1.SendOK || r.st.Reply != "pong" {
		t.Fatalf("waitSend = %+v, %v; want ok with the reply", r.st, r.err)
	}
	if n := w.watches.Load(); n != 1 {
		t.Errorf("%d watches; the read after the closed one found the outcome, so want 1", n)
	}
}

// sessions_send's wait is 0..600 seconds, the CRD's bound too, stated in its schema; a value
// outside is an error naming the bounds, never cut silently to 600; a fraction rounds up,
// never to fire-and-forget.
func TestSendTimeoutBound(t *testing.T) {
	cases := map[string]struct {
		args    string
		wantErr string
		want    int32
	}{
		"the default":     {args: `{"sessionKey":"agent:bob:main","message":"hi"}`, want: 30},
		"the maximum":     {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":600}`, want: 600},
		"fire-and-forget": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":0}`, want: 0},
		"above it": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":900}`,
			wantErr: "timeoutSeconds 900 is out of range: 0 to 600 seconds"},
		"below zero": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":-1}`,
			wantErr: "timeoutSeconds -1 is out of range: 0 to 600 seconds"},
		"half a second waits one": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":0.5}`, want: 1},
		"a fraction rounds up":    {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":"2.1"}`, want: 3},
		"a fraction below zero": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":-0.5}`,
			wantErr: "timeoutSeconds -0.5 is out of range: 0 to 600 seconds"},
		"a fraction past the maximum": {args: `{"sessionKey":"agent:bob:main","message":"hi","timeoutSeconds":600.5}`,
			wantErr: "timeoutSeconds 600.5 is out of range: 0 to 600 seconds"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(session("agent:bob:main", "bob", "sid-bob"))
			// No Watcher: a waited send answers at once with an error after it is created.
			c := &Call{Env: &Env{Client: fc, Reader: fc}, Namespace: ns, ID: name}
			out, err := sendTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one starting %q", err, tc.wantErr)
				}
				if got := ErrorResult(err); !strings.Contains(got, `"status":"error"`) {
					t.Errorf("result %s, want status error", got)
				}
				var sends sessionsv1alpha1.SessionSendList
				if err := fc.List(t.Context(), &sends); err != nil || len(sends.Items) != 0 {
					t.Errorf("a send was created (%d, %v)", len(sends.Items), err)
				}
				return
			}
			_ = out
			var sends sessionsv1alpha1.SessionSendList
			if err := fc.List(t.Context(), &sends); err != nil || len(sends.Items) != 1 {
				t.Fatalf("sends: %d, %v", len(sends.Items), err)
			}
			if got := *sends.Items[0].Spec.TimeoutSeconds; got != tc.want {
				t.Errorf("timeoutSeconds = %d, want %d", got, tc.want)
			}
		})
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(sendTool().Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Properties["timeoutSeconds"]["maximum"]; got != float64(MaxSendTimeoutSeconds) {
		t.Errorf("schema's timeoutSeconds maximum = %v, want %d", got, MaxSendTimeoutSeconds)
	}
}

// An ok result always carries reply, "" included, and noReply when the target said nothing.
func TestStatusResultJSON(t *testing.T) {
	cases := map[string]struct {
		r    StatusResult
		want string
	}{
		"a reply":  {r: StatusResult{RunID: "r1", Status: StatusOK, Reply: "pong"}, want: `{"runId":"r1","status":"ok","reply":"pong"}`},
		"no reply": {r: StatusResult{RunID: "r1", Status: StatusOK, NoReply: true}, want: `{"runId":"r1","status":"ok","reply":"","noReply":true}`},
		"accepted": {r: StatusResult{RunID: "r1", Status: StatusAccepted}, want: `{"runId":"r1","status":"accepted"}`},
		"an error": {r: StatusResult{Status: StatusError, Error: "boom"}, want: `{"status":"error","error":"boom"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, v := range []any{tc.r, &tc.r} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tc.want {
					t.Errorf("json = %s, want %s", b, tc.want)
				}
			}
		})
	}
}

// A reply longer than status keeps comes back whole: read from round 1's record in the
// target's transcript, up to transcript.MaxReplyBytes.
func TestWaitReturnsTheWholeReply(t *testing.T) {
	store := transcripttest.NewMemoryStore()
	if _, err := store.CreateSession(t.Context(), transcript.SessionHeader{Namespace: ns, SessionID: "sid-bob", SessionKey: "agent:bob:main"}); err != nil {
		t.Fatal(err)
	}
	whole := strings.Repeat("b", 40<<10) + "END"
	recs, err := store.Append(t.Context(), ns, "sid-bob", transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleAssistant, whole)})
	if err != nil {
		t.Fatal(err)
	}
	fc := newFakeClient(session("agent:bob:main", "bob", "sid-bob"))
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: ns, UID: "u1"},
		Status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: whole[:8<<10], ReplyTruncated: true,
			Turns: []sessionsv1alpha1.SendTurn{{Round: 1, Session: "agent:bob:main", Reply: whole[:8<<10], ReplySeq: recs[0].Seq}}}}
	c := &Call{Env: &Env{Client: fc, Reader: fc, Watcher: fc, Store: store}, Namespace: ns}
	res, err := c.Wait(t.Context(), s, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK || res.Reply != whole {
		t.Errorf("result: status %q, reply of %d bytes; want ok and the whole %d bytes", res.Status, len(res.Reply), len(whole))
	}
	got, err := c.WithWholeReply(t.Context(), s)
	if err != nil || got.Status.Reply != whole || s.Status.Reply != whole[:8<<10] {
		t.Errorf("WithWholeReply: reply of %d bytes (err %v), the send's own %d; want the whole reply in a copy", len(got.Status.Reply), err, len(s.Status.Reply))
	}
}

// Every door that takes a send's wait has the one bound: the CRDs of a send, a schedule and
// a hook state the tool's maximum.
func TestEveryDoorHasTheOneWaitBound(t *testing.T) {
	for file, path := range map[string][]string{
		"sessions.agents.dev_sessionsends.yaml":     {"spec", "timeoutSeconds"},
		"sessions.agents.dev_sessionschedules.yaml": {"spec", "timeoutSeconds"},
		"sessions.agents.dev_sessionhooks.yaml":     {"spec", "timeoutSeconds"},
	} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", file))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		p := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, name := range path {
			next, ok := p.Properties[name]
			if !ok {
				t.Fatalf("%s: no %v in the schema", file, path)
			}
			p = &next
		}
		if p.Maximum == nil || *p.Maximum != MaxSendTimeoutSeconds || p.Minimum == nil || *p.Minimum != 0 {
			t.Errorf("%s: %v is %v..%v, want 0..%d", file, path, ptr.Deref(p.Minimum, -1), ptr.Deref(p.Maximum, -1), MaxSendTimeoutSeconds)
		}
	}
}
