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
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// OpenRetiredStore opens the retired sessions' records beside the transcripts in dataDir.
func OpenRetiredStore(dataDir string) (*store.RetiredStore, error) {
	return store.OpenRetiredStore(filepath.Join(dataDir, store.RetiredDir))
}

// RetiredRecords is the sidecar's transcript.Retired: the records of retired sessions and
// their archived transcripts, read in place.
type RetiredRecords struct {
	Records *store.RetiredStore
	Files   *store.FileStore
}

var _ transcript.Retired = RetiredRecords{}

// RetiredSessions implements transcript.Retired.
func (r RetiredRecords) RetiredSessions(ctx context.Context, namespace string, q transcript.RetiredQuery) ([]transcript.RetiredSession, error) {
	return r.Records.RetiredSessions(ctx, namespace, q)
}

// ReadArchived implements transcript.Retired.
func (r RetiredRecords) ReadArchived(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	return r.Files.ReadArchived(ctx, namespace, sessionID, opts)
}

// retiredAPI serves the manager's retired records on the internal listener: a record is
// written (durably) before the manager deletes the object, listed for the session tools it
// runs, and dropped once the session is back; archived transcripts read as live ones do.
func retiredAPI(mux *http.ServeMux, r RetiredRecords) {
	mux.HandleFunc("POST "+transcript.APIRetiredPath, func(w http.ResponseWriter, req *http.Request) {
		var rec transcript.RetiredSession
		if !decodeLimited(w, req, &rec, 64<<10) {
			return
		}
		if err := r.Records.Retire(req.Context(), rec); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+transcript.APIRetiredPath, func(w http.ResponseWriter, req *http.Request) {
		q, err := transcript.ParseRetiredQuery(req.URL.Query())
		if err != nil {
			writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
			return
		}
		recs, err := r.RetiredSessions(req.Context(), req.URL.Query().Get("namespace"), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, transcript.RetiredList{Sessions: recs})
	})
	mux.HandleFunc("DELETE "+transcript.APIRetiredPath+"/{ns}/{id}", func(w http.ResponseWriter, req *http.Request) {
		if err := r.Records.Unretire(req.Context(), req.PathValue("ns"), req.PathValue("id")); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+transcript.APISessionsPath+"/{ns}/{id}"+transcript.APIArchivedMessagesPath, func(w http.ResponseWriter, req *http.Request) {
		q, err := transcript.ParseHistoryQuery(req.URL.Query(), "")
		if err != nil {
			writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
			return
		}
		page, err := r.ReadArchived(req.Context(), req.PathValue("ns"), req.PathValue("id"), q.ReadOptions)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, page)
	})
}

// ArchivePruner prunes archived transcripts and, with the same cutoff, the records of
// retired sessions: a record goes with its transcript.
type ArchivePruner struct {
	Files   *store.FileStore
	Records *store.RetiredStore
	Clock   clock.PassiveClock
}

// PruneArchived implements pruner.
func (p ArchivePruner) PruneArchived(retention time.Duration) (int, error) {
	n, err := p.Files.PruneArchived(retention)
	_, rerr := p.Records.Prune(p.Clock.Now().Add(-retention))
	return n, errors.Join(err, rerr)
}
