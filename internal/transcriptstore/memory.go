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
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
)

// memoryDir holds the memory index beside the transcripts, as searchDir holds the
// full-text one; it can always be rebuilt from them.
const memoryDir = ".memory"

// openMemoryIndex opens the memory index under dataDir. Embedders dial out through the
// model clients' transport under the default egress policy.
func openMemoryIndex(dataDir string, log logr.Logger) (*memory.Index, error) {
	dir := filepath.Join(dataDir, memoryDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("memory index: %w", err)
	}
	ix, err := memory.Open(filepath.Join(dir, "chunks.log"), memory.Options{NewEmbedder: NewEmbedder, Log: log})
	if err != nil {
		return nil, fmt.Errorf("memory index: %w", err)
	}
	return ix, nil
}

// NewEmbedder builds an Agent's embedder from the spec the manager hands over.
func NewEmbedder(s transcript.EmbeddingsSpec) (memory.Embedder, error) {
	return provider.NewEmbedder(provider.EmbedConfig{Provider: s.Provider, Model: s.Model, BaseURL: s.BaseURL,
		APIKey: s.APIKey, Dims: s.Dims})
}

// recaller is the memory index with the full-text index it fuses with.
type recaller struct {
	mem   *memory.Index
	words *search.Index
}

func (r recaller) Recall(ctx context.Context, q transcript.MemoryQuery) (transcript.MemoryResult, error) {
	return r.mem.Recall(ctx, q, r.words)
}

func (r recaller) MemoryGet(ctx context.Context, q transcript.MemoryGet) (transcript.MemoryChunks, error) {
	return r.mem.Get(ctx, q)
}

// memoryAPI serves the internal API's recall and get:
//
//	POST /v1/memory/recall    MemoryQuery -> MemoryResult
//	POST /v1/memory/get       MemoryGet -> MemoryChunks
//
// The manager decides what a caller may recall (the sessions and notes it names); the
// store only answers within them.
func memoryAPI(mux *http.ServeMux, r transcript.Recaller) {
	mux.HandleFunc("POST "+transcript.APIMemoryRecallPath, func(w http.ResponseWriter, req *http.Request) {
		var q transcript.MemoryQuery
		if !decodeBody(w, req, &q) {
			return
		}
		res, err := r.Recall(req.Context(), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST "+transcript.APIMemoryGetPath, func(w http.ResponseWriter, req *http.Request) {
		var q transcript.MemoryGet
		if !decodeBody(w, req, &q) {
			return
		}
		res, err := r.MemoryGet(req.Context(), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}
