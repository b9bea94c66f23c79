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

package search

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/feed"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// maxBatch bounds the queued jobs (commits) the indexer writes in one transaction.
const maxBatch = 2048

// MaxQueueBytes bounds the records queued for the indexer, with the queue's length: a
// commit past it is read back from its file instead.
const MaxQueueBytes = 32 << 20

// StoreOptions are the store hooks that feed the index: each only queues, so an append
// waits for no index write; what does not fit the queue is read back from the file later.
func (ix *Index) StoreOptions() []store.Option { return ix.feed.StoreOptions() }

// run is the one writer: the catch-up after open, then queued commits in batches and the
// sessions left dirty.
func (ix *Index) run() {
	defer close(ix.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ix.stop
		cancel()
	}()
	if err := ix.catchUpAll(ctx); err != nil && ctx.Err() == nil {
		ix.log.Error(err, "search index catch-up failed; searches may miss older messages")
	}
	ix.mu.Lock()
	ix.ready = true
	ix.mu.Unlock()
	batch := make([]feed.Job, 0, maxBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-ix.feed.Jobs():
			timer := time.NewTimer(ix.linger)
			// Fewer, larger transactions mean fewer FTS5 segments to merge later, which is
			// most of what indexing costs.
			batch = ix.feed.Collect(ctx, j, batch, timer.C)
			timer.Stop()
			if err := ix.apply(ctx, batch); err != nil && ctx.Err() == nil {
				ix.log.Error(err, "search index write failed; catching the sessions up from their files")
				for _, j := range batch {
					ix.feed.MarkDirty(j.Ref())
				}
			}
			ix.feed.Done(batch, func() { ix.catchUpDirty(ctx) })
		case <-ix.feed.Wake():
			ix.catchUpDirty(ctx)
		}
	}
}

// Sync returns once everything committed before it is in the index (and the catch-up after
// open is done): for tests and benchmarks, which then search what they wrote.
func (ix *Index) Sync(ctx context.Context) error { return ix.feed.Sync(ctx) }

// apply writes a batch of jobs in one transaction. A commit that does not follow what the
// index holds of its session (a commit that missed the queue came before it) leaves the
// session dirty instead.
func (ix *Index) apply(ctx context.Context, batch []feed.Job) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	w := writer{tx: tx, rows: map[sessionRef]*sessionRow{}}
	for _, j := range batch {
		ref := j.Ref()
		if j.Barrier != nil {
			continue
		}
		if j.Archived {
			if err := w.drop(ctx, ref); err != nil {
				return err
			}
			continue
		}
		if j.Restored {
			ix.feed.MarkDirty(ref) // caught up from its file once this batch is written
			continue
		}
		row, err := w.row(ctx, j.Header)
		if err != nil {
			return err
		}
		for _, e := range j.Events {
			if e.Seq <= row.upto {
				continue
			}
			if e.Seq != row.upto+1 {
				ix.feed.MarkDirty(ref)
				break
			}
			rec, err := transcript.DecodeRecord(e.Data)
			if err != nil {
				ix.feed.MarkDirty(ref)
				break
			}
			if err := w.add(ctx, row, &rec); err != nil {
				return err
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	return tx.Commit()
}

// writer writes within one transaction and keeps the sessions' rows it touched.
type writer struct {
	tx   *sql.Tx
	rows map[sessionRef]*sessionRow
}

type sessionRow struct {
	id, upto int64
	changed  bool
}

// row finds or creates the session's row.
func (w *writer) row(ctx context.Context, h transcript.SessionHeader) (*sessionRow, error) {
	ref := sessionRef{NS: h.Namespace, SID: h.SessionID}
	if r, ok := w.rows[ref]; ok {
		return r, nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO sessions(ns, sid, key) VALUES(?, ?, ?) ON CONFLICT DO NOTHING`,
		h.Namespace, h.SessionID, h.SessionKey); err != nil {
		return nil, err
	}
	r := &sessionRow{}
	if err := w.tx.QueryRowContext(ctx, `SELECT id, upto FROM sessions WHERE ns = ? AND sid = ?`,
		h.Namespace, h.SessionID).Scan(&r.id, &r.upto); err != nil {
		return nil, err
	}
	w.rows[ref] = r
	return r, nil
}

// add indexes one record (if it has text) and moves the session's mark past it.
func (w *writer) add(ctx context.Context, r *sessionRow, rec *transcript.Record) error {
	if body := Text(&rec.Message); body != "" && rec.Seq <= maxSeq {
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO fts(rowid, body) VALUES(?, ?)`, rowID(r.id, rec.Seq), body); err != nil {
			return err
		}
	}
	r.upto, r.changed = rec.Seq, true
	return nil
}

// drop removes a session and its postings.
func (w *writer) drop(ctx context.Context, ref sessionRef) error {
	var id int64
	err := w.tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE ns = ? AND sid = ?`, ref.NS, ref.SID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	delete(w.rows, ref)
	if _, err := w.tx.ExecContext(ctx, `DELETE FROM fts WHERE rowid BETWEEN ? AND ?`, rowID(id, 0), rowID(id, maxSeq)); err != nil {
		return err
	}
	_, err = w.tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}

// flush writes the sessions' new marks.
func (w *writer) flush(ctx context.Context) error {
	for _, r := range w.rows {
		if !r.changed {
			continue
		}
		if _, err := w.tx.ExecContext(ctx, `UPDATE sessions SET upto = ? WHERE id = ?`, r.upto, r.id); err != nil {
			return err
		}
		r.changed = false
	}
	return nil
}

// A row id holds the session's id and the record's seq; seqs past maxSeq are not indexed.
const maxSeq = 1<<32 - 1

func rowID(session, seq int64) int64 { return session<<32 | (seq & maxSeq) }

func splitRowID(id int64) (session, seq int64) { return id >> 32, id & maxSeq }
