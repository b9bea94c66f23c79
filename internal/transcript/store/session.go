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
	"container/list"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// session is the in-memory state of one live transcript, loaded on first use.
type session struct {
	st     *FileStore
	header transcript.SessionHeader
	path   string

	// flushMu is held by the one appender that writes and fsyncs a batch (the group-commit
	// leader); the others queue behind it and usually find their records already durable.
	flushMu sync.Mutex

	mu       sync.Mutex
	loadOnce sync.Once
	loadErr  error
	archived bool
	broken   error         // set when a write failed, the session was archived or evicted; the state is stale
	ready    bool          // loaded
	elem     *list.Element // in st.loaded; guarded by st.mu

	size    int64 // durable end of file
	entries []transcript.IndexEntry
	keys    map[string]int64 // idempotency key -> seq
	nextSeq int64
	stats   transcript.Stats
	corrupt int64

	// The open batch: records with a seq but not yet written. gen numbers batches; a record of
	// batch g is durable once durableGen >= g.
	pending    []pendingRecord
	pendingBuf []byte
	inflight   map[int64]pendingRecord // seq -> record of pending or in-flight batches
	gen        int64
	durableGen int64

	subs map[*Subscription]struct{}
}

type pendingRecord struct {
	rec  transcript.Record
	line []byte // encoded, without newline
	gen  int64
}

func newSession(st *FileStore, h transcript.SessionHeader, path string) *session {
	return &session{
		st: st, header: h, path: path, keys: map[string]int64{}, nextSeq: 1,
		inflight: map[int64]pendingRecord{}, gen: 1, subs: map[*Subscription]struct{}{},
	}
}

func (s *session) ensureLoaded() error {
	s.loadOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.loadErr = s.load()
		s.ready = s.loadErr == nil
		if s.loadErr != nil {
			s.st.drop(s) // let the next use try again
		}
	})
	return s.loadErr
}

// load builds the offset index, the idempotency keys and the stats with one forward scan.
// Tails were repaired on open; a line that still does not parse is skipped and counted.
func (s *session) load() error {
	f, release, err := s.st.files.acquire(s.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", transcript.ErrNotFound, s.path)
		}
		return err
	}
	defer release()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	// A buffer no larger than the file: most transcripts are a few lines, and a load of each
	// of thousands of sessions must not allocate 256 KiB apiece (readLine joins longer lines).
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), int(min(size, 256<<10)))
	header, err := readLine(r)
	if err != nil {
		return fmt.Errorf("transcript %s: header: %w", s.path, err)
	}
	off := int64(len(header))
	s.stats.UpdatedAt = s.header.CreatedAt
	lastPreviewSeq := int64(-1)
	for off < size {
		line, err := readLine(r)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		n := int64(len(line))
		if n == 0 {
			break
		}
		if line[n-1] != '\n' {
			// A torn tail appeared after open (another writer?): leave it for the next repair.
			break
		}
		m, derr := transcript.DecodeMeta(line[:n-1])
		if derr != nil || m.Seq < s.nextSeq {
			s.corrupt++
			s.st.opts.metrics.CorruptLines.Inc()
			s.st.opts.log.Info("skipping corrupt transcript line", "path", s.path, "offset", off)
			off += n
			continue
		}
		if m.Message.Role == transcript.RoleUser || m.Message.Role == transcript.RoleAssistant {
			lastPreviewSeq = int64(len(s.entries))
		}
		s.entries = transcript.AppendEntry(s.entries, m.Seq, off, m.Message.Role)
		if m.IdempotencyKey != "" {
			s.keys[m.IdempotencyKey] = m.Seq
		}
		s.nextSeq = m.Seq + 1
		s.stats.Count(m.Message.Role, m.Message.Usage)
		s.stats.Touch(m.Message.Role, m.TS)
		off += n
	}
	s.size = off
	// The preview needs the text, so decode records backwards from the last user/assistant one
	// until one carries text.
	for i := lastPreviewSeq; i >= 0 && i >= lastPreviewSeq-1000; i-- {
		rec, err := s.readEntry(f, int(i))
		if err != nil {
			continue
		}
		if p := transcript.Preview(&rec.Message); p != "" {
			s.stats.LastPreview = p
			break
		}
	}
	return nil
}

// readLine returns one line including its newline (or the unterminated rest at EOF).
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// lineEnd is where the entry's line ends at the latest: the next entry or the durable end.
func (s *session) lineEnd(i int) int64 {
	if i+1 < len(s.entries) {
		return s.entries[i+1].Off
	}
	return s.size
}

// readEntry decodes the record of entries[i] from f. Callers hold s.mu.
func (s *session) readEntry(f io.ReaderAt, i int) (transcript.Record, error) {
	e := s.entries[i]
	buf := make([]byte, s.lineEnd(i)-e.Off)
	if _, err := f.ReadAt(buf, e.Off); err != nil {
		return transcript.Record{}, err
	}
	if j := bytes.IndexByte(buf, '\n'); j >= 0 {
		buf = buf[:j]
	}
	return transcript.DecodeRecord(buf)
}

// entryIndex returns the index of the entry with seq, or -1.
func (s *session) entryIndex(seq int64) int {
	i := transcript.SearchSeq(s.entries, seq)
	if i < len(s.entries) && s.entries[i].Seq == seq {
		return i
	}
	return -1
}

func (s *session) notFound() error {
	if s.broken != nil {
		return s.broken
	}
	return fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, s.header.Namespace, s.header.SessionID)
}
