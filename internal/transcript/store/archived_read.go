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

// ReadArchived reads a page of a session's newest archived transcript
// (<sessionId>.jsonl.deleted.<unix>) as Read reads a live one: the history of an archived or
// retired session, until the archived-transcript retention removes it. The file is scanned
// for each page (archived history is read rarely) and never kept open or loaded.
func (st *FileStore) ReadArchived(_ context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	path, err := st.archivedPath(namespace, sessionID)
	if err != nil {
		return transcript.Page{}, err
	}
	if !st.enter() {
		return transcript.Page{}, transcript.ErrClosed
	}
	defer st.active.Done()
	s := newSession(st, transcript.SessionHeader{Namespace: namespace, SessionID: sessionID}, path)
	defer st.files.forget(path)
	s.mu.Lock()
	if err := s.load(); err != nil {
		s.mu.Unlock()
		return transcript.Page{}, err
	}
	return st.readLocked(s, transcript.ClampLimit(opts.Limit), opts)
}

// archivedPath is the path of sessionID's newest archived transcript; ErrNotFound when it
// has none (never archived, or removed after the archived-transcript retention).
func (st *FileStore) archivedPath(namespace, sessionID string) (string, error) {
	if err := transcript.ValidName(namespace); err != nil {
		return "", err
	}
	if err := transcript.ValidName(sessionID); err != nil {
		return "", err
	}
	dir := filepath.Join(st.root, namespace)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	names := make([]string, 0, 4)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), sessionID+fileSuffix+deletedSuffix) && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	archived, ok := newestArchived(sessionID, names)
	if !ok {
		return "", fmt.Errorf("%w: %s/%s has no archived transcript (never archived, or removed after the archived-transcript retention)",
			transcript.ErrNotFound, namespace, sessionID)
	}
	return filepath.Join(dir, archived), nil
}
