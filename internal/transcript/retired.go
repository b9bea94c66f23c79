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
	"net/url"
	"strconv"
	"strings"
	"time"
)

// APIRetiredPath is the internal API of retired sessions' records: POST a RetiredSession
// (written durably before the manager deletes the object), GET ?namespace= (RetiredList),
// DELETE /{ns}/{id} (the session was brought back).
const APIRetiredPath = "/v1/retired"

// APIArchivedMessagesPath, after a session's path, reads a page of its archived transcript
// (GET, as the messages route reads a live one).
const APIArchivedMessagesPath = "/archived-messages"

// Bounds of the retired records: each field's own, and how many a store keeps (an
// owner and a bound for every size: the record store refuses more, and the manager keeps
// the object then). A record lives until the archived-transcript retention (30 days by
// default), so a million sessions a year keep about 82,000 at a time. The records stay on
// disk and the store's memory holds an index of about 130 bytes a record: 500,000 are
// about 62 MiB of a store Pod's heap (256Mi limit), and two shards hold a million.
// A namespace's bound keeps one namespace from taking the whole store, and bounds the log
// a search of its records reads (about 75 MB at 100,000).
const (
	MaxRetiredPerNamespace = 100000
	MaxRetiredTotal        = 500000
	maxRetiredField        = 512
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

// MaxRetiredPage bounds a page of records (RetiredQuery.Limit) the store answers.
const MaxRetiredPage = 5000

// RetiredQuery narrows what RetiredSessions returns; the zero query is every record of the
// namespace, the latest retired first.
type RetiredQuery struct {
	// Ref keeps the records whose sessionId, key or object name it is.
	Ref string
	// Search keeps the records whose key, label or display name contains it, ignoring case
	// (sessions_list's search).
	Search string
	// Limit, when above zero, asks for a page of at most Limit records (MaxRetiredPage at
	// most) in sessions_list's order, the most recently updated first (ListedAt, then the
	// sessionId), from after the cursor After (a record's Cursor; empty: from the first).
	Limit int
	After string
}

// Values are q as GET APIRetiredPath's query parameters (ref, search, limit, after).
func (q *RetiredQuery) Values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"ref": q.Ref, "search": q.Search, "after": q.After} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// ParseRetiredQuery reads a query back from its Values; the fields are bounded as a
// record's are, and a limit is clamped to MaxRetiredPage.
func ParseRetiredQuery(v url.Values) (RetiredQuery, error) {
	q := RetiredQuery{Ref: v.Get("ref"), Search: v.Get("search"), After: v.Get("after")}
	if len(q.Ref) > maxRetiredField || len(q.Search) > maxRetiredField || len(q.After) > 2*maxRetiredField {
		return RetiredQuery{}, fmt.Errorf("%w: a retired records' query field is over %d bytes", ErrInvalid, maxRetiredField)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return RetiredQuery{}, fmt.Errorf("%w: limit %q is not a count", ErrInvalid, s)
		}
		q.Limit = min(n, MaxRetiredPage)
	}
	if q.After != "" {
		if _, _, err := ParseRetiredCursor(q.After); err != nil {
			return RetiredQuery{}, err
		}
	}
	return q, nil
}

// ListedAt is when the retired session last changed, in Unix milliseconds, as sessions_list
// orders its rows: its transcript's last append, else its creation.
func (r *RetiredSession) ListedAt() int64 {
	if !r.UpdatedAt.IsZero() {
		return r.UpdatedAt.UnixMilli()
	}
	return r.CreatedAt.UnixMilli()
}

// Cursor is where the next page after r starts (RetiredQuery.After).
func (r *RetiredSession) Cursor() string {
	return strconv.FormatInt(r.ListedAt(), 10) + "/" + r.SessionID
}

// ParseRetiredCursor reads a Cursor back: the listed-at time and sessionId it is after.
func ParseRetiredCursor(c string) (listedAt int64, sessionID string, err error) {
	at, id, ok := strings.Cut(c, "/")
	if ok {
		listedAt, err = strconv.ParseInt(at, 10, 64)
	}
	if !ok || err != nil || ValidName(id) != nil {
		return 0, "", fmt.Errorf("%w: %q is not a retired records' cursor", ErrInvalid, c)
	}
	return listedAt, id, nil
}

// Matches says whether q keeps r (its Ref and Search; not its page).
func (q *RetiredQuery) Matches(r *RetiredSession) bool {
	if q.Ref != "" && q.Ref != r.SessionID && q.Ref != r.Key && q.Ref != r.Name {
		return false
	}
	return MatchesSearch(q.Search, r.Key, r.Label, r.DisplayName)
}

// MatchesSearch is sessions_list's search: an empty search keeps all; else one of fields
// (a session's key, label and display name) contains it, ignoring case.
func MatchesSearch(search string, fields ...string) bool {
	if search == "" {
		return true
	}
	q := strings.ToLower(search)
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
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

// Retired is what the session tools read of retired sessions: their records, and their
// archived transcripts. The store's client and the sidecar's record store implement it.
type Retired interface {
	RetiredSessions(ctx context.Context, namespace string, q RetiredQuery) ([]RetiredSession, error)
	ReadArchived(ctx context.Context, namespace, sessionID string, opts ReadOptions) (Page, error)
}

// Retirer is what the manager's controllers need: write a record before an object goes,
// and drop it once the session is back.
type Retirer interface {
	Retire(ctx context.Context, r RetiredSession) error
	RetiredSessions(ctx context.Context, namespace string, q RetiredQuery) ([]RetiredSession, error)
	Unretire(ctx context.Context, namespace, sessionID string) error
}
