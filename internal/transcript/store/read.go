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
	"context"
	"fmt"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Read returns up to opts.Limit records before opts.BeforeSeq (or the last ones), oldest first.
// It walks the in-memory offset index backwards and reads only the chosen lines, so a page
// costs O(limit) whatever the transcript length.
func (st *FileStore) Read(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return transcript.Page{}, err
	}
	limit := transcript.ClampLimit(opts.Limit)

	s.mu.Lock()
	if s.broken == errEvicted { // forgotten since: load it again
		s.mu.Unlock()
		return st.Read(ctx, namespace, sessionID, opts)
	}
	if s.archived {
		err := s.notFound()
		s.mu.Unlock()
		return transcript.Page{}, err
	}
	return st.readLocked(s, limit, opts)
}

// readLocked reads the page opts selects of s, whose lock the caller holds: it unlocks it
// before the file I/O.
func (st *FileStore) readLocked(s *session, limit int, opts transcript.ReadOptions) (transcript.Page, error) {
	picked, page := transcript.SelectPage(s.entries, limit, opts)
	picked = transcript.TrimPage(s.entries, picked, &page, func(i int) int64 { return s.lineEnd(i) - s.entries[i].Off }, transcript.MaxPageBytes)
	// Copy what the reads need so the file I/O happens without the lock: entries never move
	// once written and the file only grows.
	spans := make([]span, 0, len(picked))
	for j := len(picked) - 1; j >= 0; j-- {
		i := picked[j]
		if k := len(spans) - 1; k >= 0 && spans[k].lastIdx == i-1 {
			spans[k].lastIdx, spans[k].end = i, s.lineEnd(i)
			spans[k].starts = append(spans[k].starts, s.entries[i].Off)
			continue
		}
		spans = append(spans, span{lastIdx: i, start: s.entries[i].Off, end: s.lineEnd(i), starts: []int64{s.entries[i].Off}})
	}
	s.mu.Unlock()

	if len(spans) == 0 {
		page.Messages = []transcript.Record{}
		return page, nil
	}
	f, release, err := st.files.acquire(s.path)
	if err != nil {
		return transcript.Page{}, err
	}
	defer release()
	page.Messages = make([]transcript.Record, 0, len(picked))
	for _, sp := range spans {
		buf := make([]byte, sp.end-sp.start)
		if _, err := f.ReadAt(buf, sp.start); err != nil {
			return transcript.Page{}, fmt.Errorf("transcript %s: %w", s.path, err)
		}
		for _, off := range sp.starts {
			line := buf[off-sp.start:]
			if j := bytes.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			rec, err := transcript.DecodeRecord(line)
			if err != nil {
				return transcript.Page{}, fmt.Errorf("transcript %s at offset %d: %w", s.path, off, err)
			}
			page.Messages = append(page.Messages, rec)
		}
	}
	return page, nil
}

// span is a run of adjacent chosen lines read with one ReadAt.
type span struct {
	lastIdx    int
	start, end int64
	starts     []int64
}
