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

package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/feed"
)

// Bounds of the index's memory: SQLite's page cache per connection and the connections, and
// the commits queued for the indexer (beyond it a session is caught up from its file).
const (
	cacheKiB     = 8 << 10
	maxConns     = 4
	DefaultQueue = 8192
)

// DefaultLinger is how long the indexer gathers commits into one transaction.
const DefaultLinger = 100 * time.Millisecond

// schemaVersion names the layout; an index of another version is dropped and rebuilt.
const schemaVersion = "1"

// Source is where the index reads transcripts: the store's live sessions and their records.
type Source interface {
	Live() []transcript.SessionHeader
	Read(ctx context.Context, namespace, sessionID string, o transcript.ReadOptions) (transcript.Page, error)
}

// Options configure an Index.
type Options struct {
	// Queue bounds the commits waiting for the indexer (0: DefaultQueue).
	Queue int
	// Linger is how long the indexer gathers commits into one transaction (0:
	// DefaultLinger): how late a message may be found, traded for the indexer's work.
	Linger time.Duration
	Log    logr.Logger
}

// Index is the full-text index of a store's live transcripts.
type Index struct {
	db     *sql.DB
	src    Source
	log    logr.Logger
	linger time.Duration

	feed *feed.Queue
	stop chan struct{}
	done chan struct{}

	closeOnce sync.Once

	mu    sync.Mutex
	ready bool // the catch-up after open has finished
}

type sessionRef = feed.Ref

// Open opens (creating) the index at path. The store is opened next with StoreOptions, then
// Start starts the indexer over it. Close stops it.
func Open(path string, o Options) (*Index, error) {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Linger <= 0 {
		o.Linger = DefaultLinger
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(OFF)", "busy_timeout(10000)",
		fmt.Sprintf("cache_size(-%d)", cacheKiB), "mmap_size(0)", "temp_store(FILE)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	if err := migrate(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	return &Index{db: db, log: o.Log, linger: o.Linger, feed: feed.New(o.Queue, MaxQueueBytes),
		stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Start starts the indexer over src: it first catches the index up with src's files (a
// missing index is built whole), then writes the commits queued since Open. Call it once.
func (ix *Index) Start(src Source) {
	ix.src = src
	go ix.run()
}

// migrate creates the tables, or drops an index of another layout so the catch-up rebuilds it.
// The index holds no text: fts is contentless, and a row id is the session's id in sessions
// shifted left 32 bits plus the message's seq.
func migrate(db *sql.DB) error {
	var v string
	err := db.QueryRow(`SELECT v FROM meta WHERE k='schema'`).Scan(&v)
	if err == nil && v == schemaVersion {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		// No meta table yet: a new index (or one from before meta existed).
		v = ""
	}
	stmts := []string{
		`DROP TABLE IF EXISTS fts`, `DROP TABLE IF EXISTS sessions`, `DROP TABLE IF EXISTS meta`,
		`CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
		`CREATE TABLE sessions(id INTEGER PRIMARY KEY AUTOINCREMENT, ns TEXT NOT NULL, sid TEXT NOT NULL,
			key TEXT NOT NULL, upto INTEGER NOT NULL DEFAULT 0, UNIQUE(ns, sid))`,
		`CREATE VIRTUAL TABLE fts USING fts5(body, content='', contentless_delete=1,
			tokenize='unicode61 remove_diacritics 2')`,
		`INSERT INTO meta(k, v) VALUES('schema', '` + schemaVersion + `')`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// Ready says whether the index has caught up with the files it was opened over; until then
// a search may miss older messages.
func (ix *Index) Ready() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.ready
}

// Close stops the indexer (what is queued is dropped: the next open catches it up) and
// closes the database.
func (ix *Index) Close() error {
	var err error
	ix.closeOnce.Do(func() {
		close(ix.stop)
		if ix.src != nil {
			<-ix.done
		}
		err = ix.db.Close()
	})
	return err
}

// Bytes is the size of the index's pages.
func (ix *Index) Bytes(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := ix.db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, err
	}
	if err := ix.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return 0, err
	}
	return pages * size, nil
}
