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

package transcripttest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/google/uuid"
)

// MemoryStore is an in-memory Store with the FileStore's semantics (seqs, idempotency keys,
// paging, archive), for unit tests and benchmarks of other packages.
type MemoryStore struct {
	mu       sync.Mutex
	sessions map[string]*memSession // namespace/sessionId
	now      func() time.Time
}

type memSession struct {
	header   transcript.SessionHeader
	records  []transcript.Record
	entries  []transcript.IndexEntry
	keys     map[string]int // idempotency key -> index in records
	stats    transcript.Stats
	archived bool
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sessions: map[string]*memSession{}, now: func() time.Time { return time.Now().UTC() }}
}

func (m *MemoryStore) live(ns, id string) (*memSession, error) {
	s, ok := m.sessions[ns+"/"+id]
	if !ok || s.archived {
		return nil, fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, ns, id)
	}
	return s, nil
}

// CreateSession implements Store.
func (m *MemoryStore) CreateSession(_ context.Context, h transcript.SessionHeader) (transcript.Stats, error) {
	if err := transcript.ValidName(h.Namespace); err != nil {
		return transcript.Stats{}, err
	}
	if err := transcript.ValidName(h.SessionID); err != nil {
		return transcript.Stats{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, err := m.live(h.Namespace, h.SessionID); err == nil {
		return s.stats, nil
	}
	if h.CreatedAt.IsZero() {
		h.CreatedAt = m.now()
	}
	s := &memSession{header: h, keys: map[string]int{}, stats: transcript.Stats{UpdatedAt: h.CreatedAt}}
	m.sessions[h.Namespace+"/"+h.SessionID] = s
	return s.stats, nil
}

// Append implements Store.
func (m *MemoryStore) Append(ctx context.Context, namespace, sessionID string, reqs ...transcript.AppendRequest) ([]transcript.Record, error) {
	for i := range reqs {
		if err := reqs[i].ValidateForAppend(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.live(namespace, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]transcript.Record, len(reqs))
	for i, r := range reqs {
		if j, ok := s.keys[r.IdempotencyKey]; ok && r.IdempotencyKey != "" {
			out[i] = s.records[j]
			continue
		}
		rec := transcript.Record{Seq: int64(len(s.records)) + 1, ID: uuid.NewString(), TS: m.now(), IdempotencyKey: r.IdempotencyKey, Message: r.Message}
		if r.IdempotencyKey != "" {
			s.keys[r.IdempotencyKey] = len(s.records)
		}
		s.records = append(s.records, rec)
		s.entries = transcript.AppendEntry(s.entries, rec.Seq, 0, rec.Message.Role)
		s.stats.Add(&rec)
		out[i] = rec
	}
	return out, nil
}

// Read implements Store.
func (m *MemoryStore) Read(_ context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.live(namespace, sessionID)
	if err != nil {
		return transcript.Page{}, err
	}
	picked, page := transcript.SelectPage(s.entries, transcript.ClampLimit(opts.Limit), opts)
	page.Messages = make([]transcript.Record, 0, len(picked))
	for j := len(picked) - 1; j >= 0; j-- {
		page.Messages = append(page.Messages, s.records[picked[j]])
	}
	return page, nil
}

// Stats implements Store.
func (m *MemoryStore) Stats(_ context.Context, namespace, sessionID string) (transcript.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.live(namespace, sessionID)
	if err != nil {
		return transcript.Stats{}, err
	}
	return s.stats, nil
}

// Archive implements Store.
func (m *MemoryStore) Archive(_ context.Context, namespace, sessionID string) error {
	return m.setArchived(namespace, sessionID, true)
}

// Restore implements Store.
func (m *MemoryStore) Restore(_ context.Context, namespace, sessionID string) error {
	return m.setArchived(namespace, sessionID, false)
}

func (m *MemoryStore) setArchived(namespace, sessionID string, archived bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[namespace+"/"+sessionID]
	if !ok {
		return fmt.Errorf("%w: %s/%s", transcript.ErrNotFound, namespace, sessionID)
	}
	s.archived = archived
	return nil
}

// LiveNamespaces implements Store.
func (m *MemoryStore) LiveNamespaces(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.sessions {
		if !s.archived && !slices.Contains(out, s.header.Namespace) {
			out = append(out, s.header.Namespace)
		}
	}
	slices.Sort(out)
	return out, nil
}

// LiveSessionIDs implements Store.
func (m *MemoryStore) LiveSessionIDs(_ context.Context, namespace, after string, limit int) ([]string, error) {
	if err := transcript.ValidName(namespace); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for _, s := range m.sessions {
		if !s.archived && s.header.Namespace == namespace {
			ids = append(ids, s.header.SessionID)
		}
	}
	return transcript.LivePage(ids, after, limit), nil
}
