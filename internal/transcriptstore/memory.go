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
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// memoryDir holds the memory index beside the transcripts, as searchDir holds the
// full-text one; it can always be rebuilt from them.
const memoryDir = ".memory"

// OpenMemoryIndex opens the memory index under dataDir. Embedders dial out through the
// model clients' transport under the default egress policy.
func OpenMemoryIndex(dataDir string, log logr.Logger, m *memory.Metrics) (*memory.Index, error) {
	dir := filepath.Join(dataDir, memoryDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("memory index: %w", err)
	}
	ix, err := memory.Open(filepath.Join(dir, "chunks.log"), memory.Options{NewEmbedder: NewEmbedder, Log: log, Metrics: m})
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

// Indexed is a store with its full-text and memory indexes: what the session tools read,
// search and recall, in the sidecar's doors and in a suite's manager that runs without one.
type Indexed struct {
	*store.FileStore
	Words  *search.Index
	Memory *memory.Index
}

// Search implements transcript.Searcher.
func (x Indexed) Search(ctx context.Context, q transcript.SearchQuery) (transcript.SearchResult, error) {
	return x.Words.Search(ctx, q)
}

// Recall implements transcript.Recaller: meaning fused with words.
func (x Indexed) Recall(ctx context.Context, q transcript.MemoryQuery) (transcript.MemoryResult, error) {
	return x.Memory.Recall(ctx, q, x.Words)
}

// MemoryGet implements transcript.Recaller.
func (x Indexed) MemoryGet(ctx context.Context, q transcript.MemoryGet) (transcript.MemoryChunks, error) {
	return x.Memory.Get(ctx, q)
}

// RegisterMemory implements transcript.Recaller.
func (x Indexed) RegisterMemory(_ context.Context, a transcript.MemoryAgent) error {
	if err := transcript.ValidName(a.Namespace); err != nil {
		return err
	}
	if err := x.Memory.Register(a.Namespace, a.Agent, a.Embeddings); err != nil {
		return errors.Join(transcript.ErrInvalid, err)
	}
	return nil
}

// IndexSpend implements transcript.IndexSpender.
func (x Indexed) IndexSpend(ctx context.Context, a transcript.IndexSpendAck) (transcript.IndexSpend, error) {
	return x.Memory.IndexSpend(ctx, a)
}

// OpenIndexes opens the full-text and memory indexes under dataDir; their StoreOptions go
// to the store's open, then each is started over the store.
func OpenIndexes(dataDir string, log logr.Logger) (*search.Index, *memory.Index, error) {
	words, err := OpenSearchIndex(dataDir, log.WithName("search"))
	if err != nil {
		return nil, nil, err
	}
	mem, err := OpenMemoryIndex(dataDir, log.WithName("memory"), nil)
	if err != nil {
		_ = words.Close()
		return nil, nil, err
	}
	return words, mem, nil
}

// memoryAPI serves the internal API's recall and get:
//
//	POST /v1/memory/recall    MemoryQuery -> MemoryResult
//	POST /v1/memory/get       MemoryGet -> MemoryChunks
//	POST /v1/memory/agents    MemoryAgent (204)
//	POST /v1/memory/spend     IndexSpendAck -> IndexSpend (when r keeps the indexer's account)
//
// The manager decides what a caller may recall (the sessions and notes it names); the
// store only answers within them.
func memoryAPI(mux *http.ServeMux, r transcript.Recaller) {
	jsonRoute(mux, transcript.APIMemoryRecallPath, r.Recall)
	jsonRoute(mux, transcript.APIMemoryGetPath, r.MemoryGet)
	if sp, ok := r.(transcript.IndexSpender); ok {
		jsonRoute(mux, transcript.APIMemorySpendPath, sp.IndexSpend)
	}
	mux.HandleFunc("POST "+transcript.APIMemoryAgentsPath, func(w http.ResponseWriter, req *http.Request) {
		var a transcript.MemoryAgent
		if !decodeBody(w, req, &a) {
			return
		}
		if err := r.RegisterMemory(req.Context(), a); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// jsonRoute serves POST path: the body decoded into In, fn's answer written as JSON, a store
// error as its status.
func jsonRoute[In, Out any](mux *http.ServeMux, path string, fn func(context.Context, In) (Out, error)) {
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, req *http.Request) {
		var in In
		if !decodeBody(w, req, &in) {
			return
		}
		out, err := fn(req.Context(), in)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}
