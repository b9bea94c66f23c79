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

package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/feed"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// Bounds of the index, with the queue's.
const (
	// DefaultQueue and MaxQueueBytes bound the commits waiting for the indexer: past them
	// a session is read back from its file.
	DefaultQueue  = 4096
	MaxQueueBytes = 16 << 20
	// DefaultLinger is how long the indexer gathers commits into one batch of embeddings.
	DefaultLinger = 50 * time.Millisecond
	// MaxVectorsPerNamespace bounds the chunks of a namespace's Agents together; past it
	// new chunks are not remembered (the full-text index still finds their words).
	MaxVectorsPerNamespace = 200000
	// MaxIndexBytes bounds what the whole store's chunks hold in memory (vector, hash bits,
	// row), so the index stays well within the store's memory limit (256Mi) beside its
	// sessions: 64 MiB is about 180,000 chunks of 256 dimensions (370 bytes each).
	MaxIndexBytes = 64 << 20
	// DefaultCallsPerMinute is the embeddings calls a namespace may make a minute, the
	// indexer's and the queries' together.
	DefaultCallsPerMinute = 600
	// maxAgents bounds the Agents whose embedders the store holds.
	maxAgents = 10000
	// retryAfter is how long a session whose embeddings failed waits to be tried again.
	retryAfter   = 30 * time.Second
	catchUpPage  = 100
	catchUpBatch = 1000
)

// Embedder turns texts into unit vectors of one length (provider.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, int64, error)
	Dims() int
}

// Source is where the index reads transcripts: the store's live sessions and their records.
type Source interface {
	Live() []transcript.SessionHeader
	Read(ctx context.Context, namespace, sessionID string, o transcript.ReadOptions) (transcript.Page, error)
}

// Options configure an Index.
type Options struct {
	// NewEmbedder builds an Agent's embedder from its spec.
	NewEmbedder func(transcript.EmbeddingsSpec) (Embedder, error)
	// CallsPerMinute bounds each namespace's embeddings calls (0: DefaultCallsPerMinute).
	CallsPerMinute int
	Queue          int
	Linger         time.Duration
	// MaxIndexBytes overrides the bound of the same name (0: the constant).
	MaxIndexBytes int64
	Clock         clock.WithDelayedExecution
	Log           logr.Logger
	// Metrics receives the index's size and spend (nil: counted, served nowhere).
	Metrics *Metrics
}

type spaceKey struct{ ns, agent string }
type sessionRef = feed.Ref

// agentEntry is an Agent's registered embedder.
type agentEntry struct {
	spec transcript.EmbeddingsSpec
	emb  Embedder
	id   string
}

// Index is the memory of a store's Agents.
type Index struct {
	o   Options
	m   *Metrics
	src Source
	log *logFile

	mu       sync.RWMutex
	spaces   map[spaceKey]*space
	agents   map[spaceKey]*agentEntry
	limiters map[string]*rate.Limiter
	ready    bool

	feed   *feed.Queue
	spend  *spendBook
	dmu    sync.Mutex
	dAgent map[spaceKey]struct{} // Agents registered since the last catch-up
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// EmbedderID names an embedder by what decides its vectors: two specs with one id embed
// alike (the key is not part of it).
func EmbedderID(s transcript.EmbeddingsSpec) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%d", s.Provider, s.BaseURL, s.Model, s.Dims))
	return hex.EncodeToString(sum[:8])
}

// Open loads the index's log at path (creating it) and registers again the Agents whose
// embedders need no key (the offline one); Start starts the indexer.
func Open(path string, o Options) (*Index, error) {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Linger <= 0 {
		o.Linger = DefaultLinger
	}
	if o.CallsPerMinute <= 0 {
		o.CallsPerMinute = DefaultCallsPerMinute
	}
	if o.MaxIndexBytes <= 0 {
		o.MaxIndexBytes = MaxIndexBytes
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	ix := &Index{o: o, m: o.Metrics, spaces: map[spaceKey]*space{}, agents: map[spaceKey]*agentEntry{}, limiters: map[string]*rate.Limiter{},
		feed: feed.New(o.Queue, MaxQueueBytes), spend: newSpendBook(), dAgent: map[spaceKey]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{})}
	l, chunks, err := openLog(path, ix.replay)
	if err != nil {
		return nil, fmt.Errorf("memory index %s: %w", path, err)
	}
	ix.log = l
	live := 0
	for _, sp := range ix.spaces {
		live += sp.live
	}
	// Forgotten chunks (dropped sessions, evicted ones) outnumber the kept: write the kept.
	if chunks > 2*live+1000 {
		if err := l.rewrite(ix.state()); err != nil {
			o.Log.Error(err, "memory index compaction failed; the log keeps its dead lines")
		}
	}
	return ix, nil
}

// replay applies one log line on open.
func (ix *Index) replay(e *entry) {
	k := spaceKey{e.NS, e.Agent}
	switch e.Op {
	case "agent":
		ix.resetSpace(k, e.Emb, e.Dims)
		if e.Spec != nil && e.Spec.APIKey == "" && ix.o.NewEmbedder != nil {
			if emb, err := ix.o.NewEmbedder(*e.Spec); err == nil && emb.Dims() == e.Dims {
				ix.agents[k] = &agentEntry{spec: *e.Spec, emb: emb, id: e.Emb}
			}
		}
	case "add":
		sp := ix.spaces[k]
		if sp == nil || sp.emb != e.Emb {
			return
		}
		ix.applyAdd(sp, e)
	case "drop":
		if sp := ix.spaces[k]; sp != nil {
			ix.dropSession(sp, e.SID)
		}
	}
}

// resetSpace makes the space of k one of embedder emb: a new embedder forgets the old
// vectors (the catch-up embeds the transcripts again).
func (ix *Index) resetSpace(k spaceKey, emb string, dims int) {
	if sp := ix.spaces[k]; sp == nil || sp.emb != emb {
		ix.spaces[k] = newSpace(k.ns, k.agent, emb, dims)
	}
}

func (ix *Index) applyAdd(sp *space, e *entry) {
	s := sp.session(e.SID)
	if s == nil {
		s = &session{ns: e.NS, sid: e.SID, key: e.Key}
		sp.addSession(s)
	}
	for _, c := range e.Chunks {
		if len(c.V) != sp.dims {
			continue
		}
		sp.add(s, c.Seq, c.Part, c.Kind, c.TS, bytesInt8(c.V), c.Scale)
	}
	s.upto = max(s.upto, e.Upto)
}

func (ix *Index) dropSession(sp *space, sid string) {
	if s := sp.session(sid); s != nil {
		sp.dropSession(s)
	}
}

// session finds a session of the space by id.
func (sp *space) session(sid string) *session { return sp.byID[sid] }

// state is the log lines that rebuild the index as it is.
func (ix *Index) state() []*entry {
	var es []*entry
	for k, sp := range ix.spaces {
		a := &entry{Op: "agent", NS: k.ns, Agent: k.agent, Emb: sp.emb, Dims: sp.dims}
		if ae := ix.agents[k]; ae != nil && ae.spec.APIKey == "" {
			spec := ae.spec
			a.Spec = &spec
		}
		es = append(es, a)
		for _, s := range sp.slots {
			if s == nil {
				continue
			}
			e := &entry{Op: "add", NS: k.ns, Agent: k.agent, SID: s.sid, Key: s.key, Upto: s.upto, Emb: sp.emb}
			for _, r := range s.rows {
				rw := sp.rows[r]
				e.Chunks = append(e.Chunks, logChunk{Seq: rw.seq, Part: int(rw.part), Kind: rw.kind, TS: rw.ts, Scale: rw.scale,
					V: int8Bytes(sp.vecs[int(r)*sp.dims : int(r+1)*sp.dims])})
			}
			es = append(es, e)
		}
	}
	return es
}

// StoreOptions are the store hooks that feed the index; each only queues.
func (ix *Index) StoreOptions() []store.Option { return ix.feed.StoreOptions() }

// Start starts the indexer over src: it catches up the registered Agents' sessions, then
// writes what is queued.
func (ix *Index) Start(src Source) {
	ix.src = src
	ix.mu.Lock()
	for k := range ix.agents {
		ix.dAgent[k] = struct{}{}
	}
	ix.mu.Unlock()
	go ix.run()
}

// Close stops the indexer (what is queued is read back from the files on the next open)
// and closes the log.
func (ix *Index) Close() error {
	var err error
	ix.once.Do(func() {
		close(ix.stop)
		if ix.src != nil {
			<-ix.done
		}
		err = ix.log.close()
	})
	return err
}

// Ready says whether the catch-up after open has finished.
func (ix *Index) Ready() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ready
}

// Sync returns once everything queued before it, and every catch-up due, is indexed.
func (ix *Index) Sync(ctx context.Context) error { return ix.feed.Sync(ctx) }

// Register sets the embedder of an Agent's memory; a new or changed one has its sessions
// caught up (embedded again when the embedder changed).
func (ix *Index) Register(ns, agent string, spec transcript.EmbeddingsSpec) error {
	if ix.o.NewEmbedder == nil {
		return errors.New("memory: no embedders configured")
	}
	if spec.Dims <= 0 {
		spec.Dims = 256
	}
	k := spaceKey{ns, agent}
	id := EmbedderID(spec)
	ix.mu.RLock()
	cur := ix.agents[k]
	n := len(ix.agents)
	ix.mu.RUnlock()
	if cur != nil && cur.id == id && cur.spec == spec {
		return nil
	}
	if cur == nil && n >= maxAgents {
		return fmt.Errorf("memory: the store holds the embedders of %d Agents already", maxAgents)
	}
	emb, err := ix.o.NewEmbedder(spec)
	if err != nil {
		return err
	}
	if emb.Dims() != spec.Dims {
		return fmt.Errorf("memory: embedder of %d dimensions, want %d", emb.Dims(), spec.Dims)
	}
	// A registration without a key is logged before it is answered, so a store killed
	// before its first chunk is indexed still knows the embedder when it comes back. One
	// with a key stays in memory: the manager hands it again with the next memory call.
	e := &entry{Op: "agent", NS: ns, Agent: agent, Emb: id, Dims: spec.Dims, Spec: keyless(spec)}
	if e.Spec != nil {
		if err := ix.log.append([]*entry{e}); err != nil {
			return fmt.Errorf("memory: logging the embedder: %w", err)
		}
	}
	ix.mu.Lock()
	ix.agents[k] = &agentEntry{spec: spec, emb: emb, id: id}
	if e.Spec != nil {
		ix.resetSpace(k, id, spec.Dims)
	}
	ix.mu.Unlock()
	ix.dmu.Lock()
	ix.dAgent[k] = struct{}{}
	ix.dmu.Unlock()
	ix.feed.Poke()
	return nil
}

// agent is the registered embedder of k, or nil.
func (ix *Index) agent(k spaceKey) *agentEntry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.agents[k]
}

// limiter is the namespace's embeddings rate.
func (ix *Index) limiter(ns string) *rate.Limiter {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	l := ix.limiters[ns]
	if l == nil {
		per := time.Minute / time.Duration(ix.o.CallsPerMinute)
		l = rate.NewLimiter(rate.Every(per), max(1, ix.o.CallsPerMinute/10))
		ix.limiters[ns] = l
	}
	return l
}

// local is an embedder that calls no provider (the offline one): no rate bounds it.
type local interface{ Local() bool }

// embed embeds texts for ns with emb, in calls of at most 64 texts, each call of a provider
// waiting its turn under the namespace's rate on the index's clock.
func (ix *Index) embed(ctx context.Context, ns string, emb Embedder, texts []string) ([][]float32, int64, error) {
	out := make([][]float32, 0, len(texts))
	var tokens int64
	l, ok := emb.(local)
	limited := !ok || !l.Local()
	for len(texts) > 0 {
		n := min(len(texts), 64)
		if limited {
			if err := ix.wait(ctx, ns); err != nil {
				return nil, tokens, err
			}
		}
		vs, t, err := emb.Embed(ctx, texts[:n])
		tokens += t
		if err != nil {
			return nil, tokens, err
		}
		if len(vs) != n {
			return nil, tokens, fmt.Errorf("memory: %d vectors for %d texts", len(vs), n)
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, tokens, nil
}

// wait takes one call of ns's rate, sleeping on the index's clock when it must.
func (ix *Index) wait(ctx context.Context, ns string) error {
	r := ix.limiter(ns).ReserveN(ix.o.Clock.Now(), 1)
	d := r.DelayFrom(ix.o.Clock.Now())
	if d <= 0 {
		return nil
	}
	t := ix.o.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}

// Bytes is the memory the vectors and rows hold.
func (ix *Index) Bytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var n int64
	for _, sp := range ix.spaces {
		n += int64(cap(sp.rows)) * sp.rowBytes()
	}
	return n
}

// Chunks is how many chunks the index holds.
func (ix *Index) Chunks() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for _, sp := range ix.spaces {
		n += sp.live
	}
	return n
}

// agentOf is the Agent a session belongs to, from its key.
func agentOf(h transcript.SessionHeader) string { return sessionkey.AgentOf(h.SessionKey) }
