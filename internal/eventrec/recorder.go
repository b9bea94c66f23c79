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

// Package eventrec records events.k8s.io/v1 Events with bounded memory.
//
// client-go's events broadcaster (what controller-runtime's GetEventRecorder uses) keeps a
// copy of every distinct Event for 6 to 12 minutes to build series. A send is a new object
// with its own Events, so at 85 sends/s that cache alone held tens of thousands of Events
// and was the largest part of the manager's heap. This recorder keeps only a bounded set of
// recent event keys, to drop exact repeats (a step retried in a loop) instead of counting
// them in a series, and writes from a bounded queue so a slow API server never blocks a
// reconcile.
package eventrec

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

const (
	// DefaultQueue is how many Events may wait for the API server; more are dropped.
	DefaultQueue = 1000
	// DefaultRecent is how many event keys are remembered to drop repeats.
	DefaultRecent = 4096
	// DefaultRepeatWindow is how long an identical Event is not recorded again.
	DefaultRepeatWindow = 10 * time.Minute
	// maxNote is the API's limit of an Event's note.
	maxNote = 1024
	// maxName is the longest object name.
	maxName = 253
	// attempts bounds the creates of one Event.
	attempts = 3
	// workers create Events in parallel.
	workers = 2
)

// Options configure a Provider; zero values take the defaults.
type Options struct {
	Queue        int
	Recent       int
	RepeatWindow time.Duration
	Clock        clock.Clock
}

// Provider hands out one recorder per reporting controller; all share its queue and its
// memory of recent Events. It is a manager.Runnable: Start writes the queued Events until
// its context ends.
type Provider struct {
	client client.Client
	scheme *runtime.Scheme
	opts   Options
	host   string
	queue  chan *eventsv1.Event
	seq    atomic.Uint64

	mu     sync.Mutex // makes admit's look-up and update one step
	recent *lru.Cache // event key -> time.Time it was last recorded
}

// New returns a Provider that creates Events with c.
func New(c client.Client, scheme *runtime.Scheme, o Options) *Provider {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Recent <= 0 {
		o.Recent = DefaultRecent
	}
	if o.RepeatWindow <= 0 {
		o.RepeatWindow = DefaultRepeatWindow
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	host, _ := os.Hostname()
	return &Provider{client: c, scheme: scheme, opts: o, host: host, queue: make(chan *eventsv1.Event, o.Queue),
		recent: lru.New(o.Recent)}
}

// GetEventRecorder returns the recorder of the reporting controller name.
func (p *Provider) GetEventRecorder(name string) recorder.EventRecorder {
	instance := name + "-" + p.host
	if len(instance) > 128 {
		instance = instance[:128]
	}
	return &eventRecorder{p: p, controller: name, instance: instance}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: a standby records nothing
// worth losing, and the webhooks and runnables that record may run on any replica.
func (p *Provider) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (p *Provider) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-p.queue:
					p.write(ctx, ev)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

func (p *Provider) write(ctx context.Context, ev *eventsv1.Event) {
	backoff := 100 * time.Millisecond
	for i := 1; ; i++ {
		err := p.client.Create(ctx, ev)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
		// Invalid or forbidden Events do not get better with time, nor do Events of a
		// namespace that is going away.
		if i == attempts || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || ctx.Err() != nil {
			logf.FromContext(ctx).WithName("events").Error(err, "dropping Event", "namespace", ev.Namespace, "regarding", ev.Regarding.Name, "reason", ev.Reason)
			eventsDropped.WithLabelValues(dropWrite).Inc()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-p.opts.Clock.After(backoff):
		}
		backoff *= 4
	}
}

// admit reports whether an Event with key is new (not recorded within the repeat window)
// and remembers it.
func (p *Provider) admit(key string) bool {
	now := p.opts.Clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.recent.Get(key); ok && now.Sub(at.(time.Time)) < p.opts.RepeatWindow {
		return false
	}
	p.recent.Add(key, now)
	return true
}

type eventRecorder struct {
	p                    *Provider
	controller, instance string
}

// Eventf implements events.EventRecorder.
func (r *eventRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.AnnotatedEventf(regarding, related, nil, eventtype, reason, action, note, args...)
}

// AnnotatedEventf implements events.AnnotatedEventRecorder.
func (r *eventRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	ev, err := r.makeEvent(regarding, related, annotations, eventtype, reason, action, fmt.Sprintf(note, args...))
	if err != nil {
		logf.Log.WithName("events").Error(err, "cannot record Event", "reason", reason)
		eventsDropped.WithLabelValues(dropInvalid).Inc()
		return
	}
	key := string(ev.Regarding.UID) + "\x00" + ev.Regarding.Namespace + "/" + ev.Regarding.Name + "\x00" +
		r.controller + "\x00" + eventtype + "\x00" + reason + "\x00" + action + "\x00" + ev.Note
	if !r.p.admit(key) {
		eventsDropped.WithLabelValues(dropRepeat).Inc()
		return
	}
	select {
	case r.p.queue <- ev:
	default:
		logf.Log.WithName("events").V(1).Info("Event queue full, dropping Event", "regarding", ev.Regarding.Name, "reason", reason)
		eventsDropped.WithLabelValues(dropQueueFull).Inc()
	}
}

func (r *eventRecorder) makeEvent(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		return nil, fmt.Errorf("event type %q is neither Normal nor Warning", eventtype)
	}
	ref, err := reference.GetReference(r.p.scheme, regarding)
	if err != nil {
		return nil, err
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		if relatedRef, err = reference.GetReference(r.p.scheme, related); err != nil {
			return nil, err
		}
	}
	now := r.p.opts.Clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        r.p.eventName(ref.Name, now),
			Namespace:   ns,
			Annotations: annotations,
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                textutil.Truncate(note, maxNote),
		Type:                eventtype,
	}, nil
}

// eventName is unique per Event: the regarding object's name, cut so the whole stays a valid
// name, then the time and a sequence number (two Events in one clock tick).
func (p *Provider) eventName(regarding string, now time.Time) string {
	suffix := "." + strconv.FormatInt(now.UnixNano(), 16) + strconv.FormatUint(p.seq.Add(1)&0xfff, 16)
	if n := maxName - len(suffix); len(regarding) > n {
		regarding = regarding[:n]
	}
	return regarding + suffix
}
