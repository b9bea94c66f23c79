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

package transcript

import (
	"context"
	"time"
)

// The internal API's long-term memory: recall over an Agent's sessions and notes, and one
// chunk with its neighbours.
const (
	APIMemoryRecallPath = "/v1/memory/recall"
	APIMemoryGetPath    = "/v1/memory/get"
	APIMemoryAgentsPath = "/v1/memory/agents"
	// APIMemorySpendPath is where the manager collects what the indexer's embeddings owe the
	// namespaces' budgets and says whose windows are spent.
	APIMemorySpendPath = "/v1/memory/spend"
)

// The kinds of chunk memory keeps.
const (
	ChunkMessage = "message" // a user's or the assistant's words
	ChunkTool    = "tool"    // a tool's result, when the Agent keeps them
	ChunkSummary = "summary" // a compaction record's summary
	ChunkNote    = "note"    // what memory_write stored: the call's text and tags
)

// EmbeddingsSpec is an Agent's embeddings provider as the store uses it: the manager
// resolves the Secret and hands the key with each memory call; the store keeps it in memory
// only.
type EmbeddingsSpec struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"baseURL,omitempty"`
	APIKey   string `json:"apiKey,omitempty"`
	Dims     int    `json:"dims,omitempty"`
	// ToolResults indexes tool results too.
	ToolResults bool `json:"toolResults,omitempty"`
}

// MemoryQuery is one recall of an Agent's memory in a namespace.
type MemoryQuery struct {
	Namespace string `json:"namespace"`
	// Agent is whose memory: chunks of its own sessions, and its notes.
	Agent string `json:"agent"`
	Text  string `json:"q"`
	Limit int    `json:"limit,omitempty"`
	// MinScore drops hits found by meaning alone whose cosine similarity is below it.
	MinScore float64 `json:"minScore,omitempty"`
	// SessionIDs, when not nil, are the only sessions whose chunks are recalled (those the
	// caller sees and may read); the Agent's notes are recalled whatever it says when
	// Notes is set.
	SessionIDs []string `json:"sessionIds,omitempty"`
	Notes      bool     `json:"notes,omitempty"`
	// Embeddings registers the Agent's embeddings provider; nil uses the one registered.
	Embeddings *EmbeddingsSpec `json:"embeddings,omitempty"`
}

// MemoryHit is one recalled chunk. Cursor opens its session at the message.
type MemoryHit struct {
	SessionKey string    `json:"sessionKey"`
	SessionID  string    `json:"sessionId"`
	Seq        int64     `json:"seq"`
	Part       int       `json:"part"`
	MessageID  string    `json:"messageId"`
	Kind       string    `json:"kind"`
	TS         time.Time `json:"ts"`
	Text       string    `json:"text"`
	// Score is the fused rank (reciprocal rank fusion of meaning and words); Similarity
	// the cosine of the query and the chunk (0 when found by words alone).
	Score           float64 `json:"score"`
	Similarity      float64 `json:"similarity,omitempty"`
	ByWords         bool    `json:"byWords,omitempty"`
	ContentRedacted bool    `json:"contentRedacted,omitempty"`
	Cursor          string  `json:"cursor"`
}

// MemoryResult is a recall's hits, best first. Vectors says why the search by meaning was
// left out, when it was; EmbedTokens are what embedding the query cost.
type MemoryResult struct {
	Hits        []MemoryHit `json:"hits"`
	Vectors     string      `json:"vectors,omitempty"`
	EmbedTokens int64       `json:"embedTokens,omitempty"`
}

// MemoryGet asks for one chunk with Neighbours chunks of its session either side.
type MemoryGet struct {
	Namespace  string `json:"namespace"`
	SessionID  string `json:"sessionId"`
	Seq        int64  `json:"seq"`
	Part       int    `json:"part"`
	Neighbours int    `json:"neighbours,omitempty"`
	// NotesOnly answers only a note (a caller that sees not the session, only its Agent's notes).
	NotesOnly bool `json:"notesOnly,omitempty"`
}

// MemoryChunks is a chunk and its neighbours in transcript order; Index is the asked one's.
type MemoryChunks struct {
	Chunks []MemoryHit `json:"chunks"`
	Index  int         `json:"index"`
}

// MemoryAgent registers an Agent's embeddings provider: its sessions are remembered from
// then on (and caught up from their transcripts).
type MemoryAgent struct {
	Namespace  string         `json:"namespace"`
	Agent      string         `json:"agent"`
	Embeddings EmbeddingsSpec `json:"embeddings"`
}

// Recaller answers recalls: the memory index in the transcript-store, its client in the
// manager.
type Recaller interface {
	Recall(ctx context.Context, q MemoryQuery) (MemoryResult, error)
	MemoryGet(ctx context.Context, q MemoryGet) (MemoryChunks, error)
	RegisterMemory(ctx context.Context, a MemoryAgent) error
}

// IndexSpendAck is the manager's side of a collection of the indexer's spend: Tally names the
// tally it charged (its ID; empty on the first collection), Held the namespaces whose
// budget window is spent, whose new chunks wait until a later collection releases them.
type IndexSpendAck struct {
	Tally string   `json:"tally,omitempty"`
	Held  []string `json:"held,omitempty"`
}

// IndexSpend is what the indexer's embeddings owe, in tokens per namespace, since the last
// acknowledged tally, and the namespaces whose Agents have memory (whose windows the
// manager judges).
type IndexSpend struct {
	ID         string           `json:"id"`
	Owed       map[string]int64 `json:"owed,omitempty"`
	Namespaces []string         `json:"namespaces,omitempty"`
}

// IndexSpender is the store's account of its indexer's embeddings: the memory index in the
// transcript-store, its client in the manager.
type IndexSpender interface {
	IndexSpend(ctx context.Context, ack IndexSpendAck) (IndexSpend, error)
}
