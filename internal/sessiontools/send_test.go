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
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
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
	s := &v1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: ns}, Spec: v1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "hi"}}
	if err := fc.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	done := s.DeepCopy()
	done.Status = v1.SessionSendStatus{Status: v1.SendOK, Reply: "pong"}
	if err := fc.Status().Update(t.Context(), done); err != nil {
		t.Fatal(err)
	}

	c := &Call{Env: &Env{Client: fc, Reader: fc, Watcher: w, Clock: clk}, Namespace: ns}
	type result struct {
		st  *v1.SessionSendStatus
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
	if r.err != nil || r.st.Status != v1.SendOK || r.st.Reply != "pong" {
		t.Fatalf("waitSend = %+v, %v; want ok with the reply", r.st, r.err)
	}
	if n := w.watches.Load(); n != 1 {
		t.Errorf("%d watches; the read after the closed one found the outcome, so want 1", n)
	}
}
