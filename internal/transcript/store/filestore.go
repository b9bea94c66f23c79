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
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

const (
	fileSuffix    = ".jsonl"
	deletedSuffix = ".deleted."
	tmpPrefix     = ".tmp-"
)

// Option configures a FileStore.
type Option func(*options)

type options struct {
	maxOpenFiles int
	maxLoaded    int
	metrics      *Metrics
	log          logr.Logger
	clock        clock.PassiveClock
	onCommit     []func(Commit)
	onArchive    []func(transcript.SessionHeader)
	onRestore    []func(transcript.SessionHeader)
}

// WithMaxOpenFiles bounds the LRU of open transcript files (default 256).
func WithMaxOpenFiles(n int) Option { return func(o *options) { o.maxOpenFiles = n } }

// WithMetrics records into m instead of unregistered collectors.
func WithMetrics(m *Metrics) Option { return func(o *options) { o.metrics = m } }

// WithLogger sets the logger for repairs and corrupt lines.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.log = l } }

// Commit is one durable group commit of a session: its records in seq order and the
// session's counters after them.
type Commit struct {
	Header transcript.SessionHeader
	Events []Event
	Stats  transcript.Stats
}

// WithCommitHook calls fn with every commit, in seq order per session, under the session's
// lock: fn must not block or call back into the store (the live event stream's hub and the
// search index only queue). Several hooks are called in the order given.
func WithCommitHook(fn func(Commit)) Option {
	return func(o *options) { o.onCommit = append(o.onCommit, fn) }
}

// WithArchiveHook calls fn with the header of each session once it is archived, under the
// session's lock, with the same rules as WithCommitHook.
func WithArchiveHook(fn func(transcript.SessionHeader)) Option {
	return func(o *options) { o.onArchive = append(o.onArchive, fn) }
}

// WithClock sets the clock that stamps records and archive names.
func WithClock(c clock.PassiveClock) Option { return func(o *options) { o.clock = c } }

// Repair reports a transcript whose tail was truncated on open.
type Repair struct {
	Namespace, SessionID, Path string
	TruncatedBytes             int64
}

// FileStore is the on-disk Store: <root>/<namespace>/<sessionId>.jsonl.
type FileStore struct {
	root  string
	opts  options
	files *filePool

	mu       sync.Mutex
	headers  map[string]map[string]liveHeader // namespace -> sessionId -> header (live only)
	keys     map[string]map[string]string     // namespace -> session key -> sessionId
	sessions map[string]*session              // namespace/sessionId -> loaded state
	loaded   *list.List                       // the loaded states, most recently used first
	repairs  []Repair
	closing  bool
	// restoreMu orders restores (restore.go).
	restoreMu sync.Mutex
	active    sync.WaitGroup
}

// OpenFileStore opens (creating if needed) the store at root. It reads only the header line and
// the tail of each transcript: the key index is rebuilt and torn tails are repaired; the full
// per-session index is built lazily on first use.
func OpenFileStore(root string, opts ...Option) (*FileStore, error) {
	o := options{maxOpenFiles: 256, maxLoaded: DefaultMaxLoadedSessions, log: logr.Discard(), clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = NewMetrics(nil)
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, err
	}
	st := &FileStore{
		root: root, opts: o,
		headers: map[string]map[string]liveHeader{}, keys: map[string]map[string]string{},
		sessions: map[string]*session{}, loaded: list.New(),
	}
	st.files = newFilePool(o.maxOpenFiles, func(n int) { o.metrics.OpenFiles.Set(float64(n)) })
	if err := st.scan(); err != nil {
		return nil, err
	}
	return st, nil
}

// Root is the directory the store was opened at.
func (st *FileStore) Root() string { return st.root }

// Repairs lists the tails truncated since the store was opened.
func (st *FileStore) Repairs() []Repair {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]Repair(nil), st.repairs...)
}

func (st *FileStore) scan() error {
	nsDirs, err := os.ReadDir(st.root)
	if err != nil {
		return err
	}
	for _, d := range nsDirs {
		if !d.IsDir() || transcript.ValidName(d.Name()) != nil {
			continue
		}
		ns := d.Name()
		ents, err := os.ReadDir(filepath.Join(st.root, ns))
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			path := filepath.Join(st.root, ns, name)
			if strings.HasPrefix(name, tmpPrefix) {
				_ = os.Remove(path) // a create that never completed
				continue
			}
			id, ok := strings.CutSuffix(name, fileSuffix)
			if !ok || e.IsDir() {
				continue
			}
			h, err := st.openExisting(ns, id, path)
			if err != nil {
				st.opts.log.Error(err, "skipping unreadable transcript", "path", path)
				continue
			}
			st.indexHeaderLocked(h)
		}
	}
	return nil
}

// openExisting reads the header and repairs the tail of one transcript.
func (st *FileStore) openExisting(ns, id, path string) (transcript.SessionHeader, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return transcript.SessionHeader{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		return transcript.SessionHeader{}, fmt.Errorf("header: %w", err)
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return transcript.SessionHeader{}, err
		}
		if line, err = bufio.NewReaderSize(f, 1<<20).ReadSlice('\n'); err != nil {
			return transcript.SessionHeader{}, fmt.Errorf("header: %w", err)
		}
	}
	h, err := transcript.DecodeHeader(line)
	if err != nil {
		return transcript.SessionHeader{}, err
	}
	// The file name is authoritative: the index must agree with the path we open.
	h.Namespace, h.SessionID = ns, id
	if err := st.repairTail(f, h, path, int64(len(line))); err != nil {
		return transcript.SessionHeader{}, err
	}
	return h, nil
}

// repairTail truncates a torn (newline-less) or unparsable last line.
func (st *FileStore) repairTail(f *os.File, h transcript.SessionHeader, path string, headerEnd int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	end := size
	if end > headerEnd {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, end-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			start, err := lineStart(f, end, headerEnd)
			if err != nil {
				return err
			}
			end = start
		}
	}
	if end > headerEnd {
		start, err := lineStart(f, end-1, headerEnd)
		if err != nil {
			return err
		}
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return err
		}
		if _, err := transcript.DecodeRecord(buf); err != nil {
			end = start
		}
	}
	if end == size {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	r := Repair{Namespace: h.Namespace, SessionID: h.SessionID, Path: path, TruncatedBytes: size - end}
	st.opts.log.Info("repaired transcript tail", "path", path, "truncatedBytes", r.TruncatedBytes)
	st.opts.metrics.Repairs.Inc()
	st.mu.Lock()
	st.repairs = append(st.repairs, r)
	st.mu.Unlock()
	return nil
}

// lineStart returns the offset just after the last '\n' before end, or floor if there is none.
// It reads backwards in chunks, so it costs the length of that line, not of the file.
func lineStart(r io.ReaderAt, end, floor int64) (int64, error) {
	const chunk = 32 << 10
	buf := make([]byte, chunk)
	for hi := end; hi > floor; {
		lo := max(hi-chunk, floor)
		b := buf[:hi-lo]
		if _, err := r.ReadAt(b, lo); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' {
				return lo + int64(i) + 1, nil
			}
		}
		hi = lo
	}
	return floor, nil
}

func (st *FileStore) indexHeaderLocked(h transcript.SessionHeader) {
	if st.headers[h.Namespace] == nil {
		st.headers[h.Namespace] = map[string]liveHeader{}
		st.keys[h.Namespace] = map[string]string{}
	}
	l := compactHeader(h)
	st.headers[h.Namespace][h.SessionID] = l
	if h.SessionKey == "" {
		return
	}
	// Two live sessions with one key (a reset before the old one was archived): the newest wins.
	if cur, ok := st.keys[h.Namespace][h.SessionKey]; ok {
		if old, ok := st.headers[h.Namespace][cur]; ok && cur != h.SessionID && old.created > l.created {
			return
		}
	}
	st.keys[h.Namespace][h.SessionKey] = h.SessionID
}

func (st *FileStore) unindexLocked(h transcript.SessionHeader) {
	delete(st.headers[h.Namespace], h.SessionID)
	if st.keys[h.Namespace][h.SessionKey] != h.SessionID {
		return
	}
	delete(st.keys[h.Namespace], h.SessionKey)
	// Fall back to another live session with the same key, newest first.
	best, found := "", false
	var bestAt int64
	for id, o := range st.headers[h.Namespace] {
		if o.key == h.SessionKey && (!found || o.created > bestAt) {
			best, bestAt, found = id, o.created, true
		}
	}
	if found {
		st.keys[h.Namespace][h.SessionKey] = best
	}
}

// Live lists the headers of every live session, in no order.
func (st *FileStore) Live() []transcript.SessionHeader {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []transcript.SessionHeader
	for ns, hs := range st.headers {
		for id, l := range hs {
			out = append(out, l.header(ns, id))
		}
	}
	return out
}

// Resolve maps a session key or a sessionId in namespace to the live session's header.
func (st *FileStore) Resolve(namespace, keyOrID string) (transcript.SessionHeader, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if id, ok := st.keys[namespace][keyOrID]; ok {
		return st.headers[namespace][id].header(namespace, id), nil
	}
	if l, ok := st.headers[namespace][keyOrID]; ok {
		return l.header(namespace, keyOrID), nil
	}
	return transcript.SessionHeader{}, fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, namespace, keyOrID)
}

func (st *FileStore) pathOf(ns, id string) string {
	return filepath.Join(st.root, ns, id+fileSuffix)
}

// CreateSession writes the header durably (temp file, fsync, rename, fsync dir). An existing
// live session returns its stats.
func (st *FileStore) CreateSession(ctx context.Context, h transcript.SessionHeader) (transcript.Stats, error) {
	if err := transcript.ValidName(h.Namespace); err != nil {
		return transcript.Stats{}, err
	}
	if err := transcript.ValidName(h.SessionID); err != nil {
		return transcript.Stats{}, err
	}
	if !st.enter() {
		return transcript.Stats{}, transcript.ErrClosed
	}
	defer st.active.Done()
	st.mu.Lock()
	_, exists := st.headers[h.Namespace][h.SessionID]
	st.mu.Unlock()
	if exists {
		return st.Stats(ctx, h.Namespace, h.SessionID)
	}
	if h.CreatedAt.IsZero() {
		h.CreatedAt = st.opts.clock.Now()
	}
	h.CreatedAt = h.CreatedAt.UTC()
	line, err := transcript.EncodeHeader(h)
	if err != nil {
		return transcript.Stats{}, err
	}
	dir := filepath.Join(st.root, h.Namespace)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return transcript.Stats{}, err
	}
	path := st.pathOf(h.Namespace, h.SessionID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.headers[h.Namespace][h.SessionID]; !ok {
		if err := writeFileDurable(dir, path, line); err != nil {
			return transcript.Stats{}, err
		}
		st.indexHeaderLocked(h)
	}
	return transcript.Stats{UpdatedAt: h.CreatedAt, Path: path}, nil
}

// writeFileDurable creates path with data so that it either exists complete or not at all.
func writeFileDurable(dir, path string, data []byte) error {
	tmp, err := os.CreateTemp(dir, tmpPrefix)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // a concurrent create of the same id won
		}
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// session returns the loaded state of a live session.
func (st *FileStore) session(ns, id string) (*session, error) {
	st.mu.Lock()
	k := ns + "/" + id
	s, ok := st.sessions[k]
	if !ok {
		l, live := st.headers[ns][id]
		if !live {
			st.mu.Unlock()
			return nil, fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, ns, id)
		}
		s = newSession(st, l.header(ns, id), st.pathOf(ns, id))
		st.sessions[k] = s
	}
	st.touchLocked(s)
	st.mu.Unlock()
	if err := s.ensureLoaded(); err != nil {
		return nil, err
	}
	return s, nil
}

// drop forgets the in-memory state of s so the next use reloads it from disk.
func (st *FileStore) drop(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.forgetLocked(s)
}

// Stats returns the counters of a live session.
func (st *FileStore) Stats(ctx context.Context, namespace, sessionID string) (transcript.Stats, error) {
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return transcript.Stats{}, err
	}
	s.mu.Lock()
	if s.broken == errEvicted { // forgotten since: load it again
		s.mu.Unlock()
		return st.Stats(ctx, namespace, sessionID)
	}
	defer s.mu.Unlock()
	if s.archived {
		return transcript.Stats{}, fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, namespace, sessionID)
	}
	stats := s.stats
	stats.Path = s.path
	return stats, nil
}

// Corrupt returns how many unparsable lines were skipped while indexing the session.
func (st *FileStore) Corrupt(namespace, sessionID string) (int64, error) {
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if s.broken == errEvicted { // forgotten since: load it again
		s.mu.Unlock()
		return st.Corrupt(namespace, sessionID)
	}
	defer s.mu.Unlock()
	return s.corrupt, nil
}

// Archive renames the transcript to <sessionId>.jsonl.deleted.<unix>. Archiving an archived
// session is a no-op; a session that never existed is ErrNotFound.
func (st *FileStore) Archive(ctx context.Context, namespace, sessionID string) error {
	if err := transcript.ValidName(namespace); err != nil {
		return err
	}
	if err := transcript.ValidName(sessionID); err != nil {
		return err
	}
	s, err := st.session(namespace, sessionID)
	if errors.Is(err, transcript.ErrNotFound) {
		old, _ := filepath.Glob(filepath.Join(st.root, namespace, sessionID+fileSuffix+deletedSuffix+"*"))
		if len(old) > 0 {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	if err := st.archive(s, namespace, sessionID); !errors.Is(err, errEvicted) {
		return err
	}
	return st.Archive(ctx, namespace, sessionID) // its state was forgotten meanwhile: load it again
}

// archive renames the transcript of the loaded session s (errEvicted when s was evicted).
func (st *FileStore) archive(s *session, namespace, sessionID string) error {
	// Holding flushMu means no batch is being written; pending appends then fail as not found.
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == errEvicted {
		return errEvicted
	}
	if s.archived {
		return nil
	}
	dst := s.path + deletedSuffix + strconv.FormatInt(st.opts.clock.Now().Unix(), 10)
	if err := os.Rename(s.path, dst); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return err
	}
	s.archived = true
	s.broken = fmt.Errorf("%w: %s/%s archived", transcript.ErrNotFound, namespace, sessionID)
	s.closeSubsLocked()
	for _, fn := range st.opts.onArchive {
		fn(s.header)
	}
	st.files.forget(s.path)
	st.mu.Lock()
	st.unindexLocked(s.header)
	st.forgetLocked(s)
	st.mu.Unlock()
	return nil
}

func (st *FileStore) enter() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closing {
		return false
	}
	st.active.Add(1)
	return true
}

// Close refuses new writes, waits for in-flight appends to become durable, ends every
// follower stream and closes the files.
func (st *FileStore) Close() error {
	st.mu.Lock()
	st.closing = true
	st.mu.Unlock()
	st.active.Wait()
	st.mu.Lock()
	sessions := make([]*session, 0, len(st.sessions))
	for _, s := range st.sessions {
		sessions = append(sessions, s)
	}
	st.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		s.closeSubsLocked()
		s.mu.Unlock()
	}
	st.files.closeAll()
	return nil
}

func (st *FileStore) now() time.Time { return st.opts.clock.Now().UTC() }
