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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	// maxRetiredLine bounds a log's line: a record's fields are bounded (512 bytes each), so
	// a longer line is no record the store wrote, and the log does not open.
	maxRetiredLine = 1 << 20
	// maxRetiredLog bounds a namespace's log: an index entry's offset is 32 bits.
	maxRetiredLog = math.MaxUint32
)

// RetiredStore keeps the compact records of retired sessions (transcript.RetiredSession):
// one append-only log per namespace (<dir>/<namespace>.jsonl), each line fsync'd before a
// write returns, so a record the manager was told is written survives the store's crash;
// a log is rewritten compacted once most of its lines are dead (dropped or replaced
// records). The records stay on disk and are read on demand; memory holds an index of
// each live record (retiredEntry: where its line is, and the times that order and prune
// it), about 130 bytes a record. The count is bounded by transcript.MaxRetiredPerNamespace
// and MaxRetiredTotal: a write over a bound is ErrFull, and the manager then keeps the
// object.
//
// Readers hold the read lock while they read lines at the index's offsets; a write, a
// prune and a compaction (which moves every line) hold the write lock, so an offset a
// reader holds always points into the file it was taken from.
type RetiredStore struct {
	dir              string
	maxPerNS, maxAll int

	mu    sync.RWMutex
	logs  map[string]*retiredLog // by namespace
	total int
}

// retiredLog is a namespace's log as memory knows it.
type retiredLog struct {
	index map[string]retiredEntry // sessionId -> its live record's line
	lines int                     // lines in the log, live or dead
	size  int64                   // bytes of whole lines: where the next line goes
}

// retiredEntry is a live record's line in its namespace's log and the times the store
// orders (listed, retired) and prunes (archived) it by, in Unix milliseconds.
type retiredEntry struct {
	off, n                    uint32
	listed, retired, archived int64
}

func entryOf(rec *transcript.RetiredSession, off int64, n int) retiredEntry {
	return retiredEntry{off: uint32(off), n: uint32(n), listed: rec.ListedAt(), retired: rec.RetiredAt.UnixMilli(),
		archived: rec.ArchivedAt.UnixMilli()}
}

// OpenRetiredStore opens (creating) the record store at dir and indexes every log. A torn
// last line (a write the crash cut) is cut off; another line that does not parse is
// skipped; a compaction's temporary file a crash left is removed.
func OpenRetiredStore(dir string, opts ...RetiredOption) (*RetiredStore, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	r := &RetiredStore{dir: dir, logs: map[string]*retiredLog{},
		maxPerNS: transcript.MaxRetiredPerNamespace, maxAll: transcript.MaxRetiredTotal}
	for _, o := range opts {
		o(r)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) && !e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
			continue
		}
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

// load indexes ns's log, cutting a torn last line.
func (r *RetiredStore) load(ns string) error {
	f, err := os.OpenFile(r.path(ns), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	l := &retiredLog{index: map[string]retiredEntry{}}
	err = scanLines(f, 0, func(off int64, line []byte) error {
		l.lines++
		l.size = off + int64(len(line)) + 1
		var op retiredOp
		if json.Unmarshal(line, &op) != nil {
			return nil
		}
		switch {
		case op.Op == opRetire && op.Session != nil && op.Session.Validate() == nil:
			l.index[op.Session.SessionID] = entryOf(op.Session, off, len(line))
		case op.Op == opDrop:
			delete(l.index, op.SessionID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("retired records %s: %w", r.path(ns), err)
	}
	if st, err := f.Stat(); err != nil {
		return err
	} else if st.Size() > l.size {
		if err := f.Truncate(l.size); err != nil {
			return err
		}
	}
	if l.size > maxRetiredLog {
		return fmt.Errorf("retired records %s: the log is over %d bytes", r.path(ns), int64(maxRetiredLog))
	}
	r.logs[ns] = l
	r.total += len(l.index)
	return nil
}

// scanLines calls fn with each whole line of f from off (without its newline) and where it
// starts; a last line without its newline is not passed.
func scanLines(f *os.File, off int64, fn func(off int64, line []byte) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(f, off, math.MaxInt64-off), 256<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = append(long, chunk...); len(long) > maxRetiredLine {
				return fmt.Errorf("a line over %d bytes at offset %d", maxRetiredLine, off)
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line := chunk
		if long != nil {
			line, long = append(long, chunk...), nil
		}
		if err := fn(off, line[:len(line)-1]); err != nil {
			return err
		}
		off += int64(len(line))
	}
}

// Retire keeps rec durably (fsync'd on return); a record of the same sessionId is replaced.
func (r *RetiredStore) Retire(_ context.Context, rec transcript.RetiredSession) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.logs[rec.Namespace]
	replace := l.holds(rec.SessionID)
	if !replace {
		if n := l.live(); n >= r.maxPerNS {
			return fmt.Errorf("%w: namespace %s holds %d retired sessions' records", transcript.ErrFull, rec.Namespace, n)
		}
		if r.total >= r.maxAll {
			return fmt.Errorf("%w: the store holds %d retired sessions' records", transcript.ErrFull, r.total)
		}
	}
	if l == nil {
		l = &retiredLog{index: map[string]retiredEntry{}}
		r.logs[rec.Namespace] = l
	}
	off, n, err := r.appendLocked(rec.Namespace, l, retiredOp{Op: opRetire, Session: &rec})
	if err != nil {
		return err
	}
	if !replace {
		r.total++
	}
	l.index[rec.SessionID] = entryOf(&rec, off, n)
	// The record is durable: a compaction that fails now is tried again on the next write.
	_ = r.compactLocked(rec.Namespace, l)
	return nil
}

// Unretire drops the record of sessionID (the session is back); dropping none is no error.
func (r *RetiredStore) Unretire(_ context.Context, namespace, sessionID string) error {
	if err := transcript.ValidName(namespace); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.logs[namespace]
	if !l.holds(sessionID) {
		return nil
	}
	if _, _, err := r.appendLocked(namespace, l, retiredOp{Op: opDrop, SessionID: sessionID}); err != nil {
		return err
	}
	delete(l.index, sessionID)
	r.total--
	return r.compactLocked(namespace, l)
}

// holds says whether sessionID has a live record in the log.
func (l *retiredLog) holds(sessionID string) bool {
	if l == nil {
		return false
	}
	_, ok := l.index[sessionID]
	return ok
}

// live is how many live records the log holds.
func (l *retiredLog) live() int {
	if l == nil {
		return 0
	}
	return len(l.index)
}

// Prune drops the records of sessions archived before cutoff, whose archived transcripts
// the store's retention removes at the same time, and returns how many it dropped.
func (r *RetiredStore) Prune(cutoff time.Time) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := cutoff.UnixMilli()
	dropped := 0
	var errs []error
	for ns, l := range r.logs {
		n := 0
		for id, e := range l.index {
			if e.archived < before {
				delete(l.index, id)
				n++
			}
		}
		if n == 0 {
			continue
		}
		dropped += n
		r.total -= n
		errs = append(errs, r.rewriteLocked(ns, l))
	}
	return dropped, errors.Join(errs...)
}

// appendLocked appends one op to ns's log and fsyncs it (and the directory, for a new log),
// and returns where its line starts and its length (without the newline). A write that
// fails is cut back off, so the next one starts a whole line.
func (r *RetiredStore) appendLocked(ns string, l *retiredLog, op retiredOp) (int64, int, error) {
	line, err := json.Marshal(op)
	if err != nil {
		return 0, 0, err
	}
	off := l.size
	if off+int64(len(line))+1 > maxRetiredLog {
		return 0, 0, fmt.Errorf("%w: retired records %s: the log is at %d bytes", transcript.ErrFull, r.path(ns), off)
	}
	f, err := os.OpenFile(r.path(ns), os.O_WRONLY|os.O_CREATE, 0o640)
	if err != nil {
		return 0, 0, err
	}
	_, err = f.WriteAt(append(line, '\n'), off)
	if err == nil {
		err = datasync(f)
	}
	if err != nil {
		_ = f.Truncate(off)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && l.lines == 0 {
		err = syncDir(r.dir)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("retired records %s: %w", r.path(ns), err)
	}
	l.lines++
	l.size = off + int64(len(line)) + 1
	return off, len(line), nil
}

// compactLocked rewrites ns's log once most of its lines are dead.
func (r *RetiredStore) compactLocked(ns string, l *retiredLog) error {
	if l.lines > 2*len(l.index)+64 {
		return r.rewriteLocked(ns, l)
	}
	return nil
}

// rewriteLocked rewrites ns's log with its live lines, durably (a temporary file, fsync'd,
// renamed over it, the directory fsync'd), and moves the index to their new offsets:
// after a prune, and once most of its lines are dead. Under the write lock no reader holds
// an old offset. Lines are copied as they are, in the order they were written.
func (r *RetiredStore) rewriteLocked(ns string, l *retiredLog) error {
	live := l.byOffset()
	src, err := os.Open(r.path(ns))
	if err != nil {
		return fmt.Errorf("compact retired records %s: %w", r.path(ns), err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(r.dir, tmpPrefix)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	index := make(map[string]retiredEntry, len(live))
	w := bufio.NewWriterSize(tmp, 256<<10)
	var size int64
	i := 0
	err = scanLines(src, 0, func(off int64, line []byte) error {
		if i == len(live) || int64(live[i].off) != off {
			return nil
		}
		e := live[i].retiredEntry
		e.off = uint32(size)
		index[live[i].id] = e
		i++
		size += int64(len(line)) + 1
		if _, err := w.Write(line); err != nil {
			return err
		}
		return w.WriteByte('\n')
	})
	if err == nil && i != len(live) {
		err = fmt.Errorf("%d live records are not where the index has them", len(live)-i)
	}
	if err == nil {
		err = w.Flush()
	}
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
	l.index, l.lines, l.size = index, len(index), size
	return nil
}

// indexed is a live record's entry with its sessionId.
type indexed struct {
	id string
	retiredEntry
}

// byOffset are the live records in the order of their lines.
func (l *retiredLog) byOffset() []indexed {
	out := make([]indexed, 0, len(l.index))
	for id, e := range l.index {
		out = append(out, indexed{id, e})
	}
	slices.SortFunc(out, func(a, b indexed) int { return cmp.Compare(a.off, b.off) })
	return out
}
