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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// WithRestoreHook calls fn with the header of each session once it is restored (live
// again), outside the store's locks; fn must not block (the search index only queues).
func WithRestoreHook(fn func(transcript.SessionHeader)) Option {
	return func(o *options) { o.onRestore = append(o.onRestore, fn) }
}

// Restore makes an archived transcript live again: the newest
// <sessionId>.jsonl.deleted.<unix> is moved back to <sessionId>.jsonl (a hard link, so a
// live file of that name is never overwritten, then the archived name removed, the
// directory fsync'd after each) and reopened as a scan opens it, its torn tail repaired.
// Restoring a live session is a no-op; a session with no archived transcript (never
// archived, or removed after the archived-transcript retention) is ErrNotFound.
func (st *FileStore) Restore(_ context.Context, namespace, sessionID string) error {
	if err := transcript.ValidName(namespace); err != nil {
		return err
	}
	if err := transcript.ValidName(sessionID); err != nil {
		return err
	}
	if !st.enter() {
		return transcript.ErrClosed
	}
	defer st.active.Done()
	// One restore at a time: they are rare, and two of one session must not both link.
	st.restoreMu.Lock()
	defer st.restoreMu.Unlock()
	st.mu.Lock()
	_, live := st.headers[namespace][sessionID]
	st.mu.Unlock()
	if live {
		return nil
	}
	archived, err := st.archivedPath(namespace, sessionID)
	if err != nil {
		return err
	}
	dir := filepath.Dir(archived)
	path := st.pathOf(namespace, sessionID)
	if err := os.Link(archived, path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	// A crash here leaves both names: the live one wins on open, the retention removes the other.
	if err := os.Remove(archived); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	h, err := st.openExisting(namespace, sessionID, path)
	if err != nil {
		return fmt.Errorf("reopen restored transcript: %w", err)
	}
	st.mu.Lock()
	st.indexHeaderLocked(h)
	st.mu.Unlock()
	for _, fn := range st.opts.onRestore {
		fn(h)
	}
	return nil
}

// newestArchived picks, of the file names given, the latest archived transcript of
// sessionID (<sessionId>.jsonl.deleted.<unix>, the largest <unix>).
func newestArchived(sessionID string, names []string) (string, bool) {
	best, bestAt, found := "", int64(0), false
	for _, n := range names {
		if !strings.HasPrefix(n, sessionID+fileSuffix+deletedSuffix) {
			continue
		}
		at, ok := archivedAt(n)
		if !ok || n[:strings.LastIndex(n, fileSuffix+deletedSuffix)] != sessionID {
			continue
		}
		if !found || at.Unix() > bestAt {
			best, bestAt, found = n, at.Unix(), true
		}
	}
	return best, found
}
