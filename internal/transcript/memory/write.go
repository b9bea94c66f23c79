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
	"errors"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/feed"
)

// batch is what one write embeds and logs: records of sessions, each with the mark it
// reaches.
type batch struct {
	sessions []*pending
}

type pending struct {
	k      spaceKey
	ag     *agentEntry
	header transcript.SessionHeader
	recs   []transcript.Record
	upto   int64
}

// run is the one writer: queued commits in batches, dirty sessions and newly registered
// Agents caught up from their files.
func (ix *Index) run() {
	defer close(ix.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ix.stop
		cancel()
	}()
	ix.catchUpDirty(ctx)
	ix.mu.Lock()
	ix.ready = true
	ix.mu.Unlock()
	ix.exportSize()
	jobs := make([]feed.Job, 0, 256)
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-ix.feed.Jobs():
			timer := ix.o.Clock.NewTimer(ix.o.Linger)
			jobs = ix.feed.Collect(ctx, j, jobs, timer.C())
			timer.Stop()
			ix.applyJobs(ctx, jobs)
			ix.feed.Done(jobs, func() { ix.catchUpDirty(ctx) })
		case <-ix.feed.Wake():
			ix.catchUpDirty(ctx)
		}
		ix.exportSize()
	}
}

// applyJobs writes a batch of commits: the records of registered Agents' sessions that
// follow their marks; a gap, a bad line or a restored session is caught up from its file.
func (ix *Index) applyJobs(ctx context.Context, jobs []feed.Job) {
	var b batch
	bySession := map[sessionRef]*pending{}
	var drops []*entry
	for _, j := range jobs {
		if j.Barrier != nil {
			continue
		}
		ref := j.Ref()
		k := spaceKey{j.Header.Namespace, agentOf(j.Header)}
		switch {
		case j.Archived:
			delete(bySession, ref)
			drops = append(drops, &entry{Op: "drop", NS: k.ns, Agent: k.agent, SID: ref.SID})
			continue
		case j.Restored:
			ix.feed.MarkDirty(ref)
			continue
		}
		ag := ix.agent(k)
		if ag == nil {
			continue // not remembered; caught up if its Agent registers
		}
		p := bySession[ref]
		if p == nil {
			p = &pending{k: k, ag: ag, header: j.Header, upto: ix.mark(k, ag, ref.SID)}
			bySession[ref] = p
			b.sessions = append(b.sessions, p)
		}
		for _, e := range j.Events {
			if e.Seq <= p.upto {
				continue
			}
			rec, err := transcript.DecodeRecord(e.Data)
			if e.Seq != p.upto+1 || err != nil {
				ix.feed.MarkDirty(ref)
				break
			}
			p.recs = append(p.recs, rec)
			p.upto = e.Seq
		}
	}
	if len(drops) > 0 {
		if err := ix.log.append(drops); err != nil {
			ix.o.Log.Error(err, "memory log write failed")
		}
		ix.mu.Lock()
		for _, e := range drops {
			if sp := ix.spaces[spaceKey{e.NS, e.Agent}]; sp != nil {
				ix.dropSession(sp, e.SID)
			}
		}
		ix.mu.Unlock()
	}
	live := b.sessions[:0]
	for _, p := range b.sessions {
		if _, ok := bySession[sessionRef{NS: p.header.Namespace, SID: p.header.SessionID}]; ok {
			live = append(live, p)
		}
	}
	b.sessions = live
	if err := ix.write(ctx, b); err != nil && ctx.Err() == nil {
		ix.retry(b, err)
	}
}

// mark is how far the session is indexed with ag's embedder (0 when not, or with another).
func (ix *Index) mark(k spaceKey, ag *agentEntry, sid string) int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sp := ix.spaces[k]
	if sp == nil || sp.emb != ag.id {
		return 0
	}
	if s := sp.session(sid); s != nil {
		return s.upto
	}
	return 0
}

// retry leaves the sessions of a failed write to be caught up after retryAfter.
func (ix *Index) retry(b batch, err error) {
	ix.o.Log.Error(err, "memory indexing failed; the sessions are read again later", "sessions", len(b.sessions))
	refs := make([]sessionRef, 0, len(b.sessions))
	for _, p := range b.sessions {
		refs = append(refs, sessionRef{NS: p.header.Namespace, SID: p.header.SessionID})
	}
	ix.o.Clock.AfterFunc(retryAfter, func() {
		for _, r := range refs {
			ix.feed.MarkDirty(r)
		}
	})
}

// write embeds the batch's pieces, logs them with the sessions' new marks (fsynced), then
// makes them searchable. A session over its namespace's or the store's bound keeps its
// mark moving but its new chunks are not kept.
func (ix *Index) write(ctx context.Context, b batch) error {
	b.sessions = ix.unheld(b.sessions)
	type item struct {
		p     *pending
		rec   *transcript.Record
		piece Piece
	}
	bySpace := map[spaceKey][]item{}
	var order []spaceKey
	for _, p := range b.sessions {
		if _, ok := bySpace[p.k]; !ok {
			order = append(order, p.k)
			bySpace[p.k] = nil
		}
		for i := range p.recs {
			for _, pc := range Pieces(&p.recs[i], p.ag.spec.ToolResults) {
				bySpace[p.k] = append(bySpace[p.k], item{p, &p.recs[i], pc})
			}
		}
	}
	var es []*entry
	entries := map[*pending]*entry{}
	for _, p := range b.sessions {
		e := &entry{Op: "add", NS: p.k.ns, Agent: p.k.agent, SID: p.header.SessionID, Key: p.header.SessionKey,
			Upto: p.upto, Emb: p.ag.id}
		entries[p] = e
	}
	spaceEntries := map[spaceKey]*entry{}
	for _, k := range order {
		items := bySpace[k]
		ag := agentIn(b, k)
		if ag == nil {
			continue
		}
		room := ix.room(k.ns, ag.spec.Dims)
		if len(items) > room {
			ix.o.Log.V(2).Info("memory bound reached: chunks not kept", "namespace", k.ns, "chunks", len(items)-room)
			items = items[:max(0, room)]
		}
		texts := make([]string, len(items))
		for i, it := range items {
			texts[i] = it.piece.Text
		}
		vecs, tokens, err := ix.embed(ctx, k.ns, ag.emb, texts)
		ix.spend.owe(k.ns, tokens)
		ix.m.embedTokens.WithLabelValues(sourceIndex).Add(float64(tokens))
		if err != nil {
			return err
		}
		for i, it := range items {
			q, scale := Quantize(vecs[i])
			e := entries[it.p]
			e.Chunks = append(e.Chunks, logChunk{Seq: it.rec.Seq, Part: it.piece.Part, Kind: kindCode(it.piece.Kind),
				TS: it.rec.TS.UnixNano(), Scale: scale, V: int8Bytes(q)})
		}
		if ix.spaceEmb(k) != ag.id {
			spaceEntries[k] = &entry{Op: "agent", NS: k.ns, Agent: k.agent, Emb: ag.id, Dims: ag.spec.Dims, Spec: keyless(ag.spec)}
			es = append(es, spaceEntries[k])
		}
	}
	for _, p := range b.sessions {
		es = append(es, entries[p])
	}
	if len(es) == 0 {
		return nil
	}
	if err := ix.log.append(es); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, e := range es {
		k := spaceKey{e.NS, e.Agent}
		if e.Op == "agent" {
			ix.resetSpace(k, e.Emb, e.Dims)
			continue
		}
		if sp := ix.spaces[k]; sp != nil && sp.emb == e.Emb {
			ix.applyAdd(sp, e)
		}
	}
	return nil
}

// unheld are the sessions whose namespaces the manager does not hold for a spent budget;
// the others wait, their marks unmoved, until it releases them.
func (ix *Index) unheld(ps []*pending) []*pending {
	out := make([]*pending, 0, len(ps))
	for _, p := range ps {
		if !ix.spend.hold(p.k.ns, sessionRef{NS: p.header.Namespace, SID: p.header.SessionID}) {
			out = append(out, p)
		}
	}
	return out
}

// agentIn is the registered Agent of the batch's sessions of space k.
func agentIn(b batch, k spaceKey) *agentEntry {
	for _, p := range b.sessions {
		if p.k == k {
			return p.ag
		}
	}
	return nil
}

func keyless(s transcript.EmbeddingsSpec) *transcript.EmbeddingsSpec {
	if s.APIKey != "" {
		return nil
	}
	return &s
}

func (ix *Index) spaceEmb(k spaceKey) string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if sp := ix.spaces[k]; sp != nil {
		return sp.emb
	}
	return ""
}

// room is how many more chunks of dims dimensions the namespace may keep, under its bound
// and the store's.
func (ix *Index) room(ns string, dims int) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	inNS, bytes := 0, int64(0)
	for k, sp := range ix.spaces {
		if k.ns == ns {
			inNS += sp.live
		}
		bytes += int64(sp.live) * sp.rowBytes()
	}
	return max(0, min(MaxVectorsPerNamespace-inNS, int((ix.o.MaxIndexBytes-bytes)/chunkBytes(dims))))
}

// catchUpDirty catches up the newly registered Agents' live sessions and the sessions
// left dirty: a live one from its file, a gone one dropped.
func (ix *Index) catchUpDirty(ctx context.Context) {
	refs := ix.feed.TakeDirty()
	ix.dmu.Lock()
	agents := make(map[spaceKey]bool, len(ix.dAgent))
	for k := range ix.dAgent {
		agents[k] = true
	}
	clear(ix.dAgent)
	ix.dmu.Unlock()
	if len(refs) == 0 && len(agents) == 0 {
		return
	}
	live := map[sessionRef]transcript.SessionHeader{}
	var todo []transcript.SessionHeader
	for _, h := range ix.src.Live() {
		r := sessionRef{NS: h.Namespace, SID: h.SessionID}
		live[r] = h
		if agents[spaceKey{h.Namespace, agentOf(h)}] {
			todo = append(todo, h)
		}
	}
	for _, r := range refs {
		h, ok := live[r]
		if !ok {
			ix.forget(r)
			continue
		}
		if !agents[spaceKey{h.Namespace, agentOf(h)}] {
			todo = append(todo, h)
		}
	}
	for k := range agents {
		ix.dropGone(k, live)
	}
	var b batch
	records := 0
	flush := func() {
		if len(b.sessions) == 0 {
			return
		}
		if err := ix.write(ctx, b); err != nil && ctx.Err() == nil {
			ix.retry(b, err)
		}
		b, records = batch{}, 0
	}
	for _, h := range todo {
		err := ix.catchUp(ctx, h, func(p *pending) {
			b.sessions = append(b.sessions, p)
			if records += len(p.recs); records >= catchUpBatch {
				flush()
			}
		})
		if err != nil && ctx.Err() == nil && !errors.Is(err, transcript.ErrNotFound) {
			ix.o.Log.Error(err, "memory catch-up of a session failed", "namespace", h.Namespace, "sessionId", h.SessionID)
			ix.retry(batch{sessions: []*pending{{header: h}}}, err)
		}
	}
	flush()
}

// forget drops a session that is gone from the index.
func (ix *Index) forget(r sessionRef) {
	ix.mu.RLock()
	var ks []spaceKey
	for k, sp := range ix.spaces {
		if k.ns == r.NS && sp.session(r.SID) != nil {
			ks = append(ks, k)
		}
	}
	ix.mu.RUnlock()
	for _, k := range ks {
		e := &entry{Op: "drop", NS: k.ns, Agent: k.agent, SID: r.SID}
		if err := ix.log.append([]*entry{e}); err != nil {
			ix.o.Log.Error(err, "memory log write failed")
		}
		ix.mu.Lock()
		if sp := ix.spaces[k]; sp != nil {
			ix.dropSession(sp, r.SID)
		}
		ix.mu.Unlock()
	}
}

// dropGone forgets the space's sessions that the store no longer has live.
func (ix *Index) dropGone(k spaceKey, live map[sessionRef]transcript.SessionHeader) {
	ix.mu.RLock()
	var gone []sessionRef
	if sp := ix.spaces[k]; sp != nil {
		for sid := range sp.byID {
			if _, ok := live[sessionRef{NS: k.ns, SID: sid}]; !ok {
				gone = append(gone, sessionRef{NS: k.ns, SID: sid})
			}
		}
	}
	ix.mu.RUnlock()
	for _, r := range gone {
		ix.forget(r)
	}
}

// catchUp reads one session's records after its mark, a page at a time, and hands each
// page to add; the caller writes them in batches of about catchUpBatch records, one fsync
// each, so a rebuild costs a sync per thousand records, not per session.
func (ix *Index) catchUp(ctx context.Context, h transcript.SessionHeader, add func(*pending)) error {
	k := spaceKey{h.Namespace, agentOf(h)}
	ag := ix.agent(k)
	if ag == nil {
		return nil
	}
	upto := ix.mark(k, ag, h.SessionID)
	if upto == 0 {
		// A session not yet indexed gets its mark (and its space) even when empty, so a
		// recall finds the Agent's space.
		add(&pending{k: k, ag: ag, header: h})
	}
	for {
		page, err := ix.src.Read(ctx, h.Namespace, h.SessionID, transcript.ReadOptions{
			AfterSeq: upto, BeforeSeq: upto + catchUpPage + 1, Limit: catchUpPage, IncludeTools: true})
		if err != nil || len(page.Messages) == 0 {
			return err
		}
		p := &pending{k: k, ag: ag, header: h, recs: page.Messages, upto: page.Messages[len(page.Messages)-1].Seq}
		add(p)
		upto = p.upto
	}
}
