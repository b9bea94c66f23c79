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

package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
	turnwindow "github.com/agent-sessions/agent-session-operator/internal/turns/window"
)

func init() {
	register("compaction", benchCompaction)
}

const (
	// compactionRuns sessions of compactionHistory messages each compact once, timed.
	compactionRuns    = 15
	compactionHistory = 10000
	// longHistory is the session whose turn's request size is measured.
	longHistory = 100000
)

// benchCompaction measures the compaction step on the real file store with an instant
// scripted model. compaction_turn_ms: one turn of a session with 10,000 messages of history
// and no summary yet, which folds them (reading them back from the store) into a compaction
// record before its own model call, p50. turn_request_tokens_100k: the request of a turn in
// a session of 100,000 messages with compaction on, the summary as long as the engine lets
// one be (the model echoes the whole step's input); the larger of the compacting turn's and
// the next turn's, against the default 128,000-token window.
func benchCompaction() ([]Figure, error) {
	dir, err := os.MkdirTemp("", "bench-compaction-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenFileStore(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: turnNS, Name: "bench", ResourceVersion: "1"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			{Match: "^" + turnwindow.CompactionStepPrefix, Reply: "summary"}, {Match: ".", Reply: "ok"}}}},
	}
	r := &memReader{agent: agent, sessions: map[string]*sessionsv1alpha1.AgentSession{}}
	seen := &requestLog{}
	e, err := turns.NewEngine(turns.Options{Client: &statusSink{r: r}, Reader: r, APIReader: r, Store: st,
		NewProvider: func(cfg provider.Config) (provider.Provider, error) {
			p, err := provider.New(cfg)
			return loggedProvider{p, seen}, err
		}})
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	b := &compactionBench{ctx: context.Background(), st: st, r: r, e: e, wake: e.Wake(turns.OwnerSessionSend)}

	lat := make([]time.Duration, 0, compactionRuns)
	for i := range compactionRuns {
		key, err := b.session("c"+strconv.Itoa(i), compactionHistory, 30)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if err := b.turn(key, "t"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(start))
		if err := b.expectFolded(key, compactionHistory-turnwindow.DefaultKeepRecentMessages); err != nil {
			return nil, err
		}
	}

	// The longest summary: the model echoes the step's input, which the engine truncates.
	agent.Spec.Model.Script[0].Reply = "{{input}}"
	agent.ResourceVersion = "2"
	key, err := b.session("long", longHistory, 200)
	if err != nil {
		return nil, err
	}
	seen.reset()
	for i := range 2 {
		if err := b.turn(key, "long-"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	tokens := seen.largestTurn()
	if tokens >= turnwindow.DefaultContextTokens {
		return nil, fmt.Errorf("a turn's request of %d tokens passes the %d-token window", tokens, turnwindow.DefaultContextTokens)
	}
	return []Figure{
		{Name: "compaction_turn_ms", Value: quantileMS(lat, 0.5), Unit: "ms",
			Target: "a turn that compacts 10,000 messages of history first, p50, instant scripted model, file store"},
		{Name: "turn_request_tokens_100k", Value: float64(tokens), Unit: "tokens",
			Target: "< 128000 (the window): a turn's request in a 100,000-message session, compaction on, longest summary"},
	}, nil
}

type compactionBench struct {
	ctx  context.Context
	st   transcript.Store
	r    *memReader
	e    *turns.Engine
	wake <-chan event.GenericEvent
}

// session creates a session whose transcript holds n messages of size bytes, alternately
// user and assistant, appended as earlier turns would have.
func (b *compactionBench) session(name string, n, size int) (string, error) {
	key := "agent:bench:" + name
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: turnNS, Name: sessionkey.ObjectName(key)},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench"},
		Status:     sessionsv1alpha1.AgentSessionStatus{SessionID: name, Phase: sessionsv1alpha1.SessionActive},
	}
	b.r.sessions[key] = s
	if _, err := b.st.CreateSession(b.ctx, transcript.SessionHeader{Namespace: turnNS, SessionID: name, SessionKey: key}); err != nil {
		return "", err
	}
	const batch = 5000
	reqs := make([]transcript.AppendRequest, 0, batch)
	for i := range n {
		role := transcript.RoleUser
		if i%2 == 1 {
			role = transcript.RoleAssistant
		}
		text := "message " + strconv.Itoa(i) + " "
		text += strings.Repeat("x", max(0, size-len(text)))
		reqs = append(reqs, transcript.AppendRequest{Message: transcript.Message{Role: role,
			Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}})
		if len(reqs) == batch || i == n-1 {
			if _, err := b.st.Append(b.ctx, turnNS, name, reqs...); err != nil {
				return "", err
			}
			reqs = reqs[:0]
		}
	}
	return key, nil
}

// turn runs one turn in the session and waits for its result.
func (b *compactionBench) turn(key, id string) error {
	owner := turns.Owner{Kind: turns.OwnerSessionSend, NamespacedName: types.NamespacedName{Namespace: turnNS, Name: id}}
	req := turns.TurnRequest{ID: id + "/round-1", Namespace: turnNS, SessionKey: key, Owner: owner,
		Session: b.r.sessions[key], Agent: b.r.agent,
		Input: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hello"}}}}
	if err := b.e.Submit(b.ctx, req); err != nil {
		return err
	}
	select {
	case <-b.wake:
	case <-time.After(time.Minute):
		return fmt.Errorf("turn %s not done after a minute", req.ID)
	}
	res, ok := b.e.Result(owner, req.ID)
	defer b.e.Abort(owner)
	switch {
	case !ok:
		return fmt.Errorf("turn %s woke without a result", req.ID)
	case res.Err != nil:
		return fmt.Errorf("turn %s: %w", req.ID, res.Err)
	case !res.Compacted && strings.HasPrefix(id, "t"):
		return fmt.Errorf("turn %s did not compact", req.ID)
	}
	return nil
}

// expectFolded checks the session's one compaction record covers at least n messages.
func (b *compactionBench) expectFolded(key string, n int64) error {
	s := b.r.sessions[key]
	page, err := b.st.Read(b.ctx, turnNS, s.Status.SessionID, transcript.ReadOptions{Limit: 10})
	if err != nil {
		return err
	}
	for _, rec := range page.Messages {
		if c := rec.Message.Compaction; c != nil {
			if c.ToSeq-c.FromSeq+1 < n {
				return fmt.Errorf("the compaction of %s folded %d messages, want %d", key, c.ToSeq-c.FromSeq+1, n)
			}
			return nil
		}
	}
	return fmt.Errorf("no compaction record in %s", key)
}

// requestLog keeps the size of each turn's model request (not the compaction steps').
type requestLog struct {
	mu    sync.Mutex
	sizes []int
}

func (l *requestLog) reset() { l.mu.Lock(); l.sizes = nil; l.mu.Unlock() }

func (l *requestLog) add(req *provider.Request) {
	n := len(req.System) + len(req.Summary)
	for _, m := range req.Messages {
		if m.Role == provider.RoleUser && strings.HasPrefix(m.Text, turnwindow.CompactionStepPrefix) {
			return
		}
		n += len(m.Text)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	l.mu.Lock()
	l.sizes = append(l.sizes, n)
	l.mu.Unlock()
}

// largestTurn is the largest turn request seen, in tokens of 4 bytes (the engine's estimate).
func (l *requestLog) largestTurn() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := append([]int(nil), l.sizes...)
	sort.Ints(s)
	if len(s) == 0 {
		return 0
	}
	return int64(s[len(s)-1]+3) / 4
}

type loggedProvider struct {
	provider.Provider
	log *requestLog
}

func (p loggedProvider) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	p.log.add(&req)
	return p.Provider.Complete(ctx, req)
}
