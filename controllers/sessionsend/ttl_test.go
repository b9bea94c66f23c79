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
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	goruntime "runtime"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// ttlAPI is the API server as the schedule sees it: finished sends listed by phase a page at
// a time, and deletes with a UID precondition, each recorded.
type ttlAPI struct {
	client.Writer
	mu      sync.Mutex
	sends   []sessionsv1alpha1.SessionSend
	deleted []string
}

func (a *ttlAPI) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return fmt.Errorf("not used")
}

func (a *ttlAPI) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	phase, _ := lo.FieldSelector.RequiresExactMatch(cacheindex.SendPhaseField)
	a.mu.Lock()
	defer a.mu.Unlock()
	var all []sessionsv1alpha1.SessionSend
	for _, s := range a.sends {
		if string(s.Status.Phase) == phase {
			all = append(all, s)
		}
	}
	from, _ := strconv.Atoi(lo.Continue)
	to := min(from+int(lo.Limit), len(all))
	out := list.(*sessionsv1alpha1.SessionSendList)
	out.Items = all[from:to]
	if to < len(all) {
		out.Continue = strconv.Itoa(to)
	}
	return nil
}

func (a *ttlAPI) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	do := (&client.DeleteOptions{}).ApplyOptions(opts)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deleted = append(a.deleted, obj.GetName())
	i := slices.IndexFunc(a.sends, func(s sessionsv1alpha1.SessionSend) bool { return s.Name == obj.GetName() })
	if i < 0 {
		return apierrors.NewNotFound(schema.GroupResource{}, obj.GetName())
	}
	if do.Preconditions == nil || do.Preconditions.UID == nil || *do.Preconditions.UID != a.sends[i].UID {
		return apierrors.NewConflict(schema.GroupResource{}, obj.GetName(), fmt.Errorf("UID precondition"))
	}
	a.sends = slices.Delete(a.sends, i, i+1)
	return nil
}

func (a *ttlAPI) deletes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.deleted)
}

// finishedSend is a send in the namespace "team" that finished ago before epoch.
func finishedSend(name string, phase sessionsv1alpha1.SendPhase, ttl *int32, ago time.Duration) *sessionsv1alpha1.SessionSend {
	at := metav1.NewTime(ownerflowtest.Epoch.Add(-ago))
	return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: types.UID(name + "-uid")},
		Spec: sessionsv1alpha1.SessionSendSpec{TTLSecondsAfterFinished: ttl}, Status: sessionsv1alpha1.SessionSendStatus{Phase: phase, OwnerStatus: sessionsv1alpha1.OwnerStatus{CompletedAt: &at}}}
}

// startTTL runs a schedule on a fake clock until the test ends.
func startTTL(t *testing.T, api *ttlAPI, def time.Duration) (*SendTTL, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(ownerflowtest.Epoch)
	ttl := newSendTTLOn(api, api, clk, def, func(ns string) bool { return ns != "other-shard" })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- ttl.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ttl, clk
}

// deletedBy waits until the deletes are want, in any order (sends due at once are deleted
// in parallel); then a moment more, for a delete too many.
func deletedBy(t *testing.T, api *ttlAPI, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	got := func() []string { return slices.Sorted(slices.Values(api.deletes())) }
	deadline := time.Now().Add(testenv.Timeout)
	for !slices.Equal(got(), want) && len(got()) <= len(want) && time.Now().Before(deadline) {
		time.Sleep(testenv.Interval)
	}
	time.Sleep(10 * testenv.Interval)
	if got := got(); !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
}

// Scheduled sends are deleted only once due, once each however often they are
// scheduled; what is kept or belongs to another shard is not.
func TestSendTTLSchedule(t *testing.T) {
	sends := []*sessionsv1alpha1.SessionSend{
		finishedSend("default-ttl", "", nil, 0),                                                // due in 1h
		finishedSend("own-ttl", "", ptr.To[int32](60), 0),                                      // due in 1m
		finishedSend("overdue", "", ptr.To[int32](60), time.Hour),                              // due now
		finishedSend("at-once", "", ptr.To[int32](0), 0),                                       // 0: at once
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other-shard", UID: "e"}}, // not this shard's
	}
	sends[4].Status.CompletedAt = sends[3].Status.CompletedAt
	api := &ttlAPI{}
	for _, s := range sends {
		api.sends = append(api.sends, *s)
	}
	ttl, clk := startTTL(t, api, time.Hour)
	for range 2 { // the controller may see a send finish twice: it is scheduled once
		for _, s := range sends {
			ttl.schedule(s)
		}
	}
	deletedBy(t, api, "overdue", "at-once")
	clk.Step(time.Minute - time.Second)
	deletedBy(t, api, "overdue", "at-once")
	clk.Step(time.Second)
	deletedBy(t, api, "overdue", "at-once", "own-ttl")
	clk.Step(time.Hour)
	deletedBy(t, api, "overdue", "at-once", "own-ttl", "default-ttl")
	clk.Step(24 * time.Hour)
	deletedBy(t, api, "overdue", "at-once", "own-ttl", "default-ttl")

	keep := &ttlAPI{sends: []sessionsv1alpha1.SessionSend{*finishedSend("forever", sessionsv1alpha1.SendCompleted, nil, time.Hour)}}
	kept, keepClk := startTTL(t, keep, 0) // --ttl-after-finished=0
	kept.schedule(&keep.sends[0])
	keepClk.Step(24 * time.Hour)
	deletedBy(t, keep)
}

// A started schedule lists every finished send, a page at a time, and deletes each at its
// TTL: a restarted manager loses no TTL. A send replaced by another of its name is not
// deleted (the UID precondition).
func TestSendTTLRebuildsAfterRestart(t *testing.T) {
	api := &ttlAPI{}
	var want []string
	for i := range 2*sweepPage + 1 {
		phase := []sessionsv1alpha1.SendPhase{sessionsv1alpha1.SendCompleted, sessionsv1alpha1.SendFailed, sessionsv1alpha1.SendCancelled}[i%3]
		s := finishedSend(fmt.Sprintf("s%04d", i), phase, ptr.To[int32](int32(60+i)), 0)
		api.sends = append(api.sends, *s)
		want = append(want, s.Name)
	}
	running := finishedSend("running", sessionsv1alpha1.SendRunning, nil, 0)
	running.Status.CompletedAt = nil
	api.sends = append(api.sends, *running)
	ttl, clk := startTTL(t, api, time.Hour)
	replaced := finishedSend("s0000", sessionsv1alpha1.SendCompleted, ptr.To[int32](60), 0)
	replaced.UID = "an-older-send"
	ttl.schedule(replaced) // due with s0000: scheduled once more, but by another UID

	deletedBy(t, api)
	clk.Step(time.Hour)
	deadline := time.Now().Add(testenv.Timeout)
	for len(api.deletes()) < len(want)+1 && time.Now().Before(deadline) {
		time.Sleep(testenv.Interval)
	}
	got := api.deletes()
	if n := len(got); n != len(want)+1 {
		t.Fatalf("%d deletes, want %d (every finished send and the replaced one's try)", n, len(want)+1)
	}
	if rest := api.sends; len(rest) != 1 || rest[0].Name != "running" {
		t.Fatalf("left %d sends, want only the running one", len(rest))
	}
}

// gatedAPI holds every delete until ttlWorkers are in flight at once.
type gatedAPI struct {
	*ttlAPI
	mu       sync.Mutex
	inFlight int
	all      chan struct{}
}

func (g *gatedAPI) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	g.mu.Lock()
	if g.inFlight++; g.inFlight == ttlWorkers {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
	case <-ctx.Done(): // one at a time never gets all: the test fails and stops the schedule
	}
	return g.ttlAPI.Delete(ctx, obj, opts...)
}

// Sends due at once are deleted ttlWorkers at a time, not one after another: a burst of
// finished sends must not outrun their deletes.
func TestSendTTLDeletesInParallel(t *testing.T) {
	api := &gatedAPI{ttlAPI: &ttlAPI{}, all: make(chan struct{})}
	var want []string
	for i := range ttlWorkers {
		s := finishedSend("s"+strconv.Itoa(i), sessionsv1alpha1.SendCompleted, ptr.To[int32](0), 0)
		api.sends = append(api.sends, *s)
		want = append(want, s.Name)
	}
	clk := clocktesting.NewFakeClock(ownerflowtest.Epoch)
	ttl := newSendTTLOn(api, api, clk, time.Hour, func(string) bool { return true })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- ttl.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-api.all:
	case <-time.After(testenv.Timeout):
		api.mu.Lock()
		defer api.mu.Unlock()
		t.Fatalf("%d deletes started together, want %d", api.inFlight, ttlWorkers)
	}
	deletedBy(t, api.ttlAPI, want...)
}

// A scheduled send's key and UID come back as they were given: a UUID (what the API server
// makes) from its 16 bytes, anything else as it was.
func TestTTLItemKeepsTheUID(t *testing.T) {
	for _, uid := range []types.UID{"0b6f9a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "not-a-uuid", "0B6F9A3E-1C2D-4E5F-8A9B-0C1D2E3F4A5B", "00000000-0000-0000-0000-000000000000", ""} {
		item := newTTLItem("ns", "s", uid)
		if got := item.UID(); got != uid {
			t.Errorf("UID %q came back as %q", uid, got)
		}
		if got := item.Key(); got != (types.NamespacedName{Namespace: "ns", Name: "s"}) {
			t.Errorf("key ns/s came back as %v", got)
		}
	}
}

// BenchmarkSendTTLBytes reports the heap a scheduled send costs while it waits for its TTL:
// the item, the queue's entry for it, and its own namespace and name strings (a decoded
// send's), which the item keeps after the send itself is dropped.
func BenchmarkSendTTLBytes(b *testing.B) {
	const n = 100_000
	uids := make([]types.UID, n)
	for i := range uids {
		uids[i] = types.UID(uuid.NewString())
	}
	clk := clocktesting.NewFakeClock(ownerflowtest.Epoch)
	for b.Loop() {
		ttl := newSendTTLOn(nil, nil, clk, time.Hour, func(string) bool { return true })
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		for i := range n {
			ttl.queue.AddAfter(newTTLItem(strings.Clone("team-a"), fmt.Sprintf("send-%05x", i), uids[i]), time.Hour)
		}
		time.Sleep(100 * time.Millisecond) // the queue's goroutine takes in the last items
		goruntime.GC()
		goruntime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/send")
		ttl.queue.ShutDown()
	}
}
