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
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/redact"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Bounds of a recall.
const (
	DefaultLimit  = 5
	MaxLimit      = 20
	MaxQueryBytes = 1024
	MaxNeighbours = 5
	// MaxWordSessions bounds the sessions the full-text side of a recall names.
	MaxWordSessions = 2000
	// RRFK is reciprocal rank fusion's constant: a hit's score is the sum over the two
	// rankings that found it of 1/(RRFK+rank), rank from 1. 60 is the usual choice (Cormack
	// et al., 2009): it lets a hit ranked well by both beat one ranked first by one.
	RRFK = 60
)

// Normalize checks a query and bounds its limit.
func Normalize(q transcript.MemoryQuery) (transcript.MemoryQuery, error) {
	if err := transcript.ValidName(q.Namespace); err != nil {
		return q, err
	}
	if !sessionkey.ValidAgentID(q.Agent) {
		return q, errors.Join(transcript.ErrInvalid, fmt.Errorf("memory: invalid agent %q", q.Agent))
	}
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" || len(q.Text) > MaxQueryBytes {
		return q, errors.Join(transcript.ErrInvalid, fmt.Errorf("memory: a query of 1 to %d bytes", MaxQueryBytes))
	}
	q.Limit = max(1, min(cmp.Or(q.Limit, DefaultLimit), MaxLimit))
	q.MinScore = max(0, min(q.MinScore, 1))
	return q, nil
}

// candidate is a chunk found by meaning, words or both.
type candidate struct {
	sid, key  string
	seq       int64
	part      int
	sim       float32
	vecRank   int // from 1; 0 when not found by meaning
	wordRank  int
	fromWords bool
}

// fuse ranks the candidates by reciprocal rank fusion, best first.
func fuse(cs []candidate) []candidate {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		if d := cmp.Compare(rrf(b), rrf(a)); d != 0 {
			return d
		}
		return cmp.Compare(b.sim, a.sim)
	})
	return cs
}

// rrf is a candidate's fused score.
func rrf(c candidate) float64 {
	var s float64
	if c.vecRank > 0 {
		s += 1 / float64(RRFK+c.vecRank)
	}
	if c.wordRank > 0 {
		s += 1 / float64(RRFK+c.wordRank)
	}
	return s
}

// Recall finds the Agent's chunks nearest the query by meaning (its embedder) and by words
// (words, the full-text index, over the same sessions), fused by reciprocal rank fusion.
// Only the sessions q.SessionIDs names (all of the Agent's when nil) are recalled, and the
// Agent's notes when q.Notes is set.
func (ix *Index) Recall(ctx context.Context, q transcript.MemoryQuery, words transcript.Searcher) (transcript.MemoryResult, error) {
	q, err := Normalize(q)
	if err != nil {
		return transcript.MemoryResult{}, err
	}
	res := transcript.MemoryResult{Hits: []transcript.MemoryHit{}}
	k := spaceKey{q.Namespace, q.Agent}
	if q.Embeddings != nil {
		if err := ix.Register(q.Namespace, q.Agent, *q.Embeddings); err != nil {
			return res, errors.Join(transcript.ErrInvalid, err)
		}
	}
	var allowed map[string]bool
	if q.SessionIDs != nil {
		allowed = make(map[string]bool, len(q.SessionIDs))
		for _, id := range q.SessionIDs {
			allowed[id] = true
		}
	}
	type at struct {
		sid string
		seq int64
	}
	byKey := map[at]*candidate{}
	var cs []*candidate
	ag := ix.agent(k)
	if ag == nil {
		res.Vectors = "the Agent's embeddings provider is not registered with this store yet"
	} else {
		vecs, tokens, err := ix.embed(ctx, q.Namespace, ag.emb, []string{q.Text})
		ix.m.embedTokens.WithLabelValues(sourceQuery).Add(float64(tokens))
		res.EmbedTokens = tokens
		if err != nil {
			res.Vectors = "embedding the query failed: " + err.Error()
		} else {
			for i, c := range ix.nearest(k, ag.id, vecs[0], 4*q.Limit, allowed, q.Notes) {
				c.vecRank = i + 1
				cs = append(cs, &c)
			}
		}
	}
	for _, c := range cs {
		if byKey[at{c.sid, c.seq}] == nil {
			byKey[at{c.sid, c.seq}] = c
		}
	}
	if words != nil {
		ids := ix.agentSessions(q.Namespace, q.Agent, allowed)
		if len(ids) > 0 {
			wr, err := words.Search(ctx, transcript.SearchQuery{Namespace: q.Namespace, Text: q.Text, Limit: 2 * q.Limit, SessionIDs: ids})
			if err != nil && !errors.Is(err, transcript.ErrInvalid) {
				return res, err
			}
			for i, h := range wr.Hits {
				key := at{h.SessionID, h.Seq}
				if c := byKey[key]; c != nil {
					if c.wordRank == 0 {
						c.wordRank, c.fromWords = i+1, true
					}
					continue
				}
				c := &candidate{sid: h.SessionID, key: h.SessionKey, seq: h.Seq, wordRank: i + 1, fromWords: true}
				byKey[key] = c
				cs = append(cs, c)
			}
		}
	}
	flat := make([]candidate, 0, len(cs))
	for _, c := range cs {
		if !c.fromWords && float64(c.sim) < q.MinScore {
			continue
		}
		flat = append(flat, *c)
	}
	flat = fuse(flat)
	toolResults := ag != nil && ag.spec.ToolResults
	for _, c := range flat {
		if len(res.Hits) == q.Limit {
			break
		}
		h, ok, err := ix.readHit(ctx, q.Namespace, c, toolResults)
		if err != nil {
			return res, err
		}
		if ok {
			res.Hits = append(res.Hits, h)
		}
	}
	return res, nil
}

// nearest are the chunks of space k (embedder emb) nearest v.
func (ix *Index) nearest(k spaceKey, emb string, v []float32, n int, allowed map[string]bool, notes bool) []candidate {
	q, qs := Quantize(v)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sp := ix.spaces[k]
	if sp == nil || sp.emb != emb || sp.dims != len(q) {
		return nil
	}
	ok := make([]bool, len(sp.slots))
	for i, s := range sp.slots {
		ok[i] = s != nil && (allowed == nil || allowed[s.sid])
	}
	var out []candidate
	for _, sc := range sp.search(q, qs, n, ok, notes) {
		rw := sp.rows[sc.row]
		s := sp.slots[rw.slot]
		out = append(out, candidate{sid: s.sid, key: s.key, seq: rw.seq, part: int(rw.part), sim: sc.sim})
	}
	return out
}

// agentSessions are the Agent's sessions in ns that allowed admits (all when nil), at most
// MaxWordSessions.
func (ix *Index) agentSessions(ns, agent string, allowed map[string]bool) []string {
	ids := []string{}
	for _, h := range ix.src.Live() {
		if h.Namespace != ns || agentOf(h) != agent || allowed != nil && !allowed[h.SessionID] {
			continue
		}
		ids = append(ids, h.SessionID)
		if len(ids) == MaxWordSessions {
			break
		}
	}
	return ids
}

// readHit reads a candidate's chunk back from its transcript: false when it is gone or is
// not a chunk memory keeps (a word hit in a tool result the Agent does not remember).
func (ix *Index) readHit(ctx context.Context, ns string, c candidate, toolResults bool) (transcript.MemoryHit, bool, error) {
	page, err := ix.src.Read(ctx, ns, c.sid, transcript.ReadOptions{AfterSeq: c.seq - 1, BeforeSeq: c.seq + 1, Limit: 1, IncludeTools: true})
	if errors.Is(err, transcript.ErrNotFound) || err == nil && len(page.Messages) == 0 {
		return transcript.MemoryHit{}, false, nil
	}
	if err != nil {
		return transcript.MemoryHit{}, false, err
	}
	rec := &page.Messages[0]
	pieces := Pieces(rec, toolResults)
	if c.part >= len(pieces) {
		return transcript.MemoryHit{}, false, nil
	}
	h := hitOf(c.key, c.sid, rec, pieces[c.part])
	h.Score, h.Similarity, h.ByWords = rrf(c), float64(c.sim), c.fromWords
	return h, true, nil
}

// hitOf is a piece of a record as a hit, its text redacted.
func hitOf(key, sid string, rec *transcript.Record, p Piece) transcript.MemoryHit {
	text, redacted := redact.Redact(p.Text)
	return transcript.MemoryHit{SessionKey: key, SessionID: sid, Seq: rec.Seq, Part: p.Part, MessageID: rec.ID, Kind: p.Kind,
		TS: rec.TS.UTC().Truncate(time.Millisecond), Text: text, ContentRedacted: redacted, Cursor: transcript.FormatCursor(rec.Seq + 1)}
}

// Get is a chunk and up to q.Neighbours chunks of its session either side, read from the
// transcript; with NotesOnly, the chunk only, and only if it is a note.
func (ix *Index) Get(ctx context.Context, q transcript.MemoryGet) (transcript.MemoryChunks, error) {
	if err := transcript.ValidName(q.Namespace); err != nil {
		return transcript.MemoryChunks{}, err
	}
	n := max(0, min(q.Neighbours, MaxNeighbours))
	if q.NotesOnly {
		n = 0
	}
	key, toolResults := ix.sessionOf(q.Namespace, q.SessionID)
	page, err := ix.src.Read(ctx, q.Namespace, q.SessionID, transcript.ReadOptions{
		AfterSeq: max(0, q.Seq-int64(n)-1), BeforeSeq: q.Seq + int64(n) + 1, Limit: 2*n + 1, IncludeTools: true})
	if err != nil {
		return transcript.MemoryChunks{}, err
	}
	var all []transcript.MemoryHit
	at := -1
	for i := range page.Messages {
		rec := &page.Messages[i]
		for _, p := range Pieces(rec, toolResults) {
			if rec.Seq == q.Seq && p.Part == q.Part {
				at = len(all)
			}
			all = append(all, hitOf(key, q.SessionID, rec, p))
		}
	}
	if at < 0 || q.NotesOnly && all[at].Kind != transcript.ChunkNote {
		return transcript.MemoryChunks{}, errors.Join(transcript.ErrNotFound, errors.New("memory: no such chunk"))
	}
	lo, hi := max(0, at-n), min(len(all), at+n+1)
	return transcript.MemoryChunks{Chunks: all[lo:hi], Index: at - lo}, nil
}

// sessionOf is a session's key and whether its Agent's tool results are remembered.
func (ix *Index) sessionOf(ns, sid string) (string, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for k, sp := range ix.spaces {
		if k.ns != ns {
			continue
		}
		if s := sp.session(sid); s != nil {
			ag := ix.agents[k]
			return s.key, ag != nil && ag.spec.ToolResults
		}
	}
	return "", false
}
