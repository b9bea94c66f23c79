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
	"errors"
	"fmt"
	"time"
)

// APIRetiredPath is the internal API of retired sessions' records: POST a RetiredList of
// one namespace's records, at most MaxRetiredBatch and MaxRetiredRequestBytes (written
// durably before the manager deletes the objects; answered with a RetireResult), GET
// ?namespace= (RetiredList), DELETE /{ns}/{id} (the session was brought back).
const APIRetiredPath = "/v1/retired"

// APIArchivedMessagesPath, after a session's path, reads a page of its archived transcript
// (GET, as the messages route reads a live one).
const APIArchivedMessagesPath = "/archived-messages"

// Bounds of the retired records: each field's own, and how many a store keeps (an
// owner and a bound for every size: the record store refuses more, and the manager keeps
// the object then).
const (
	MaxRetiredPerNamespace = 50000
	MaxRetiredTotal        = 100000
	maxRetiredField        = 512
	// MaxRetiredBatch is how many records one write takes (one retention pass's).
	MaxRetiredBatch = 500
	// MaxRetiredRequestBytes bounds the body of one POST of APIRetiredPath; the client cuts
	// a batch into requests under it (a record is at most about 40 KiB encoded).
	MaxRetiredRequestBytes = 1 << 20
)

// ErrFull is returned when a bounded store holds all it may.
var ErrFull = errors.New("transcript: store full")

// RetiredSession is the compact record of an archived session whose AgentSession object the
// SessionPolicy's retention deleted: enough to list it, read its transcript and recreate the
// object (restore) until the store's archived-transcript retention removes both.
type RetiredSession struct {
	Namespace        string `json:"namespace"`
	Name             string `json:"name"`
	SessionID        string `json:"sessionId"`
	Key              string `json:"key"`
	AgentID          string `json:"agentId"`
	Kind             string `json:"kind,omitempty"`
	Channel          string `json:"channel,omitempty"`
	ChatType         string `json:"chatType,omitempty"`
	DisplayName      string `json:"displayName,omitempty"`
	Label            string `json:"label,omitempty"`
	SpawnedBy        string `json:"spawnedBy,omitempty"`
	ParentSessionKey string `json:"parentSessionKey,omitempty"`
	Sandboxed        bool   `json:"sandboxed,omitempty"`
	// Counters as the object's status had them.
	MessageCount int64 `json:"messageCount,omitempty"`
	InputTokens  int64 `json:"inputTokens,omitempty"`
	OutputTokens int64 `json:"outputTokens,omitempty"`
	TotalTokens  int64 `json:"totalTokens,omitempty"`
	// TranscriptPath is where the transcript lived; archived, it carries the store's suffix.
	TranscriptPath string    `json:"transcriptPath,omitempty"`
	CreatedAt      time.Time `json:"createdAt,omitzero"`
	UpdatedAt      time.Time `json:"updatedAt,omitzero"`
	ArchivedAt     time.Time `json:"archivedAt,omitzero"`
	RetiredAt      time.Time `json:"retiredAt,omitzero"`
	// Reason is why it was retired: the age or the count rule.
	Reason string `json:"reason,omitempty"`
}

// RetiredList is the answer to GET APIRetiredPath.
type RetiredList struct {
	Sessions []RetiredSession `json:"sessions"`
}

// Validate refuses a record the store must not keep: unsafe names or fields over their bound.
func (r *RetiredSession) Validate() error {
	if err := ValidName(r.Namespace); err != nil {
		return err
	}
	if err := ValidName(r.SessionID); err != nil {
		return err
	}
	if r.Name == "" || r.Key == "" || r.AgentID == "" {
		return fmt.Errorf("%w: a retired session needs name, key and agentId", ErrInvalid)
	}
	for _, f := range []string{r.Name, r.Key, r.AgentID, r.Kind, r.Channel, r.ChatType, r.DisplayName, r.Label, r.SpawnedBy,
		r.ParentSessionKey, r.TranscriptPath, r.Reason} {
		if len(f) > maxRetiredField {
			return fmt.Errorf("%w: a retired session's field is over %d bytes", ErrInvalid, maxRetiredField)
		}
	}
	return nil
}

// RetireResult answers a POST of APIRetiredPath: the first Retired records of the batch are
// kept; Full, when set, says why the rest are not (a bound of the store, ErrFull).
type RetireResult struct {
	Retired int    `json:"retired"`
	Full    string `json:"full,omitempty"`
}

// ValidateRetiredBatch refuses a batch the store must not take: none, more than
// MaxRetiredBatch, records of more than one namespace, or a record Validate refuses.
func ValidateRetiredBatch(recs []RetiredSession) error {
	if len(recs) == 0 || len(recs) > MaxRetiredBatch {
		return fmt.Errorf("%w: a batch holds 1 to %d retired sessions' records, not %d", ErrInvalid, MaxRetiredBatch, len(recs))
	}
	for i := range recs {
		if recs[i].Namespace != recs[0].Namespace {
			return fmt.Errorf("%w: a batch holds one namespace's records, not %s's and %s's", ErrInvalid, recs[0].Namespace, recs[i].Namespace)
		}
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Retired is what the session tools read of retired sessions: their records, and their
// archived transcripts. The store's client and the sidecar's record store implement it.
type Retired interface {
	RetiredSessions(ctx context.Context, namespace string) ([]RetiredSession, error)
	ReadArchived(ctx context.Context, namespace, sessionID string, opts ReadOptions) (Page, error)
}

// Retirer is what the manager's controllers need: write records before their objects go,
// and drop one once its session is back.
type Retirer interface {
	// Retire keeps one namespace's records (ValidateRetiredBatch) durably, in order, as many
	// as the store's bounds take: recs[:n] are kept, a record of a sessionId already kept
	// replaces it, and n < len(recs) comes with an error (ErrFull at a bound).
	Retire(ctx context.Context, recs ...RetiredSession) (n int, err error)
	RetiredSessions(ctx context.Context, namespace string) ([]RetiredSession, error)
	Unretire(ctx context.Context, namespace, sessionID string) error
}
