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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The memory tools and their bounds.
const (
	MemorySearchTool = "memory_search"
	MemoryGetTool    = "memory_get"
	MemoryWriteTool  = "memory_write"

	DefaultMemoryLimit = 5
	MaxMemoryLimit     = 20
	// MaxNoteBytes bounds a note's text, MaxNoteTagBytes each of its tags.
	MaxNoteBytes    = 4096
	MaxNoteTags     = 16
	MaxNoteTagBytes = 64
)

// EmbeddingsGate judges a recall's embeddings call against the budgets before it is made and
// charges what it cost after (the turn engine's gate); nil for a person's door, which no
// budget holds.
type EmbeddingsGate interface {
	Judge(ctx context.Context) error
	Charge(ctx context.Context, tokens int64)
}

// EmbeddingsOf is an Agent's embeddings provider as the store uses it, without its key
// (Env.Embeddings adds it); nil when the Agent names none.
func EmbeddingsOf(a *sessionsv1alpha1.Agent) *transcript.EmbeddingsSpec {
	e := a.Spec.Memory.Embeddings
	if e == nil {
		return nil
	}
	s := &transcript.EmbeddingsSpec{Provider: string(e.Provider), Model: e.Name, BaseURL: e.BaseURL, Dims: 256,
		ToolResults: a.Spec.Memory.ToolResults}
	if e.Dimensions != nil {
		s.Dims = int(*e.Dimensions)
	}
	return s
}

// KeylessEmbeddings is EmbeddingsOf for an Agent whose provider needs no key (the offline
// one), nil for one that does: the Env.Embeddings of a door in the transcript-store, which
// reads no Secrets and uses the embedder the manager registered.
func KeylessEmbeddings(_ context.Context, a *sessionsv1alpha1.Agent) (*transcript.EmbeddingsSpec, error) {
	if e := a.Spec.Memory.Embeddings; e == nil || e.SecretRef != nil {
		return nil, nil
	}
	return EmbeddingsOf(a), nil
}

type memorySearchArgs struct {
	Query    string  `json:"query"`
	Limit    Number  `json:"limit"`
	MinScore float64 `json:"minScore"`
	Agent    string  `json:"agent"`
}

type memoryGetArgs struct {
	SessionID  string `json:"sessionId"`
	Seq        Number `json:"seq"`
	Part       Number `json:"part"`
	Neighbours Number `json:"neighbours"`
}

type memoryWriteArgs struct {
	Text string   `json:"text"`
	Tags []string `json:"tags"`
}

// MemoryResult is memory_search's result.
type MemoryResult struct {
	Query string                 `json:"query"`
	Hits  []transcript.MemoryHit `json:"hits"`
	Count int                    `json:"count"`
	// Vectors says why the search by meaning was left out, when it was.
	Vectors string `json:"vectors,omitempty"`
}

func memorySearchTool() Tool {
	return Tool{Name: MemorySearchTool, Memory: true,
		Description: "Recall, by meaning and by words, what this agent said, heard and noted in its sessions (those this session may see) and the notes it wrote with memory_write. " +
			"Each hit gives its text, score, sessionKey, sessionId, seq, part and when; memory_get {sessionId, seq, part} opens it with its neighbours.",
		Schema: Schema(map[string]any{
			"query":    map[string]any{"type": "string", "description": "what to recall, in your own words"},
			"limit":    map[string]any{"type": "number", "description": "max hits (default 5, at most 20)"},
			"minScore": map[string]any{"type": "number", "description": "drop hits found by meaning alone whose similarity (0 to 1) is below this"},
			"agent":    map[string]any{"type": "string", "description": "whose memory (a person only; a session recalls its own Agent's)"},
		}, "query"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a memorySearchArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if strings.TrimSpace(a.Query) == "" {
				return nil, errors.New("query is required")
			}
			return c.recall(ctx, a)
		}}
}

func memoryGetTool() Tool {
	return Tool{Name: MemoryGetTool, Memory: true,
		Description: "Open a memory_search hit: its full text with up to 5 chunks either side (neighbours, default 1).",
		Schema: Schema(map[string]any{
			"sessionId":  map[string]any{"type": "string", "description": "the hit's sessionId"},
			"seq":        map[string]any{"type": "number", "description": "the hit's seq"},
			"part":       map[string]any{"type": "number", "description": "the hit's part (default 0)"},
			"neighbours": map[string]any{"type": "number", "description": "chunks either side (default 1, at most 5)"},
		}, "sessionId", "seq"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a memoryGetArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			return c.memoryGet(ctx, a)
		}}
}

func memoryWriteTool() Tool {
	return Tool{Name: MemoryWriteTool, Memory: true, SessionOnly: true,
		Description: "Keep a note in this agent's long-term memory: a fact, a decision, a preference worth recalling in later sessions. " +
			"Any later session of this agent recalls it with memory_search.",
		Schema: Schema(map[string]any{
			"text": map[string]any{"type": "string", "description": "the note, self-contained (at most 4096 bytes)"},
			"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "a few words to file it under"},
		}, "text"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a memoryWriteArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if err := CheckNote(a.Text, a.Tags); err != nil {
				return nil, err
			}
			if c.Session == nil {
				return nil, errors.New("memory_write is a session's: a note belongs to the Agent that writes it")
			}
			// The note is the call itself: the turn records it in the transcript, and the
			// store's memory index reads it from there, so it is rebuilt with the rest. The
			// store learns the Agent's embedder here, so the note is remembered at once.
			if err := c.registerMemory(ctx); err != nil {
				return nil, err
			}
			return StatusResult{Status: StatusOK, Reply: "noted; later sessions of this agent recall it with memory_search"}, nil
		}}
}

// CheckNote says what is wrong with a note, if anything.
func CheckNote(text string, tags []string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return errors.New("text is required")
	case len(text) > MaxNoteBytes:
		return fmt.Errorf("text is longer than %d bytes", MaxNoteBytes)
	case len(tags) > MaxNoteTags:
		return fmt.Errorf("more than %d tags", MaxNoteTags)
	}
	for _, t := range tags {
		if len(t) > MaxNoteTagBytes {
			return fmt.Errorf("a tag is longer than %d bytes", MaxNoteTagBytes)
		}
	}
	return nil
}

// recall asks the store's memory for the Agent's chunks the caller may read: a session its
// own Agent's, within its visibility, and its Agent's notes; a person the named Agent's,
// within what the access layer lets it read. The namespace is always the call's.
func (c *Call) recall(ctx context.Context, a memorySearchArgs) (any, error) {
	r, ok := c.Store.(transcript.Recaller)
	if !ok {
		return nil, errors.New("memory_search is not available: the transcript store keeps no memory index")
	}
	q := transcript.MemoryQuery{Namespace: c.Namespace, Text: a.Query, MinScore: a.MinScore,
		Limit: int(Clamp(a.Limit.Or(DefaultMemoryLimit), 1, MaxMemoryLimit))}
	agent := c.Agent
	if c.Session != nil {
		q.Agent, q.Notes = c.agentID(), true
	} else {
		if a.Agent == "" {
			return nil, errors.New("agent is required: whose memory to recall")
		}
		var err error
		if agent, err = c.lookup().Agent(ctx, c.Namespace, a.Agent); err != nil {
			return nil, err
		}
		if agent == nil {
			return nil, fmt.Errorf("agent %q not found", a.Agent)
		}
		q.Agent = a.Agent
	}
	if agent != nil && !agent.Spec.Memory.Enabled {
		return &StatusResult{Status: StatusForbidden, Error: fmt.Sprintf("agent %q keeps no memory (spec.memory.enabled)", q.Agent)}, nil
	}
	ids, refusal, err := c.readableScope(ctx)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return refusal, nil
	}
	q.SessionIDs = ids
	if agent != nil && c.Embeddings != nil {
		if q.Embeddings, err = c.Embeddings(ctx, agent); err != nil {
			return nil, err
		}
	}
	if c.EmbeddingsGate != nil {
		if err := c.EmbeddingsGate.Judge(ctx); err != nil {
			return nil, err
		}
	}
	res, err := r.Recall(ctx, q)
	if c.EmbeddingsGate != nil {
		c.EmbeddingsGate.Charge(ctx, res.EmbedTokens)
	}
	if err != nil {
		return nil, err
	}
	if res.Hits == nil {
		res.Hits = []transcript.MemoryHit{}
	}
	return MemoryResult{Query: q.Text, Hits: res.Hits, Count: len(res.Hits), Vectors: res.Vectors}, nil
}

// memoryGet opens a hit, once the caller may: a session a chunk of a session it sees, or
// a note of its own Agent; a person a chunk of a transcript it may read.
func (c *Call) memoryGet(ctx context.Context, a memoryGetArgs) (any, error) {
	r, ok := c.Store.(transcript.Recaller)
	if !ok {
		return nil, errors.New("memory_get is not available: the transcript store keeps no memory index")
	}
	if a.SessionID == "" || !a.Seq.Set {
		return nil, errors.New("sessionId and seq are required")
	}
	target, err := c.resolveSession(ctx, a.SessionID)
	if err != nil {
		return nil, err
	}
	if target.Status.SessionID != a.SessionID {
		return nil, notFoundError{ref: a.SessionID}
	}
	q := transcript.MemoryGet{Namespace: c.Namespace, SessionID: a.SessionID, Seq: a.Seq.V, Part: int(Clamp(a.Part.Or(0), 0, 1<<10)),
		Neighbours: int(Clamp(a.Neighbours.Or(1), 0, 5))}
	if c.Session != nil {
		pol, err := c.sessionPolicy(ctx)
		if err != nil {
			return nil, err
		}
		if ok, why := c.sees(ctx, pol, target); !ok {
			if target.Spec.AgentID != c.agentID() {
				return &StatusResult{Status: StatusForbidden, Error: why}, nil
			}
			q.NotesOnly = true
		}
	}
	if err := c.may(ctx, caller.ReadTranscript, target.Name); err != nil {
		return nil, err
	}
	return r.MemoryGet(ctx, q)
}

// registerMemory hands the store the calling Agent's embeddings provider.
func (c *Call) registerMemory(ctx context.Context) error {
	r, ok := c.Store.(transcript.Recaller)
	if !ok || c.Agent == nil || c.Embeddings == nil {
		return nil
	}
	spec, err := c.Embeddings(ctx, c.Agent)
	if err != nil || spec == nil {
		return err
	}
	return r.RegisterMemory(ctx, transcript.MemoryAgent{Namespace: c.Namespace, Agent: c.agentID(), Embeddings: *spec})
}
