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

// Package feed is the bounded queue between the store's hooks and an index's one writer,
// shared by the full-text and the memory index: a hook only queues, so an append waits for
// no index; what does not fit the queue (by count or bytes) marks its session dirty, to be
// read back from its file; a barrier lets a test or bench wait until what came before it
// is written.
package feed

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// Ref names a session.
type Ref struct{ NS, SID string }

// Job is a commit (records in seq order), or, with Archived set, a session that went away,
// or, with Restored set, one that came back, or, with Barrier set, a Sync.
type Job struct {
	Header   transcript.SessionHeader
	Events   []store.Event
	Archived bool
	Restored bool
	Barrier  chan struct{}
	bytes    int64
}

// Ref is the job's session.
func (j *Job) Ref() Ref { return Ref{j.Header.Namespace, j.Header.SessionID} }

// Queue is the bounded queue and the dirty sessions.
type Queue struct {
	jobs     chan Job
	queued   atomic.Int64
	maxBytes int64

	mu    sync.Mutex
	dirty map[Ref]struct{}
	wake  chan struct{}
}

// New is a queue of n jobs holding at most maxBytes of records.
func New(n int, maxBytes int64) *Queue {
	return &Queue{jobs: make(chan Job, n), maxBytes: maxBytes, dirty: map[Ref]struct{}{}, wake: make(chan struct{}, 1)}
}

// StoreOptions are the store hooks that feed the queue. A restore is queued behind its
// archive, so the drop is written before the catch-up.
func (q *Queue) StoreOptions() []store.Option {
	return []store.Option{
		store.WithCommitHook(func(c store.Commit) { q.Enqueue(Job{Header: c.Header, Events: c.Events}) }),
		store.WithArchiveHook(func(h transcript.SessionHeader) { q.Enqueue(Job{Header: h, Archived: true}) }),
		store.WithRestoreHook(func(h transcript.SessionHeader) { q.Enqueue(Job{Header: h, Restored: true}) }),
	}
}

// Enqueue queues j, or marks its session dirty when the queue is full.
func (q *Queue) Enqueue(j Job) {
	j.bytes = int64(len(j.Events)) * 64
	for _, e := range j.Events {
		j.bytes += int64(len(e.Data))
	}
	if q.queued.Add(j.bytes) <= q.maxBytes {
		select {
		case q.jobs <- j:
			return
		default:
		}
	}
	q.queued.Add(-j.bytes)
	q.MarkDirty(j.Ref())
}

// MarkDirty leaves a session to be caught up from its file, and wakes the writer.
func (q *Queue) MarkDirty(r Ref) {
	q.mu.Lock()
	q.dirty[r] = struct{}{}
	q.mu.Unlock()
	q.Poke()
}

// Poke wakes the writer.
func (q *Queue) Poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// TakeDirty empties the dirty set and returns what it held.
func (q *Queue) TakeDirty() []Ref {
	q.mu.Lock()
	defer q.mu.Unlock()
	refs := make([]Ref, 0, len(q.dirty))
	for r := range q.dirty {
		refs = append(refs, r)
	}
	clear(q.dirty)
	return refs
}

// Jobs is what the writer reads; Wake says sessions were marked dirty.
func (q *Queue) Jobs() <-chan Job      { return q.jobs }
func (q *Queue) Wake() <-chan struct{} { return q.wake }

// Collect gathers the jobs of one write: first, then those queued until timer fires, up to
// cap(batch); a barrier ends it at once.
func (q *Queue) Collect(ctx context.Context, first Job, batch []Job, timer <-chan time.Time) []Job {
	batch = append(batch[:0], first)
	if first.Barrier != nil {
		return batch
	}
	for len(batch) < cap(batch) {
		select {
		case j := <-q.jobs:
			batch = append(batch, j)
			if j.Barrier != nil {
				return batch
			}
		case <-timer:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// Done releases the bytes of a written batch, runs catchUp once if the batch holds a
// barrier, then lets its barriers go.
func (q *Queue) Done(batch []Job, catchUp func()) {
	for _, j := range batch {
		q.queued.Add(-j.bytes)
	}
	caughtUp := false
	for _, j := range batch {
		if j.Barrier == nil {
			continue
		}
		if !caughtUp {
			catchUp()
			caughtUp = true
		}
		close(j.Barrier)
	}
}

// Sync returns once everything queued before it is written (and the dirty sessions then
// caught up).
func (q *Queue) Sync(ctx context.Context) error {
	b := make(chan struct{})
	select {
	case q.jobs <- Job{Barrier: b}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
