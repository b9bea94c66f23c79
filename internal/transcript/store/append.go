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

package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/google/uuid"
)

// Append assigns seqs, writes the records and returns once they are durable. Concurrent
// appends to one session share a write and an fsync (group commit). A request whose
// idempotency key is already in the transcript returns the existing record.
func (st *FileStore) Append(ctx context.Context, namespace, sessionID string, reqs ...transcript.AppendRequest) ([]transcript.Record, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	for i := range reqs {
		if err := reqs[i].ValidateForAppend(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !st.enter() {
		return nil, transcript.ErrClosed
	}
	defer st.active.Done()
	start := st.opts.clock.Now()
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return nil, err
	}
	out, gen, added, err := s.assign(reqs)
	for errors.Is(err, errEvicted) { // forgotten since: load it again
		if s, err = st.session(namespace, sessionID); err != nil {
			return nil, err
		}
		out, gen, added, err = s.assign(reqs)
	}
	if err != nil {
		return nil, err
	}
	if gen > 0 {
		if err := s.waitDurable(gen); err != nil {
			return nil, err
		}
	}
	st.opts.metrics.AppendsTotal.Add(float64(added))
	st.opts.metrics.AppendLatency.Observe(st.opts.clock.Since(start).Seconds())
	return out, nil
}

// assign gives each new request a seq and puts it into the open batch. It returns the batch
// generation the caller must wait for (0 when every record was already durable) and how many
// records are new.
func (s *session) assign(reqs []transcript.AppendRequest) ([]transcript.Record, int64, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived || s.broken != nil {
		return nil, 0, 0, s.notFound()
	}
	now := s.st.now()
	out := make([]transcript.Record, len(reqs))
	var wait int64
	// Encode first, commit second: a request that fails to encode must leave no trace.
	fresh := make([]pendingRecord, 0, len(reqs))
	batchKeys := map[string]int{}
	next := s.nextSeq
	for i := range reqs {
		key := reqs[i].IdempotencyKey
		if key != "" {
			if seq, ok := s.keys[key]; ok {
				rec, gen, err := s.recordOf(seq)
				if err != nil {
					return nil, 0, 0, err
				}
				out[i], wait = rec, max(wait, gen)
				continue
			}
			if j, ok := batchKeys[key]; ok { // the same key twice in one batch
				out[i] = fresh[j].rec
				continue
			}
		}
		rec := transcript.Record{Seq: next, ID: uuid.NewString(), TS: now, IdempotencyKey: key, Message: reqs[i].Message}
		line, err := transcript.EncodeRecord(&rec)
		if err != nil {
			return nil, 0, 0, errors.Join(transcript.ErrInvalid, err)
		}
		next++
		if key != "" {
			batchKeys[key] = len(fresh)
		}
		fresh = append(fresh, pendingRecord{rec: rec, line: line[:len(line)-1], gen: s.gen})
		out[i] = rec
	}
	for _, p := range fresh {
		s.pending = append(s.pending, p)
		s.pendingBuf = append(s.pendingBuf, p.line...)
		s.pendingBuf = append(s.pendingBuf, '\n')
		s.inflight[p.rec.Seq] = p
		if p.rec.IdempotencyKey != "" {
			s.keys[p.rec.IdempotencyKey] = p.rec.Seq
		}
	}
	s.nextSeq = next
	if len(fresh) > 0 {
		wait = s.gen
	}
	return out, wait, len(fresh), nil
}

// recordOf returns the record with seq and the batch it must be durable with (0 = already).
func (s *session) recordOf(seq int64) (transcript.Record, int64, error) {
	if p, ok := s.inflight[seq]; ok {
		return p.rec, p.gen, nil
	}
	i := s.entryIndex(seq)
	if i < 0 {
		return transcript.Record{}, 0, fmt.Errorf("transcript %s: idempotency index points at missing seq %d", s.path, seq)
	}
	f, release, err := s.st.files.acquire(s.path)
	if err != nil {
		return transcript.Record{}, 0, err
	}
	defer release()
	rec, err := s.readEntry(f, i)
	return rec, 0, err
}

// waitDurable returns once batch gen is on disk. The first waiter to get flushMu writes and
// fsyncs everything pending at that moment; the waiters behind it find their batch done.
func (s *session) waitDurable(gen int64) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()

	s.mu.Lock()
	if s.durableGen >= gen {
		s.mu.Unlock()
		return nil
	}
	if s.broken != nil {
		err := s.broken
		s.mu.Unlock()
		return err
	}
	batch, buf, flushGen, base := s.pending, s.pendingBuf, s.gen, s.size
	s.pending, s.pendingBuf = nil, nil
	s.gen++
	s.mu.Unlock()

	err := s.write(buf)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		// The file may hold part of the batch; drop the state so the next use reloads from
		// disk (repairing the tail) and let callers retry with their idempotency keys.
		s.broken = fmt.Errorf("transcript %s: write failed: %w", s.path, err)
		s.closeSubsLocked()
		s.st.drop(s)
		return s.broken
	}
	events := make([]Event, len(batch))
	off := base
	for i, p := range batch {
		s.entries = transcript.AppendEntry(s.entries, p.rec.Seq, off, p.rec.Message.Role)
		s.stats.Add(&p.rec)
		delete(s.inflight, p.rec.Seq)
		off += int64(len(p.line)) + 1
		events[i] = Event{Seq: p.rec.Seq, Tool: p.rec.Message.Role == transcript.RoleToolResult, Data: p.line}
	}
	s.size = off
	s.durableGen = flushGen
	s.st.opts.metrics.FsyncBatchSize.Observe(float64(len(batch)))
	s.publishLocked(events)
	for _, fn := range s.st.opts.onCommit {
		fn(Commit{Header: s.header, Events: events, Stats: s.stats})
	}
	return nil
}

func (s *session) write(buf []byte) error {
	f, release, err := s.st.files.acquire(s.path)
	if err != nil {
		return err
	}
	defer release()
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return datasync(f)
}
