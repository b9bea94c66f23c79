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

// Package transcript is the append-only transcript store behind the transcript-store sidecar:
// one JSONL file per session (a header line, then one record per message), durable group-committed
// appends with idempotency keys, O(N) tail reads, the internal socket API with its Go client, and
// the public history HTTP API (JSON pages and Server-Sent Events).
package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// Roles a message may carry.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
	RoleSystem     = "system"
	// RoleCompaction is a compaction record: a summary of older history (its text) that
	// the model keeps in place of the messages of its Compaction range.
	RoleCompaction = "compaction"
	// RoleCommand is a person's command to the operator (a standalone /send on|off|inherit):
	// recorded where it was typed, never given to the model.
	RoleCommand = "command"
)

// Content block types.
const (
	BlockText     = "text"
	BlockToolCall = "toolCall"
	// BlockThinking is a model's thinking before its answer, kept so that the next call of
	// a tool loop can send it back (Anthropic requires its signed blocks back).
	BlockThinking = "thinking"
)

// Provenance kinds the operator writes; other values are kept as given.
const (
	ProvenanceInterSession     = "inter_session"
	ProvenanceExternal         = "external"
	ProvenanceSubagentAnnounce = "subagent_announce"
	// ProvenanceCron marks the message of a SessionSchedule's tick (Schedule names it).
	ProvenanceCron = "cron"
	// ProvenanceHook marks the message of a SessionHook's delivery (Hook, DeliveryID).
	ProvenanceHook = "hook"
)

// Read limits of the history API.
const (
	DefaultLimit = 200
	MaxLimit     = 1000
	// MaxPageBytes bounds the records of one page by their stored size: a page of 1,000
	// large records would otherwise be read, decoded and encoded whole. A page holds one
	// record at least, so paging always moves on.
	MaxPageBytes = 4 << 20
)

// ErrNotFound is returned for an unknown or archived session.
var ErrNotFound = errors.New("transcript: session not found")

// ErrClosed is returned by a FileStore that is shutting down.
var ErrClosed = errors.New("transcript: store closed")

// ErrInvalid is returned for a request the store refuses (bad role, missing ids, ...).
var ErrInvalid = errors.New("transcript: invalid request")

// ContentBlock is one block of a message: text, a tool call, or thinking.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Thinking is a thinking block's text and ThinkingSignature the provider's signature of
	// it; a Redacted block carries only the provider's opaque data, in ThinkingSignature.
	Thinking          string `json:"thinking,omitempty"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`
}

// Usage is the token and cost accounting of one model turn.
type Usage struct {
	Input       int64   `json:"input"`
	Output      int64   `json:"output"`
	TotalTokens int64   `json:"totalTokens"`
	Cost        float64 `json:"cost,omitempty"`
	// CachedInput are input tokens read from the provider's prompt cache (within Input).
	CachedInput int64 `json:"cachedInput,omitempty"`
	// CostNanos is the call priced with its Agent's pricing, in 1e-9 of Currency.
	CostNanos int64  `json:"costNanos,omitempty"`
	Currency  string `json:"currency,omitempty"`
}

// Provenance says where a message came from when it was not typed by the session's own user.
type Provenance struct {
	Kind             string `json:"kind"`
	SourceSessionKey string `json:"sourceSessionKey,omitempty"`
	SourceChannel    string `json:"sourceChannel,omitempty"`
	SourceTool       string `json:"sourceTool,omitempty"`
	// Schedule is the SessionSchedule whose tick sent the message (kind cron).
	Schedule string `json:"schedule,omitempty"`
	// Hook and DeliveryID are the SessionHook and the delivery that sent it (kind hook).
	Hook       string `json:"hook,omitempty"`
	DeliveryID string `json:"deliveryId,omitempty"`
}

// Message is one transcript message in the raw transcript format.
type Message struct {
	Role       string         `json:"role"`
	Content    []ContentBlock `json:"content"`
	ToolCallID string         `json:"toolCallId,omitempty"`
	ToolName   string         `json:"toolName,omitempty"`
	IsError    bool           `json:"isError,omitempty"`
	Model      string         `json:"model,omitempty"`
	Provider   string         `json:"provider,omitempty"`
	StopReason string         `json:"stopReason,omitempty"`
	// ThinkingLevel is the thinking level the model call of an assistant message was made
	// with, when the session sets one.
	ThinkingLevel string      `json:"thinkingLevel,omitempty"`
	Usage         *Usage      `json:"usage,omitempty"`
	Provenance    *Provenance `json:"provenance,omitempty"`
	// Compaction describes a compaction record (role compaction).
	Compaction *Compaction `json:"compaction,omitempty"`
}

// Compaction is what a compaction record folded: the records from FromSeq to ToSeq (and
// the previous summary, if any), and the estimated context tokens before and after.
type Compaction struct {
	FromSeq      int64 `json:"fromSeq"`
	ToSeq        int64 `json:"toSeq"`
	TokensBefore int64 `json:"tokensBefore"`
	TokensAfter  int64 `json:"tokensAfter"`
}

// Record is one line of a transcript after the header.
type Record struct {
	Seq            int64     `json:"seq"`
	ID             string    `json:"id"`
	TS             time.Time `json:"ts"`
	IdempotencyKey string    `json:"idempotencyKey,omitempty"`
	Message        Message   `json:"message"`
}

// SessionHeader is the first line of a transcript.
type SessionHeader struct {
	Namespace  string `json:"namespace"`
	SessionID  string `json:"sessionId"`
	SessionKey string `json:"sessionKey"`
	// Name is the AgentSession's object name, which the history API's access check names;
	// empty in older transcripts, where the conventional name of the key is used.
	Name             string    `json:"name,omitempty"`
	ParentSessionKey string    `json:"parentSessionKey,omitempty"`
	CreatedAt        time.Time `json:"createdAt"`
}

// AppendRequest is one message to append. A non-empty IdempotencyKey already in the transcript
// returns the existing record instead of a new one.
type AppendRequest struct {
	IdempotencyKey string  `json:"idempotencyKey,omitempty"`
	Message        Message `json:"message"`
}

// Stats are the counters the manager mirrors into AgentSession status.
type Stats struct {
	MessageCount int64 `json:"messageCount"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	TotalTokens  int64 `json:"totalTokens"`
	// CachedInputTokens, CostNanos and Currency add up the records' usage; a transcript
	// priced in two currencies has Currency "mixed".
	CachedInputTokens int64  `json:"cachedInputTokens,omitempty"`
	CostNanos         int64  `json:"costNanos,omitempty"`
	Currency          string `json:"currency,omitempty"`
	// Turns counts the turns' inputs (user records).
	Turns int64 `json:"turns,omitempty"`
	// Compactions counts the compaction records; LastCompactedAt is the latest one's time.
	Compactions     int64     `json:"compactions,omitempty"`
	LastCompactedAt time.Time `json:"lastCompactedAt,omitzero"`
	LastPreview     string    `json:"lastPreview,omitempty"`
	UpdatedAt       time.Time `json:"updatedAt"`
	Path            string    `json:"path,omitempty"`
}

// ReadOptions select a page of history. BeforeSeq 0 reads from the end; AfterSeq > 0 leaves
// out the records up to and including it (HasMore then says whether the page had to leave
// out newer ones than AfterSeq too).
type ReadOptions struct {
	Limit     int
	BeforeSeq int64
	AfterSeq  int64
	// IncludeTools includes the records of how turns ran: tool results and each turn's
	// system context. Without it a page holds the conversation (user and assistant).
	IncludeTools bool
}

// Page is a page of history in ascending seq order. NextCursor pages further back.
type Page struct {
	Messages   []Record `json:"messages"`
	NextCursor string   `json:"nextCursor,omitempty"`
	HasMore    bool     `json:"hasMore"`
}

// Store is what the manager needs; both the on-disk *FileStore and the socket *Client implement it.
type Store interface {
	// CreateSession is idempotent: an existing session returns its stats.
	CreateSession(ctx context.Context, h SessionHeader) (Stats, error)
	// Append is durable on return and idempotent per key.
	Append(ctx context.Context, namespace, sessionID string, reqs ...AppendRequest) ([]Record, error)
	Read(ctx context.Context, namespace, sessionID string, opts ReadOptions) (Page, error)
	Stats(ctx context.Context, namespace, sessionID string) (Stats, error)
	// Archive is idempotent.
	Archive(ctx context.Context, namespace, sessionID string) error
	// Restore makes an archived transcript live again with all its messages; restoring a
	// live session is a no-op, one whose archived transcript is gone is ErrNotFound.
	Restore(ctx context.Context, namespace, sessionID string) error
	LiveLister
}

// PreviewLen bounds a session's lastPreview, in bytes.
const PreviewLen = 120

// Preview returns the start (at most PreviewLen bytes) of a user/assistant text message, or ""
// when the message does not qualify for the session preview.
func Preview(m *Message) string {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return ""
	}
	for _, b := range m.Content {
		if b.Type == BlockText && b.Text != "" {
			return textutil.Truncate(b.Text, PreviewLen)
		}
	}
	return ""
}

// validate checks what every store enforces before assigning a seq.
func (r *AppendRequest) validate() error {
	switch r.Message.Role {
	case RoleUser, RoleAssistant, RoleToolResult, RoleSystem, RoleCompaction, RoleCommand:
	default:
		return errors.Join(ErrInvalid, errors.New("unknown role "+quote(r.Message.Role)))
	}
	for _, b := range r.Message.Content {
		if b.Type != BlockText && b.Type != BlockToolCall && b.Type != BlockThinking {
			return errors.Join(ErrInvalid, errors.New("unknown content block type "+quote(b.Type)))
		}
	}
	return nil
}

// Count folds one message, by its role and usage, into the counters (not the preview or
// time).
func (s *Stats) Count(role string, u *Usage) {
	s.MessageCount++
	switch role {
	case RoleUser:
		s.Turns++
	case RoleCompaction:
		s.Compactions++
	}
	if u == nil {
		return
	}
	s.InputTokens += u.Input
	s.OutputTokens += u.Output
	s.TotalTokens += u.TotalTokens
	s.CachedInputTokens += u.CachedInput
	switch {
	case u.Currency == "":
	case s.Currency == "" || s.Currency == u.Currency:
		s.Currency = u.Currency
		s.CostNanos += u.CostNanos
	default:
		s.Currency = MixedCurrency
	}
}

// MixedCurrency is the Currency of usage priced in more than one currency.
const MixedCurrency = "mixed"

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// add folds one record into the stats.
func (s *Stats) Add(r *Record) {
	s.Count(r.Message.Role, r.Message.Usage)
	if p := Preview(&r.Message); p != "" {
		s.LastPreview = p
	}
	s.Touch(r.Message.Role, r.TS)
}

// Touch moves the times on to a record of role appended at ts.
func (s *Stats) Touch(role string, ts time.Time) {
	if ts.After(s.UpdatedAt) {
		s.UpdatedAt = ts
	}
	if role == RoleCompaction && ts.After(s.LastCompactedAt) {
		s.LastCompactedAt = ts
	}
}

func (r *AppendRequest) ValidateForAppend() error {
	if err := r.validate(); err != nil {
		return err
	}
	for _, b := range r.Message.Content {
		if len(b.Arguments) > 0 && !json.Valid(b.Arguments) {
			return errors.Join(ErrInvalid, fmt.Errorf("toolCall %q: arguments are not valid JSON", b.ID))
		}
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// ValidName keeps namespaces and session ids safe to use as path elements.
func ValidName(s string) error {
	if !nameRE.MatchString(s) || strings.Contains(s, "..") {
		return fmt.Errorf("%w: %q is not a valid namespace or session id", ErrInvalid, s)
	}
	return nil
}
