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

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/feed"
)

// catchUpPage is how many records the catch-up reads and writes at a time.
const catchUpPage = 500

// catchUpAll brings the index level with the source: each live session's records after the
// index's mark, and no session the source no longer has. A missing or dropped index is
// rebuilt this way; a current one costs a look at each session's last seq.
func (ix *Index) catchUpAll(ctx context.Context) error {
	live := ix.src.Live()
	keep := make(map[sessionRef]struct{}, len(live))
	for _, h := range live {
		keep[sessionRef{NS: h.Namespace, SID: h.SessionID}] = struct{}{}
		if err := ix.catchUp(ctx, h); err != nil {
			if ctx.Err() != nil {
				return err
			}
			ix.log.Error(err, "search index catch-up of a session failed", "namespace", h.Namespace, "sessionId", h.SessionID)
		}
	}
	gone, err := ix.indexedNotIn(ctx, keep)
	if err != nil {
		return err
	}
	for _, r := range gone {
		if err := ix.apply(ctx, []feed.Job{{Header: transcript.SessionHeader{Namespace: r.NS, SessionID: r.SID}, Archived: true}}); err != nil {
			return err
		}
	}
	return nil
}

// indexedNotIn lists the indexed sessions not in keep.
func (ix *Index) indexedNotIn(ctx context.Context, keep map[sessionRef]struct{}) ([]sessionRef, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT ns, sid FROM sessions`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var gone []sessionRef
	for rows.Next() {
		var r sessionRef
		if err := rows.Scan(&r.NS, &r.SID); err != nil {
			return nil, err
		}
		if _, ok := keep[r]; !ok {
			gone = append(gone, r)
		}
	}
	return gone, rows.Err()
}

// catchUpDirty catches up the sessions whose commits missed the queue: a live one from its
// file, one that is gone by dropping it.
func (ix *Index) catchUpDirty(ctx context.Context) {
	refs := ix.feed.TakeDirty()
	if len(refs) == 0 {
		return
	}
	live := map[sessionRef]transcript.SessionHeader{}
	for _, h := range ix.src.Live() {
		live[sessionRef{NS: h.Namespace, SID: h.SessionID}] = h
	}
	for _, r := range refs {
		h, ok := live[r]
		var err error
		if ok {
			err = ix.catchUp(ctx, h)
		} else {
			err = ix.apply(ctx, []feed.Job{{Header: transcript.SessionHeader{Namespace: r.NS, SessionID: r.SID}, Archived: true}})
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, transcript.ErrNotFound) {
			ix.log.Error(err, "search index catch-up of a session failed", "namespace", r.NS, "sessionId", r.SID)
		}
	}
}

// catchUp indexes the records of one session after the index's mark, a page per transaction.
func (ix *Index) catchUp(ctx context.Context, h transcript.SessionHeader) error {
	last, err := ix.src.Read(ctx, h.Namespace, h.SessionID, transcript.ReadOptions{Limit: 1, IncludeTools: true})
	if err != nil || len(last.Messages) == 0 {
		return err
	}
	lastSeq := last.Messages[0].Seq
	var upto int64
	err = ix.db.QueryRowContext(ctx, `SELECT upto FROM sessions WHERE ns = ? AND sid = ?`, h.Namespace, h.SessionID).Scan(&upto)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for upto < lastSeq {
		page, err := ix.src.Read(ctx, h.Namespace, h.SessionID, transcript.ReadOptions{
			AfterSeq: upto, BeforeSeq: upto + catchUpPage + 1, Limit: catchUpPage, IncludeTools: true})
		if err != nil {
			return err
		}
		next := min(upto+catchUpPage, lastSeq)
		if err := ix.write(ctx, h, page.Messages, next); err != nil {
			return err
		}
		upto = next
	}
	return nil
}

// write indexes records read from a file and sets the session's mark to upto.
func (ix *Index) write(ctx context.Context, h transcript.SessionHeader, recs []transcript.Record, upto int64) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	w := writer{tx: tx, rows: map[sessionRef]*sessionRow{}}
	row, err := w.row(ctx, h)
	if err != nil {
		return err
	}
	for i := range recs {
		if recs[i].Seq <= row.upto {
			continue
		}
		if err := w.add(ctx, row, &recs[i]); err != nil {
			return err
		}
	}
	row.upto, row.changed = max(row.upto, upto), true
	if err := w.flush(ctx); err != nil {
		return err
	}
	return tx.Commit()
}
