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

package turns

import "context"

// laneKey names a session's lane.
type laneKey struct{ namespace, sessionKey string }

// lane is one session's FIFO queue. A lane exists while one worker goroutine drains it, so a
// session never runs two turns at once; the worker ends, and the lane is dropped, when the
// queue is empty.
type lane struct {
	queue []*job
}

// job is a submitted turn. Its context is cancelled by the deadline, Abort or shutdown, with
// the reason as the cause.
type job struct {
	req    TurnRequest
	ctx    context.Context
	cancel context.CancelCauseFunc
	// started is set (under Engine.mu) when the lane takes the job or it is dropped.
	started bool
	// unwatch stops the watch that drops the job from its lane when cancelled while queued.
	unwatch func() bool
}

// enqueueLocked appends j to its session's lane and starts the lane's worker if idle.
func (e *Engine) enqueueLocked(j *job) {
	e.jobs[j.req.ID] = j
	k := laneKey{j.req.Namespace, j.req.SessionKey}
	l, busy := e.lanes[k]
	if !busy {
		l = &lane{}
		e.lanes[k] = l
	}
	l.queue = append(l.queue, j)
	laneQueueDepth.Inc()
	// A queued turn cancelled by its deadline or Abort ends at once, not when it reaches
	// the head of its lane.
	e.wg.Add(1)
	j.unwatch = context.AfterFunc(j.ctx, func() { e.dropQueued(k, j) })
	if !busy {
		e.wg.Add(1)
		go e.drain(k, l)
	}
}

// drain runs a lane's turns in order, each under the global and the namespace bound.
func (e *Engine) drain(k laneKey, l *lane) {
	defer e.wg.Done()
	for {
		e.mu.Lock()
		if len(l.queue) == 0 {
			delete(e.lanes, k)
			e.mu.Unlock()
			return
		}
		j := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		j.started = true
		e.mu.Unlock()
		laneQueueDepth.Dec()
		if j.unwatch() {
			e.wg.Done() // the watch will not run
		}

		var t *turn
		if release, err := e.slots.acquire(j.ctx, j.req.Namespace); err == nil {
			t = e.runTurn(j.ctx, &j.req)
			release()
		} else {
			// Never started: still an interrupted turn for the session.
			t = e.abortedBeforeStart(&j.req, context.Cause(j.ctx))
		}
		j.cancel(nil) // release the deadline timer
		e.end(j, t)
	}
}

// dropQueued ends a job cancelled while it waited in its lane.
func (e *Engine) dropQueued(k laneKey, j *job) {
	defer e.wg.Done()
	e.mu.Lock()
	if j.started {
		e.mu.Unlock()
		return
	}
	j.started = true
	if l, ok := e.lanes[k]; ok {
		for i, q := range l.queue {
			if q == j {
				l.queue = append(l.queue[:i], l.queue[i+1:]...)
				break
			}
		}
	}
	e.mu.Unlock()
	laneQueueDepth.Dec()
	e.end(j, e.abortedBeforeStart(&j.req, context.Cause(j.ctx)))
}
