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
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// entry is one line of the log: an Agent's embedder (op agent), a session's new chunks and
// mark (op add), or a session gone (op drop). A line is whole or ignored: a torn tail is
// cut on open, and the transcripts past the marks are read again.
type entry struct {
	Op     string                     `json:"op"`
	NS     string                     `json:"ns"`
	Agent  string                     `json:"agent"`
	SID    string                     `json:"sid,omitempty"`
	Key    string                     `json:"key,omitempty"`
	Upto   int64                      `json:"upto,omitempty"`
	Emb    string                     `json:"emb,omitempty"`
	Dims   int                        `json:"dims,omitempty"`
	Spec   *transcript.EmbeddingsSpec `json:"spec,omitempty"`
	Chunks []logChunk                 `json:"chunks,omitempty"`
}

type logChunk struct {
	Seq   int64   `json:"seq"`
	Part  int     `json:"part,omitempty"`
	Kind  uint8   `json:"kind"`
	TS    int64   `json:"ts"`
	Scale float32 `json:"s"`
	V     []byte  `json:"v"` // the int8 components
}

// logFile is the append-only log of the index, fsynced per batch. The indexer and a
// registration append to it; mu keeps their lines whole.
type logFile struct {
	mu   sync.Mutex
	path string
	f    *os.File
	w    *bufio.Writer
}

// openLog reads every whole line of path into apply, cuts a torn tail, and opens it for
// appending. It returns how many chunks the lines held.
func openLog(path string, apply func(*entry)) (*logFile, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, 0, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var good int64
	chunks := 0
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a line without its newline is torn
		}
		if err != nil {
			_ = f.Close()
			return nil, 0, err
		}
		var e entry
		if json.Unmarshal(line, &e) != nil {
			break
		}
		apply(&e)
		chunks += len(e.Chunks)
		good += int64(len(line))
	}
	if err := f.Truncate(good); err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return &logFile{path: path, f: f, w: bufio.NewWriterSize(f, 1<<16)}, chunks, nil
}

// append writes entries as lines and fsyncs them: once it returns they survive a crash.
func (l *logFile) append(es []*entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range es {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := l.w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	if err := l.w.Flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *logFile) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// rewrite replaces the log with es (the live state): written beside it, fsynced, renamed
// over it, and the directory fsynced, so a crash leaves the old log or the new one.
func (l *logFile) rewrite(es []*entry) error {
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range es {
		buf.Reset()
		if err = enc.Encode(e); err != nil {
			break
		}
		if _, err = w.Write(buf.Bytes()); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("memory log rewrite: %w", err)
	}
	if d, err := os.Open(filepath.Dir(l.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	_ = l.f.Close()
	if l.f, err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0o640); err != nil {
		return err
	}
	l.w = bufio.NewWriterSize(l.f, 1<<16)
	return nil
}

func int8Bytes(q []int8) []byte {
	b := make([]byte, len(q))
	for i, x := range q {
		b[i] = byte(x)
	}
	return b
}

func bytesInt8(b []byte) []int8 {
	q := make([]int8, len(b))
	for i, x := range b {
		q[i] = int8(x)
	}
	return q
}
