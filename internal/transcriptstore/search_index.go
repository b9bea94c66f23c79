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

package transcriptstore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// searchDir holds the search index inside the data directory; its leading dot keeps the
// store's scan (which takes only valid namespace names) from reading it as a namespace.
const searchDir = ".search"

// OpenSearchIndex opens the full-text index of the transcripts under dataDir. It can always
// be rebuilt from them: delete the directory and restart.
func OpenSearchIndex(dataDir string, log logr.Logger) (*search.Index, error) {
	dir := filepath.Join(dataDir, searchDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	ix, err := search.Open(filepath.Join(dir, "index.db"), search.Options{Log: log})
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	return ix, nil
}

// SearchableStore is the store with its indexes: what the session tools read, search and
// recall.
func SearchableStore(st *store.FileStore, index *search.Index, mem *memory.Index) sessiontools.Transcripts {
	return Indexed{FileStore: st, Words: index, Memory: mem}
}
