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

// Package window builds what a turn's model sees of its session: the recent history read
// through a per-session cache (and checked after the turn's first append), the conversation
// a forked child starts from, the latest summary and what fits of the messages after it in
// the Agent's context window, and the compaction step's decision and fold. The turn engine
// (internal/turns) keeps the loop: it asks a Builder for a turn's Window, appends what the
// Window queues, tells it what it appended, and makes every model call itself, compaction's
// summary included (through the budget gate's one judged path).
package window

import (
	"context"

	"k8s.io/utils/clock"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Builder builds the window of a turn. The engine holds one for all its turns; a Source is one.
type Builder interface {
	// Build reads what the turn's model sees (from the cache when it can) and returns the
	// turn's window: its history fitted to the Agent's context window, then its input.
	Build(ctx context.Context, req Request) (*Window, error)
}

// Request is a turn as its window sees it.
type Request struct {
	// Namespace and SessionID name the session's transcript.
	Namespace, SessionID string
	// Turn is the turn's id, the prefix of its records' idempotency keys ("<Turn>/<step>").
	Turn string
	// Agent gives the context window's size and the compaction settings.
	Agent *sessionsv1alpha1.Agent
	// Model is the session's model (spec.model), which compaction falls back to.
	Model string
	// System and Tools are what the turn's requests carry besides history: the window keeps
	// room for them.
	System string
	Tools  []provider.Tool
	// Input is the turn's input and SystemContext its system context, both queued unless
	// recorded already; Compact makes a compaction-only turn, which has neither.
	Input         transcript.Message
	SystemContext string
	Compact       bool
	// ForkFrom, when set, is the session whose recent conversation the turn starts from.
	ForkFrom *ForkSource
}

// Window is a turn's context: what its model sees of the session's history, and what the
// turn's records already in the transcript are. One turn uses it, from one goroutine.
type Window struct {
	// Done holds the turn's records the transcript already has (the turn ran before), by
	// idempotency key: their steps are not run again, their content is reused.
	Done map[string]transcript.Record
	// Queue is what the turn appends before its first model call, in order: the forked
	// conversation, the system context and the input, each unless in Done.
	Queue []transcript.AppendRequest

	src *Source
	req Request
	// input is the turn's input as the model sees it; view its history as compaction sees
	// it (the latest summary and the records after it); msgs the fitted view, then input.
	input provider.Message
	view  historyView
	msgs  []provider.Message

	// cachedLast is the seq of the last cached record the history came from, until the
	// turn's first append proves nothing was appended after it (Verify); 0 when the history
	// was read from the store. appended is set by the turn's first append, and contiguous
	// when that append landed right after cachedLast.
	cachedLast int64
	appended   bool
	contiguous bool
	key        string // the session in the history cache

	// forked is the conversation a forked turn starts from (ForkFrom), read by Build.
	forked []transcript.Message
}

// Source builds windows from a transcript store through a per-session history cache.
type Source struct {
	store transcript.Store
	clock clock.WithDelayedExecution
	cache *historyCache
}

var _ Builder = (*Source)(nil)

// NewSource returns a Builder reading store, keeping at most cacheBytes of recent history
// between turns; clk times the compaction steps.
func NewSource(store transcript.Store, clk clock.WithDelayedExecution, cacheBytes int) *Source {
	return &Source{store: store, clock: clk, cache: newHistoryCache(cacheBytes)}
}

// Build implements Builder.
func (s *Source) Build(ctx context.Context, req Request) (*Window, error) {
	w := &Window{src: s, req: req, key: historyKey(req.Namespace, req.SessionID)}
	if err := w.readFork(ctx); err != nil {
		return nil, err
	}
	if err := w.load(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// Messages is what the model sees: the fitted history, then the input. The slice has room
// for the turn's own messages, which the turn appends to its copy.
func (w *Window) Messages() []provider.Message { return w.msgs }

// Summary is the latest summary as the model reads it (a request's Summary), "" for none.
func (w *Window) Summary() string { return summaryText(w.view.summary) }
