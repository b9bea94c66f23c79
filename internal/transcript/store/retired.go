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
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// RetiredDir is the record store's directory under a transcript root: not a valid
// namespace, so the FileStore's scan passes it by.
const RetiredDir = "_retired"

// retiredOp is one line of a namespace's record log: a record kept, or one dropped.
type retiredOp struct {
	Op        string                     `json:"op"`
	Session   *transcript.RetiredSession `json:"session,omitempty"`
	SessionID string                     `json:"sessionId,omitempty"`
}

const (
	opRetire = "retire"
	opDrop   = "drop"
)

// RetiredStore keeps the compact records of retired sessions (transcript.RetiredSession):
// one append-only log per namespace (<dir>/<namespace>.jsonl), each write fsync'd before it
// returns, so a record the manager was told is written survives the store's crash;
// a log is rewritten compacted once most of its lines are dropped records. Every record is
// held in memory, bounded by transcript.MaxRetiredPerNamespace and MaxRetiredTotal: a
// write over a bound is ErrFull, and the manager then keeps the object.
type RetiredStore struct {
	dir              string
	maxPerNS, maxAll int

	mu    sync.Mutex
	byNS  map[string]map[string]transcript.RetiredSession // namespace -> sessionId -> record
	lines map[string]int                                  // lines in each namespace's log
	total int
}

// OpenRetiredStore opens (creating) the record store at dir and reads every log. A torn
// last line (a write the crash cut) is cut off; another line that does not parse is
// skipped.
func OpenRetiredStore(dir string, opts ...RetiredOption) (*RetiredStore, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	r := &RetiredStore{dir: dir, byNS: map[string]map[string]transcript.RetiredSession{}, lines: map[string]int{},
		maxPerNS: transcript.MaxRetiredPerNamespace, maxAll: transcript.MaxRetiredTotal}
	for _, o := range opts {
		o(r)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		ns, ok := strings.CutSuffix(e.Name(), fileSuffix)
		if !ok || e.IsDir() || transcript.ValidName(ns) != nil {
			continue
		}
		if err := r.load(ns); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// RetiredOption configures a RetiredStore.
type RetiredOption func(*RetiredStore)

// WithRetiredBounds lowers the bounds of the records kept, per namespace and in all
// (tests; the defaults are transcript.MaxRetiredPerNamespace and MaxRetiredTotal).
func WithRetiredBounds(perNamespace, total int) RetiredOption {
	return func(r *RetiredStore) { r.maxPerNS, r.maxAll = perNamespace, total }
}

func (r *RetiredStore) path(ns string) string { return filepath.Join(r.dir, ns+fileSuffix) }

// load reads ns's log into memory.
func (r *RetiredStore) load(ns string) error {
	b, err := os.ReadFile(r.path(ns))
	if err != nil {
		return err
	}
	if end := bytes.LastIndexByte(b, '\n') + 1; end < len(b) {
		if err := os.Truncate(r.path(ns), int64(end)); err != nil {
			return err
		}
		b = b[:end]
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	recs := map[string]transcript.RetiredSession{}
	n := 0
	for sc.Scan() {
		n++
		var op retiredOp
		if json.Unmarshal(sc.Bytes(), &op) != nil {
			continue
		}
		switch {
		case op.Op == opRetire && op.Session != nil && op.Session.Validate() == nil:
			recs[op.Session.SessionID] = *op.Session
		case op.Op == opDrop:
			delete(recs, op.SessionID)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("retired records %s: %w", r.path(ns), err)
	}
	r.byNS[ns], r.lines[ns] = recs, n
	r.total += len(recs)
	return nil
}

// Retire keeps one namespace's records durably (transcript.Retirer): one append and one
// fsync for the batch. A record of a sessionId already kept replaces it; at a bound the
// records before it are kept and ErrFull says why the rest are not.
func (r *RetiredStore) Retire(_ context.Context, recs ...transcript.RetiredSession) (int, error) {
	if err := transcript.ValidateRetiredBatch(recs); err != nil {
		return 0, err
	}
	ns := recs[0].Namespace
	r.mu.Lock()
	defer r.mu.Unlock()
	kept, added := r.byNS[ns], map[string]bool{}
	n, full := 0, error(nil)
	for _, rec := range recs {
		if _, replace := kept[rec.SessionID]; !replace && !added[rec.SessionID] {
			if held := len(kept) + len(added); held >= r.maxPerNS {
				full = fmt.Errorf("%w: namespace %s holds %d retired sessions' records", transcript.ErrFull, ns, held)
				break
			}
			if held := r.total + len(added); held >= r.maxAll {
				full = fmt.Errorf("%w: the store holds %d retired sessions' records", transcript.ErrFull, held)
				break
			}
			added[rec.SessionID] = true
		}
		n++
	}
	if n == 0 {
		return 0, full
	}
	ops := make([]retiredOp, n)
	for i := range ops {
		ops[i] = retiredOp{Op: opRetire, Session: &recs[i]}
	}
	if err := r.appendLocked(ns, ops...); err != nil {
		return 0, err
	}
	if kept == nil {
		kept = map[string]transcript.RetiredSession{}
		r.byNS[ns] = kept
	}
	for _, rec := range recs[:n] {
		kept[rec.SessionID] = rec
	}
	r.total += len(added)
	return n, full
}

// Unretire drops the record of sessionID (the session is back); dropping none is no error.
func (r *RetiredStore) Unretire(_ context.Context, namespace, sessionID string) error {
	if err := transcript.ValidName(namespace); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byNS[namespace][sessionID]; !ok {
		return nil
	}
	if err := r.appendLocked(namespace, retiredOp{Op: opDrop, SessionID: sessionID}); err != nil {
		return err
	}
	delete(r.byNS[namespace], sessionID)
	r.total--
	if r.lines[namespace] > 2*len(r.byNS[namespace])+64 {
		return r.rewriteLocked(namespace)
	}
	return nil
}

// RetiredSessions are namespace's records, the latest retired first.
func (r *RetiredStore) RetiredSessions(_ context.Context, namespace string) ([]transcript.RetiredSession, error) {
	r.mu.Lock()
	out := make([]transcript.RetiredSession, 0, len(r.byNS[namespace]))
	for _, rec := range r.byNS[namespace] {
		out = append(out, rec)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b transcript.RetiredSession) int {
		return cmp.Or(b.RetiredAt.Compare(a.RetiredAt), strings.Compare(a.SessionID, b.SessionID))
	})
	return out, nil
}

// Prune drops the records of sessions archived before cutoff, whose archived transcripts
// the store's retention removes at the same time, and returns how many it dropped.
func (r *RetiredStore) Prune(cutoff time.Time) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dropped := 0
	var errs []error
	for ns, recs := range r.byNS {
		n := 0
		for id, rec := range recs {
			if rec.ArchivedAt.Before(cutoff) {
				delete(recs, id)
				n++
			}
		}
		if n == 0 {
			continue
		}
		dropped += n
		r.total -= n
		errs = append(errs, r.rewriteLocked(ns))
	}
	return dropped, errors.Join(errs...)
}

// appendLocked appends ops to ns's log in one write and fsyncs it once (and the directory,
// for a new log).
func (r *RetiredStore) appendLocked(ns string, ops ...retiredOp) error {
	var buf bytes.Buffer
	for _, op := range ops {
		line, err := json.Marshal(op)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	_, statErr := os.Stat(r.path(ns))
	f, err := os.OpenFile(r.path(ns), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = datasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(statErr, os.ErrNotExist) {
		err = syncDir(r.dir)
	}
	if err != nil {
		return fmt.Errorf("retired records %s: %w", r.path(ns), err)
	}
	r.lines[ns] += len(ops)
	return nil
}

// rewriteLocked rewrites ns's log with its live records, durably (a temporary file,
// fsync'd, renamed over it, the directory fsync'd): after a prune, and once most of its
// lines are dropped records.
func (r *RetiredStore) rewriteLocked(ns string) error {
	live := len(r.byNS[ns])
	var buf bytes.Buffer
	for _, rec := range r.byNS[ns] {
		line, err := json.Marshal(retiredOp{Op: opRetire, Session: &rec})
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	tmp, err := os.CreateTemp(r.dir, tmpPrefix)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r.path(ns))
	}
	if err == nil {
		err = syncDir(r.dir)
	}
	if err != nil {
		return fmt.Errorf("compact retired records %s: %w", r.path(ns), err)
	}
	r.lines[ns] = live
	return nil
}
