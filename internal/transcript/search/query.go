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
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Bounds of a search.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxOffset bounds paging: past it a search should be narrowed, not paged.
	MaxOffset = 10000
	// MaxTerms and MaxQueryBytes bound what one query asks of the index.
	MaxTerms      = 16
	MaxQueryBytes = 1024
	// RankWindow is how many of the newest matches BM25 ranks (more when a page reaches
	// past them): a query's cost is bounded by it, not by how common its words are.
	RankWindow = 1000
)

// ErrEmptyQuery is a query with no word to search for.
var ErrEmptyQuery = errors.Join(transcript.ErrInvalid, errors.New("search: the query has no word to search for"))

// Normalize checks a query and bounds its limit and offset.
func Normalize(q transcript.SearchQuery) (transcript.SearchQuery, error) {
	if err := transcript.ValidName(q.Namespace); err != nil {
		return q, err
	}
	if len(q.Text) > MaxQueryBytes {
		return q, errors.Join(transcript.ErrInvalid, fmt.Errorf("search: the query is longer than %d bytes", MaxQueryBytes))
	}
	if len(Terms(q.Text)) == 0 {
		return q, ErrEmptyQuery
	}
	switch {
	case q.Limit <= 0:
		q.Limit = DefaultLimit
	case q.Limit > MaxLimit:
		q.Limit = MaxLimit
	}
	q.Offset = max(0, min(q.Offset, MaxOffset))
	return q, nil
}

// Terms are the words of a query as the index splits text (letters and digits), lower case,
// each once, at most MaxTerms.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == MaxTerms {
			break
		}
	}
	return out
}

// MatchExpr is the FTS5 expression of the terms: every word, each quoted so no word is read
// as an operator.
func MatchExpr(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + t + `"`
	}
	return strings.Join(q, " ")
}

// Search returns a page of the namespace's messages that hold every word of the query, best
// first (BM25 over the newest RankWindow matches), each with a redacted excerpt read from its
// transcript.
func (ix *Index) Search(ctx context.Context, q transcript.SearchQuery) (transcript.SearchResult, error) {
	q, err := Normalize(q)
	if err != nil {
		return transcript.SearchResult{}, err
	}
	res := transcript.SearchResult{Hits: []transcript.SearchHit{}}
	if q.SessionIDs != nil && len(q.SessionIDs) == 0 {
		return res, nil
	}
	terms := Terms(q.Text)
	// The newest matches (highest row ids: later sessions, later messages) come straight
	// from the index in row id order; BM25 ranks the window of them a page needs. Scoring
	// every match of a common word would cost O(matches); the window bounds it.
	inner := `SELECT fts.rowid AS id, s.sid AS sid, s.key AS key, bm25(fts) AS score
		FROM fts CROSS JOIN sessions s ON s.id = (fts.rowid >> 32)
		WHERE fts MATCH ? AND s.ns = ?`
	args := []any{MatchExpr(terms), q.Namespace}
	if q.SessionIDs != nil {
		ids, err := json.Marshal(q.SessionIDs)
		if err != nil {
			return transcript.SearchResult{}, err
		}
		inner += ` AND s.sid IN (SELECT value FROM json_each(?))`
		args = append(args, string(ids))
	}
	sqlText := `SELECT id, sid, key FROM (` + inner + ` ORDER BY fts.rowid DESC LIMIT ?) ORDER BY score, id DESC LIMIT ? OFFSET ?`
	args = append(args, max(RankWindow, q.Offset+q.Limit+1), q.Limit+1, q.Offset)
	rows, err := ix.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return transcript.SearchResult{}, err
	}
	type match struct {
		sid, key string
		seq      int64
	}
	var matches []match
	for rows.Next() {
		var m match
		var id int64
		if err := rows.Scan(&id, &m.sid, &m.key); err != nil {
			_ = rows.Close()
			return transcript.SearchResult{}, err
		}
		_, m.seq = splitRowID(id)
		matches = append(matches, m)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return transcript.SearchResult{}, err
	}
	if len(matches) > q.Limit {
		matches = matches[:q.Limit]
		res.NextOffset = q.Offset + q.Limit
	}
	for _, m := range matches {
		page, err := ix.src.Read(ctx, q.Namespace, m.sid, transcript.ReadOptions{
			AfterSeq: m.seq - 1, BeforeSeq: m.seq + 1, Limit: 1, IncludeTools: true})
		if errors.Is(err, transcript.ErrNotFound) || (err == nil && len(page.Messages) == 0) {
			continue // archived since it was indexed
		}
		if err != nil {
			return transcript.SearchResult{}, err
		}
		rec := &page.Messages[0]
		ex, redacted := Excerpt(Text(&rec.Message), terms)
		res.Hits = append(res.Hits, transcript.SearchHit{SessionKey: m.key, SessionID: m.sid, Seq: rec.Seq, MessageID: rec.ID,
			Role: rec.Message.Role, TS: rec.TS, Excerpt: ex, ContentRedacted: redacted,
			Cursor: transcript.FormatCursor(rec.Seq + 1)})
	}
	return res, nil
}
