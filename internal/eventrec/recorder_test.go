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

package eventrec

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

func newProvider(t *testing.T, o Options) (*Provider, client.Client, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	o.Clock = clk
	s := scheme.New()
	c := fake.NewClientBuilder().WithScheme(s).Build()
	return New(c, s, o), c, clk
}

func send(name string) *sessionsv1alpha1.SessionSend {
	return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-x"}}
}

// queued drains what the recorder queued.
func queued(p *Provider) []*eventsv1.Event {
	var out []*eventsv1.Event
	for {
		select {
		case ev := <-p.queue:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func TestRepeatsWithinTheWindowAreDropped(t *testing.T) {
	p, _, clk := newProvider(t, Options{RepeatWindow: time.Minute})
	r := p.GetEventRecorder("sessionsend-controller")
	s := send("a")
	r.Eventf(s, nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "the run failed: %s", "boom")
	r.Eventf(s, nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "the run failed: %s", "boom")
	r.Eventf(s, nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "the run failed: %s", "other") // a new note
	if n := len(queued(p)); n != 2 {
		t.Fatalf("queued %d Events, want 2 (the repeat dropped)", n)
	}
	clk.Step(time.Minute)
	r.Eventf(s, nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "the run failed: %s", "boom")
	if n := len(queued(p)); n != 1 {
		t.Fatalf("after the window queued %d Events, want 1", n)
	}
	// Another controller's identical Event is its own.
	p.GetEventRecorder("subagentrun-controller").Eventf(s, nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "the run failed: %s", "boom")
	if n := len(queued(p)); n != 1 {
		t.Fatalf("another controller's Event: queued %d, want 1", n)
	}
}

func TestRecentKeysAreBounded(t *testing.T) {
	p, _, _ := newProvider(t, Options{Recent: 3, Queue: 100})
	r := p.GetEventRecorder("c")
	for _, reason := range []string{"A", "B", "C", "D"} { // D evicts A
		r.Eventf(send("s"), nil, corev1.EventTypeNormal, reason, reason, "n")
	}
	r.Eventf(send("s"), nil, corev1.EventTypeNormal, "A", "A", "n") // forgotten: recorded again
	r.Eventf(send("s"), nil, corev1.EventTypeNormal, "D", "D", "n") // remembered: dropped
	if n := len(queued(p)); n != 5 {
		t.Errorf("queued %d Events, want 5", n)
	}
	if p.recent.Len() != 3 {
		t.Errorf("remembered %d keys, want 3", p.recent.Len())
	}
}

func TestAFullQueueDropsInsteadOfBlocking(t *testing.T) {
	p, _, _ := newProvider(t, Options{Queue: 2})
	r := p.GetEventRecorder("c")
	before := testutil.ToFloat64(eventsDropped.WithLabelValues(dropQueueFull))
	for _, reason := range []string{"A", "B", "C"} {
		r.Eventf(send("s"), nil, corev1.EventTypeNormal, reason, reason, "n")
	}
	if n := len(queued(p)); n != 2 {
		t.Errorf("queued %d Events, want 2", n)
	}
	if d := testutil.ToFloat64(eventsDropped.WithLabelValues(dropQueueFull)) - before; d != 1 {
		t.Errorf("queue_full drops counted %v, want 1", d)
	}
}

func TestMakeEvent(t *testing.T) {
	long := strings.Repeat("n", 300)
	cases := map[string]struct {
		regarding client.Object
		typ       string
		note      string
		wantErr   bool
		check     func(t *testing.T, ev *eventsv1.Event)
	}{
		"a namespaced object": {regarding: send("s1"), typ: corev1.EventTypeNormal, note: "done",
			check: func(t *testing.T, ev *eventsv1.Event) {
				if ev.Namespace != "ns" || ev.Regarding.Kind != "SessionSend" || ev.Regarding.Name != "s1" || ev.Regarding.UID != "uid-x" {
					t.Errorf("regarding %+v in %s", ev.Regarding, ev.Namespace)
				}
				if ev.ReportingController != "ctl" || !strings.HasPrefix(ev.ReportingInstance, "ctl-") || ev.Action != "Act" || ev.Reason != "Why" {
					t.Errorf("reporting %s/%s action %s reason %s", ev.ReportingController, ev.ReportingInstance, ev.Action, ev.Reason)
				}
				if !strings.HasPrefix(ev.Name, "s1.") || ev.EventTime.IsZero() || ev.Note != "done" {
					t.Errorf("name %s time %v note %q", ev.Name, ev.EventTime, ev.Note)
				}
			}},
		"a cluster-scoped object goes to default": {regarding: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u"}}, typ: corev1.EventTypeNormal,
			check: func(t *testing.T, ev *eventsv1.Event) {
				if ev.Namespace != metav1.NamespaceDefault {
					t.Errorf("namespace %q", ev.Namespace)
				}
			}},
		"a long name is cut to a valid one": {regarding: send(long), typ: corev1.EventTypeNormal,
			check: func(t *testing.T, ev *eventsv1.Event) {
				if len(ev.Name) > maxName || !strings.HasPrefix(ev.Name, "nnn") {
					t.Errorf("name of %d characters", len(ev.Name))
				}
			}},
		"a long note is cut on a character boundary": {regarding: send("s1"), typ: corev1.EventTypeWarning, note: strings.Repeat("é", 600),
			check: func(t *testing.T, ev *eventsv1.Event) {
				if len(ev.Note) > maxNote || !utf8.ValidString(ev.Note) || !strings.HasSuffix(ev.Note, textutil.Marker) {
					t.Errorf("note of %d bytes, valid UTF-8 %v", len(ev.Note), utf8.ValidString(ev.Note))
				}
			}},
		"an unknown type is refused": {regarding: send("s1"), typ: "Info", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, _, _ := newProvider(t, Options{})
			r := p.GetEventRecorder("ctl").(*eventRecorder)
			ev, err := r.makeEvent(tc.regarding, nil, nil, tc.typ, "Why", "Act", tc.note)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				tc.check(t, ev)
			}
		})
	}
}

func TestStartWritesTheQueuedEvents(t *testing.T) {
	p, c, _ := newProvider(t, Options{})
	r := p.GetEventRecorder("ctl")
	// Two Events in one clock tick still get two names.
	r.Eventf(send("s1"), nil, corev1.EventTypeNormal, "Accepted", "Accepted", "accepted")
	r.Eventf(send("s1"), nil, corev1.EventTypeNormal, "Completed", "Completed", "done")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	var list eventsv1.EventList
	for range 3000 { // 30 s on a loaded machine
		if err := c.List(ctx, &list, client.InNamespace("ns")); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 2 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d Events written, want 2", len(list.Items))
}
