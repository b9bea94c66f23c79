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

package sessionpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// events records what the reconciler says, by object name.
type events struct {
	mu  sync.Mutex
	got []string // "<name> <type>/<reason>: <note>"
}

func (e *events) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, fmt.Sprintf("%s %s/%s: %s", regarding.(client.Object).GetName(), eventtype, reason, fmt.Sprintf(note, args...)))
}

func (e *events) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...any) {
	e.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// reasons are the events' "<name> <type>/<reason>".
func (e *events) reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []string{}
	for _, g := range e.got {
		head, _, _ := strings.Cut(g, ":")
		out = append(out, head)
	}
	return out
}

// batches is a Retirer over a real record store that remembers each batch and runs
// during, when set, after the store wrote it and before Retire returns.
type batches struct {
	transcript.Retirer
	sizes  []int
	during func(recs []transcript.RetiredSession)
	refuse error
}

func (b *batches) Retire(ctx context.Context, recs ...transcript.RetiredSession) (int, error) {
	b.sizes = append(b.sizes, len(recs))
	if b.refuse != nil {
		return 0, b.refuse
	}
	n, err := b.Retirer.Retire(ctx, recs...)
	if b.during != nil {
		b.during(recs[:n])
	}
	return n, err
}

// retentionEnv is a control plane, a client, the fake clock and what the specs share.
type retentionEnv struct {
	ctx     context.Context
	c       client.WithWatch
	t0      time.Time
	clk     *clocktesting.FakeClock
	nsCount int
}

// setUp makes a namespace whose policy retires what was archived an hour ago, and n
// sessions in it archived at t0 (their status as the AgentSession controller writes it).
func (e *retentionEnv) setUp(t *testing.T, n int) (string, []string) {
	t.Helper()
	e.nsCount++
	ns := fmt.Sprintf("retention-%d", e.nsCount)
	if err := e.c.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Create(e.ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: sessionsv1alpha1.SessionPolicySpec{Retention: &sessionsv1alpha1.RetentionSpec{ArchivedSessionsSeconds: ptr.To[int32](3600)}}}); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	sem := make(chan struct{}, 8)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		names[i] = fmt.Sprintf("s-%03d", i)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = e.archived(ns, names[i], fmt.Sprintf("agent:a:s%d", i))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ns, names
}

// archived creates session name with key, archived at t0.
func (e *retentionEnv) archived(ns, name, key string) error {
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"}}
	if err := e.c.Create(e.ctx, s); err != nil {
		return err
	}
	s.Status.Phase, s.Status.SessionID = sessionsv1alpha1.SessionArchived, "sid-"+name
	s.Status.Conditions = []metav1.Condition{{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: "Archived",
		Message: "the transcript is archived", LastTransitionTime: metav1.NewTime(e.t0)}}
	return e.c.Status().Update(e.ctx, s)
}

// left are the names of ns's sessions.
func (e *retentionEnv) left(t *testing.T, ns string) []string {
	t.Helper()
	var l sessionsv1alpha1.AgentSessionList
	if err := e.c.List(e.ctx, &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, s := range l.Items {
		out = append(out, s.Name)
	}
	return out
}

// recorded are the object names of ns's records, sorted.
func (e *retentionEnv) recorded(t *testing.T, recs transcript.Retirer, ns string) []string {
	t.Helper()
	got, err := recs.RetiredSessions(e.ctx, ns, transcript.RetiredQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range got {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func openStore(t *testing.T, opts ...store.RetiredOption) *store.RetiredStore {
	t.Helper()
	r, err := store.OpenRetiredStore(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pass runs one retention pass of ns through cl.
func (e *retentionEnv) pass(cl client.Client, recs transcript.Retirer, ev *events, ns string) (ctrl.Result, error) {
	r := &RetentionReconciler{Client: cl, Records: recs, Clock: e.clk, Recorder: ev}
	return r.Reconcile(e.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "default"}})
}

// The retention's pass on a real API server: one batch of records, then the deletes with
// their preconditions. A restore racing the pass keeps its object; a full store keeps the
// objects whose records it refused; a delete that fails keeps only its own object, retried
// by the next pass; a pass retires at most maxRetiredPerPass and asks for the next at once.
func TestRetentionPass(t *testing.T) {
	cfg, _ := testenv.StartT(t)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := &retentionEnv{ctx: ctrl.LoggerInto(context.Background(), ctrl.Log), c: c, t0: t0, clk: clocktesting.NewFakeClock(t0.Add(2 * time.Hour))}
	t.Run("one batch written, then the deletes", func(t *testing.T) { batchThenDeletes(t, e) })
	t.Run("a restore racing the pass keeps its object", func(t *testing.T) { restoreRacingPass(t, e) })
	t.Run("a full store keeps the objects it has no room for", func(t *testing.T) { fullStore(t, e) })
	t.Run("a delete that fails keeps only its object, retired by the next pass", func(t *testing.T) { failedDelete(t, e) })
	t.Run("a pass retires at most maxRetiredPerPass and asks for the next at once", func(t *testing.T) { boundedPass(t, e) })
}

// batchThenDeletes: one batch written, then the deletes.
func batchThenDeletes(t *testing.T, e *retentionEnv) {
	ns, names := e.setUp(t, 3)
	b := &batches{Retirer: openStore(t)}
	b.during = func([]transcript.RetiredSession) {
		if got := e.left(t, ns); len(got) != 3 {
			t.Errorf("objects while the batch is written: %v, want all 3 (deletes come after)", got)
		}
	}
	ev := &events{}
	if _, err := e.pass(e.c, b, ev, ns); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3}, b.sizes); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if got := e.left(t, ns); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
	if diff := cmp.Diff(names, e.recorded(t, b, ns)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default Normal/" + sessionsv1alpha1.EventSessionsRetired}, ev.reasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !strings.Contains(ev.got[0], "3 archived sessions retired") || !strings.HasSuffix(ev.got[0], ": s-000, s-001, s-002") {
		t.Errorf("event %q, want the count and the names", ev.got[0])
	}
}

// restoreRacingPass: a restore racing the pass keeps its object.
func restoreRacingPass(t *testing.T, e *retentionEnv) {
	ns, _ := e.setUp(t, 3)
	b := &batches{Retirer: openStore(t)}
	b.during = func([]transcript.RetiredSession) {
		// The sessions tool's restore between the record's write and the delete.
		s := &sessionsv1alpha1.AgentSession{}
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: "s-001"}, s); err != nil {
			t.Fatal(err)
		}
		s.Annotations = map[string]string{sessionsv1alpha1.RestoreAnnotation: s.Status.SessionID}
		if err := e.c.Update(e.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ev := &events{}
	if _, err := e.pass(e.c, b, ev, ns); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s-001"}, e.left(t, ns)); diff != "" {
		t.Errorf("objects left (-want +got):\n%s", diff)
	}
	if len(ev.got) != 1 || !strings.Contains(ev.got[0], "2 archived sessions retired") {
		t.Errorf("events %v, want one SessionsRetired of 2", ev.got)
	}
	// The restore asked: the next pass leaves it (its record goes when it is back).
	b.during = nil
	if _, err := e.pass(e.c, b, ev, ns); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s-001"}, e.left(t, ns)); diff != "" {
		t.Errorf("objects left after the next pass (-want +got):\n%s", diff)
	}
}

// fullStore: a full store keeps the objects it has no room for.
func fullStore(t *testing.T, e *retentionEnv) {
	ns, _ := e.setUp(t, 4)
	b := &batches{Retirer: openStore(t, store.WithRetiredBounds(2, 100))}
	ev := &events{}
	_, err := e.pass(e.c, b, ev, ns)
	if !errors.Is(err, transcript.ErrFull) {
		t.Errorf("pass: %v, want ErrFull", err)
	}
	if diff := cmp.Diff([]string{"s-002", "s-003"}, e.left(t, ns)); diff != "" {
		t.Errorf("objects left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-000", "s-001"}, e.recorded(t, b, ns)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	want := []string{"s-002 Warning/" + sessionsv1alpha1.EventRetireFailed, "default Normal/" + sessionsv1alpha1.EventSessionsRetired}
	if diff := cmp.Diff(want, ev.reasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	what := "a store that refuses the whole batch keeps every object and says so on each"
	ev = &events{}
	b.refuse = fmt.Errorf("%w: disk gone", transcript.ErrClosed)
	if _, err := e.pass(e.c, b, ev, ns); !errors.Is(err, transcript.ErrClosed) {
		t.Errorf("%s: pass: %v, want ErrClosed", what, err)
	}
	if diff := cmp.Diff([]string{"s-002", "s-003"}, e.left(t, ns)); diff != "" {
		t.Errorf("%s: objects left (-want +got):\n%s", what, diff)
	}
	want = []string{"s-002 Warning/" + sessionsv1alpha1.EventRetireFailed, "s-003 Warning/" + sessionsv1alpha1.EventRetireFailed}
	if diff := cmp.Diff(want, ev.reasons()); diff != "" {
		t.Errorf("%s: events (-want +got):\n%s", what, diff)
	}
}

// failedDelete: a delete that fails keeps only its object, retired by the next pass.
func failedDelete(t *testing.T, e *retentionEnv) {
	ns, _ := e.setUp(t, 4)
	b := &batches{Retirer: openStore(t)}
	failing := true
	cl := interceptor.NewClient(e.c, interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if failing && obj.GetName() == "s-002" {
				return apierrors.NewServiceUnavailable("etcd is slow")
			}
			return c.Delete(ctx, obj, opts...)
		}})
	ev := &events{}
	if _, err := e.pass(cl, b, ev, ns); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("pass: %v, want the delete's error", err)
	}
	if diff := cmp.Diff([]string{"s-002"}, e.left(t, ns)); diff != "" {
		t.Errorf("objects left (-want +got):\n%s", diff)
	}
	if len(ev.got) != 1 || !strings.Contains(ev.got[0], "3 archived sessions retired") {
		t.Errorf("events %v, want one SessionsRetired of 3", ev.got)
	}
	failing = false
	if _, err := e.pass(cl, b, ev, ns); err != nil {
		t.Fatal(err)
	}
	if got := e.left(t, ns); len(got) != 0 {
		t.Errorf("objects left after the next pass: %v", got)
	}
	if got := e.recorded(t, b, ns); len(got) != 4 {
		t.Errorf("records %v, want 4: the one written twice is kept once", got)
	}
}

// boundedPass: a pass retires at most maxRetiredPerPass and asks for the next at once.
func boundedPass(t *testing.T, e *retentionEnv) {
	ns, _ := e.setUp(t, maxRetiredPerPass+3)
	b := &batches{Retirer: openStore(t)}
	ev := &events{}
	res, err := e.pass(e.c, b, ev, ns)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != requeueNow {
		t.Errorf("RequeueAfter %v, want %v", res.RequeueAfter, requeueNow)
	}
	if got := e.left(t, ns); len(got) != 3 {
		t.Errorf("%d objects left, want 3", len(got))
	}
	if !strings.HasSuffix(ev.got[0], fmt.Sprintf("s-000, s-001, s-002, s-003, s-004 and %d more", maxRetiredPerPass-namesInEvent)) {
		t.Errorf("event %q, want the first names and how many more", ev.got[0])
	}
	res, err = e.pass(e.c, b, ev, ns)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 0 {
		t.Errorf("RequeueAfter %v with nothing left, want 0", res.RequeueAfter)
	}
	if diff := cmp.Diff([]int{maxRetiredPerPass, 3}, b.sizes); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if got := e.left(t, ns); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
}
