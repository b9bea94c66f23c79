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
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// RetiredSessions are namespace's records that q keeps, read from its log: every one (the
// zero query) or those q's Ref or Search names, the latest retired first; with a Limit, a
// page in sessions_list's order from after q.After. A page with neither Ref nor Search
// reads only its own lines, at the offsets the index orders; the others read the log once
// from its start, decoding only the lines a byte test cannot rule out.
func (r *RetiredStore) RetiredSessions(_ context.Context, namespace string, q transcript.RetiredQuery) ([]transcript.RetiredSession, error) {
	var after *cursor
	if q.After != "" {
		listed, id, err := transcript.ParseRetiredCursor(q.After)
		if err != nil {
			return nil, err
		}
		after = &cursor{listed, id}
	}
	q.Limit = max(0, min(q.Limit, transcript.MaxRetiredPage))
	r.mu.RLock()
	defer r.mu.RUnlock()
	l := r.logs[namespace]
	if l.live() == 0 {
		return nil, nil
	}
	f, err := os.Open(r.path(namespace))
	if err != nil {
		return nil, fmt.Errorf("retired records %s: %w", r.path(namespace), err)
	}
	defer f.Close()
	if q.Limit > 0 && q.Ref == "" && q.Search == "" {
		return l.page(f, after, q.Limit)
	}
	return l.scan(f, &q, after)
}

// cursor is where a page starts: after this record in sessions_list's order.
type cursor struct {
	listed int64
	id     string
}

// listOrder is sessions_list's order: the most recently updated first, then by sessionId.
func listOrder(a, b cursor) int {
	if a.listed != b.listed {
		return cmp.Compare(b.listed, a.listed)
	}
	return strings.Compare(a.id, b.id)
}

// page reads the limit records after after in sessions_list's order, each at its offset.
func (l *retiredLog) page(f *os.File, after *cursor, limit int) ([]transcript.RetiredSession, error) {
	keys := make([]cursor, 0, min(len(l.index), 4*limit))
	for id, e := range l.index {
		if c := (cursor{e.listed, id}); after == nil || listOrder(*after, c) < 0 {
			keys = append(keys, c)
		}
	}
	slices.SortFunc(keys, listOrder)
	keys = keys[:min(len(keys), limit)]
	out := make([]transcript.RetiredSession, 0, len(keys))
	var buf []byte
	for _, k := range keys {
		e := l.index[k.id]
		buf = slices.Grow(buf[:0], int(e.n))[:e.n]
		if _, err := f.ReadAt(buf, int64(e.off)); err != nil {
			return nil, fmt.Errorf("retired records %s: record %s: %w", f.Name(), k.id, err)
		}
		var op retiredOp
		if err := json.Unmarshal(buf, &op); err != nil || op.Session == nil || op.Session.SessionID != k.id {
			return nil, fmt.Errorf("retired records %s: record %s is not at offset %d", f.Name(), k.id, e.off)
		}
		out = append(out, *op.Session)
	}
	return out, nil
}

// scan reads the log once for the live records q keeps. A line a byte test rules out (it
// holds neither q's Ref nor its Search) is not decoded.
func (l *retiredLog) scan(f *os.File, q *transcript.RetiredQuery, after *cursor) ([]transcript.RetiredSession, error) {
	may := prefilter(q)
	var out []transcript.RetiredSession
	err := scanLines(f, 0, func(off int64, line []byte) error {
		if off >= l.size {
			return errStop
		}
		if !may(line) {
			return nil
		}
		var op retiredOp
		if json.Unmarshal(line, &op) != nil || op.Op != opRetire || op.Session == nil {
			return nil
		}
		e, ok := l.index[op.Session.SessionID]
		if !ok || int64(e.off) != off || !q.Matches(op.Session) {
			return nil
		}
		if after != nil && listOrder(*after, cursor{e.listed, op.Session.SessionID}) >= 0 {
			return nil
		}
		out = append(out, *op.Session)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("retired records %s: %w", f.Name(), err)
	}
	if q.Limit == 0 {
		slices.SortFunc(out, func(a, b transcript.RetiredSession) int {
			return cmp.Or(b.RetiredAt.Compare(a.RetiredAt), strings.Compare(a.SessionID, b.SessionID))
		})
		return out, nil
	}
	slices.SortFunc(out, func(a, b transcript.RetiredSession) int {
		return listOrder(cursor{a.ListedAt(), a.SessionID}, cursor{b.ListedAt(), b.SessionID})
	})
	return out[:min(len(out), q.Limit)], nil
}

// errStop ends a scan at the index's end of the log.
var errStop = errors.New("stop")

// prefilter is a byte test on a log's line that q cannot keep when it says no: the line
// must hold q.Ref as JSON writes it, and q.Search ignoring case. The search test applies
// only where it is sound: a search of printable ASCII that JSON writes as it is (a field
// holding it holds it in the line byte for byte, but for case); and a line holding a letter
// whose lower case is an ASCII one of the search's (foldsToASCII) passes.
func prefilter(q *transcript.RetiredQuery) func(line []byte) bool {
	var ref []byte
	if q.Ref != "" {
		ref, _ = json.Marshal(q.Ref)
	}
	search := []byte(strings.ToLower(q.Search))
	for _, c := range search {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			search = nil
			break
		}
	}
	var folds [][]byte
	for _, f := range foldsToASCII {
		if bytes.IndexByte(search, f.to) >= 0 {
			folds = append(folds, []byte(f.from))
		}
	}
	return func(line []byte) bool {
		if ref != nil && !bytes.Contains(line, ref) {
			return false
		}
		if len(search) == 0 || containsFoldASCII(line, search) {
			return true
		}
		for _, f := range folds {
			if bytes.Contains(line, f) {
				return true
			}
		}
		return false
	}
}

// foldsToASCII are the letters outside ASCII whose lower case (strings.ToLower) is an ASCII
// one: the dotted capital I and the Kelvin sign.
var foldsToASCII = []struct {
	from string
	to   byte
}{{"\u0130", 'i'}, {"\u212a", 'k'}}

// containsFoldASCII says whether s holds q (lower-case ASCII) ignoring ASCII case. It looks
// for q's first byte in either case with IndexByte, then compares the rest.
func containsFoldASCII(s, q []byte) bool {
	lo, up := q[0], q[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	last := len(s) - len(q)
	nextLo, nextUp := -1, -1
	for i := 0; i <= last; {
		if nextLo < i {
			if nextLo = bytes.IndexByte(s[i:last+1], lo); nextLo >= 0 {
				nextLo += i
			} else {
				nextLo = len(s)
			}
		}
		if nextUp < i {
			if nextUp = bytes.IndexByte(s[i:last+1], up); nextUp >= 0 {
				nextUp += i
			} else {
				nextUp = len(s)
			}
		}
		i = min(nextLo, nextUp)
		if i > last {
			return false
		}
		if asciiEqualFold(s[i+1:i+len(q)], q[1:]) {
			return true
		}
		i++
	}
	return false
}

// asciiEqualFold compares a with lower-case ASCII b, ignoring ASCII case.
func asciiEqualFold(a, b []byte) bool {
	for i, c := range a {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}
