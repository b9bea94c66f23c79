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
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SendFeed takes the SessionSend changes the manager sees to the transcript-store's /events
// (the transcript client does, over the internal socket), best effort as a watch is.
type SendFeed interface {
	PublishSendChange(transcript.SendChange)
}

// finishWait is how long a send that left the cache is held before its leaving is published
// as a delete: a send leaves the manager's informer (unfinished sends only) when it
// finishes, and the informer may see that before the finishing write returns.
const finishWait = 5 * time.Second

// Feed hands the store every change of this shard's SessionSends, so that the store
// needs no watch of sends of its own (one watcher of every send fewer on the API server).
// The cache's informer gives creations and updates; the send controller's finishing status
// write gives the finished send (finished), which the informer never shows: its field
// selector drops a send as it finishes, with a delete carrying the send as it was. Such a
// delete is held for finishWait and published only when no finishing write came for the
// send meanwhile (the send was deleted unfinished). A finished send's own deletion is not
// published: nothing in the manager sees it.
type Feed struct {
	feed  SendFeed
	cache cache.Informers
	owns  func(namespace string) bool
	clock clock.PassiveClock

	mu       sync.Mutex
	finished map[types.UID]time.Time // sends finished by this manager, until finishWait after
	left     workqueue.TypedDelayingInterface[leftSend]
}

// leftSend is a send the informer saw leave, with its last cached state.
type leftSend struct{ s *sessionsv1alpha1.SessionSend }

// NewSendFeed hands feed the changes of the SessionSends of the namespaces owns says are
// this shard's, read from c; clk paces its waits.
func NewSendFeed(feed SendFeed, c cache.Informers, owns func(string) bool, clk clock.WithTicker) *Feed {
	return &Feed{feed: feed, cache: c, owns: owns, clock: clk, finished: map[types.UID]time.Time{},
		left: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[leftSend]{Clock: clk})}
}

// Start registers on the send informer, then publishes the held deletes until ctx ends.
func (f *Feed) Start(ctx context.Context) error {
	inf, err := f.cache.GetInformer(ctx, &sessionsv1alpha1.SessionSend{})
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			// The initial list is what the store's watch, from now, would not have shown.
			if s, ok := obj.(*sessionsv1alpha1.SessionSend); ok && !initial {
				f.publish(transcript.ChangeAdded, s)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*sessionsv1alpha1.SessionSend)
			s, ok2 := newObj.(*sessionsv1alpha1.SessionSend)
			if ok1 && ok2 && old.ResourceVersion != s.ResourceVersion && !f.finishedLately(s.UID) {
				f.publish(transcript.ChangeModified, s)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if s, ok := obj.(*sessionsv1alpha1.SessionSend); ok && f.owns(s.Namespace) {
				f.left.AddAfter(leftSend{s}, finishWait)
			}
		},
	})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		f.left.ShutDown()
	}()
	for f.next() {
	}
	_ = inf.RemoveEventHandler(reg)
	return nil
}

// NeedLeaderElection: only the leader finishes sends, so only its feed is whole.
func (f *Feed) NeedLeaderElection() bool { return true }

// next publishes one held delete, unless the send was finished meanwhile; false once the
// queue is shut down.
func (f *Feed) next() bool {
	item, shutdown := f.left.Get()
	if shutdown {
		return false
	}
	defer f.left.Done(item)
	f.mu.Lock()
	_, done := f.finished[item.s.UID]
	delete(f.finished, item.s.UID)
	f.mu.Unlock()
	if !done {
		f.publish(transcript.ChangeDeleted, item.s)
	}
	return true
}

// finishedNow publishes the send its finishing status write returned.
func (f *Feed) finishedNow(s *sessionsv1alpha1.SessionSend) {
	now := f.clock.Now()
	f.mu.Lock()
	// A send whose leaving the informer never showed (a restart between) is forgotten
	// after a while: the map stays as small as the sends finishing within finishWait.
	for uid, at := range f.finished {
		if now.Sub(at) > 2*finishWait {
			delete(f.finished, uid)
		}
	}
	f.finished[s.UID] = now
	f.mu.Unlock()
	f.publish(transcript.ChangeModified, s)
}

// finishedLately is true for a send this manager finished within the last moments: an
// update the informer hands over late is older than the finished send already published.
func (f *Feed) finishedLately(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.finished[uid]
	return ok
}

func (f *Feed) publish(t string, s *sessionsv1alpha1.SessionSend) {
	if !f.owns(s.Namespace) {
		return
	}
	if len(s.ManagedFields) > 0 { // a write's answer; the cache's objects have none
		s = s.DeepCopy()
		s.ManagedFields = nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return
	}
	f.feed.PublishSendChange(transcript.SendChange{Type: t, Object: data})
}
