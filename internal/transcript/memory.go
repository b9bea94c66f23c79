package transcript

import (
	"context"
	"fmt"
	"sync"
	"time"

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
	header   SessionHeader
	records  []Record
	entries  []indexEntry
	keys     map[string]int // idempotency key -> index in records
	stats    Stats
	archived bool
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{sessions: map[string]*memSession{}, now: func() time.Time { return time.Now().UTC() }}
}

func (m *MemoryStore) live(ns, id string) (*memSession, error) {
	s, ok := m.sessions[ns+"/"+id]
	if !ok || s.archived {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, ns, id)
	}
	return s, nil
}

// CreateSession implements Store.
func (m *MemoryStore) CreateSession(_ context.Context, h SessionHeader) (Stats, error) {
	if err := validName(h.Namespace); err != nil {
		return Stats{}, err
	}
	if err := validName(h.SessionID); err != nil {
		return Stats{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, err := m.live(h.Namespace, h.SessionID); err == nil {
		return s.stats, nil
	}
	if h.CreatedAt.IsZero() {
		h.CreatedAt = m.now()
	}
	s := &memSession{header: h, keys: map[string]int{}, stats: Stats{UpdatedAt: h.CreatedAt}}
	m.sessions[h.Namespace+"/"+h.SessionID] = s
	return s.stats, nil
}

// Append implements Store.
func (m *MemoryStore) Append(ctx context.Context, namespace, sessionID string, reqs ...AppendRequest) ([]Record, error) {
	for i := range reqs {
		if err := reqs[i].validateForAppend(); err != nil {
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
	out := make([]Record, len(reqs))
	for i, r := range reqs {
		if j, ok := s.keys[r.IdempotencyKey]; ok && r.IdempotencyKey != "" {
			out[i] = s.records[j]
			continue
		}
		rec := Record{Seq: int64(len(s.records)) + 1, ID: uuid.NewString(), TS: m.now(), IdempotencyKey: r.IdempotencyKey, Message: r.Message}
		if r.IdempotencyKey != "" {
			s.keys[r.IdempotencyKey] = len(s.records)
		}
		s.records = append(s.records, rec)
		s.entries = appendEntry(s.entries, rec.Seq, 0, rec.Message.Role)
		s.stats.add(&rec)
		out[i] = rec
	}
	return out, nil
}

// Read implements Store.
func (m *MemoryStore) Read(_ context.Context, namespace, sessionID string, opts ReadOptions) (Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.live(namespace, sessionID)
	if err != nil {
		return Page{}, err
	}
	picked, page := selectPage(s.entries, ClampLimit(opts.Limit), opts)
	page.Messages = make([]Record, 0, len(picked))
	for j := len(picked) - 1; j >= 0; j-- {
		page.Messages = append(page.Messages, s.records[picked[j]])
	}
	return page, nil
}

// Stats implements Store.
func (m *MemoryStore) Stats(_ context.Context, namespace, sessionID string) (Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.live(namespace, sessionID)
	if err != nil {
		return Stats{}, err
	}
	return s.stats, nil
}

// Archive implements Store.
func (m *MemoryStore) Archive(_ context.Context, namespace, sessionID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[namespace+"/"+sessionID]
	if !ok {
		return fmt.Errorf("%w: %s/%s", ErrNotFound, namespace, sessionID)
	}
	s.archived = true
	return nil
}
