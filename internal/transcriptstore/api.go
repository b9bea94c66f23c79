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
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// maxBodySize bounds one internal API request body: an append of one turn's messages, each
// reply capped at provider.MaxOutputText, fits many times over.
const maxBodySize = 8 << 20

// NewAPIHandler serves the internal API over store:
//
//	POST /v1/sessions                         create (SessionHeader -> Stats)
//	POST /v1/sessions/{ns}/{id}/messages      append ({"messages":[...]} -> {"records":[...]})
//	GET  /v1/sessions/{ns}/{id}/messages      read (?limit=&cursor=&includeTools=1 -> Page)
//	GET  /v1/sessions/{ns}/{id}/stats         stats
//	POST /v1/sessions/{ns}/{id}/archive       archive (204)
//	POST /v1/sessions/{ns}/{id}/restore       restore an archived transcript (204; 404 when it is gone)
//	GET  /v1/live?namespace=&after=&limit=    a page of a namespace's live sessionIds; no namespace: the namespaces
//	POST /v1/search                           search (SearchQuery -> SearchResult; 503 without an index)
//	POST /v1/sessions/{ns}/{id}/delta         publish a live reply piece on hub, unstored (204)
//	POST /v1/changes/sends                    publish the manager's SessionSend changes on hub (204)
//
// hub nil drops the pieces.
func NewAPIHandler(store transcript.Store, index transcript.Searcher, hub *events.Hub) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+transcript.APISearchPath, func(w http.ResponseWriter, r *http.Request) {
		var q transcript.SearchQuery
		if !decodeBody(w, r, &q) {
			return
		}
		if index == nil {
			writeError(w, http.StatusServiceUnavailable, transcript.ErrTypeUnavailable, "this transcript-store keeps no search index")
			return
		}
		res, err := index.Search(r.Context(), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST "+transcript.APISessionsPath, func(w http.ResponseWriter, r *http.Request) {
		var h transcript.SessionHeader
		if !decodeBody(w, r, &h) {
			return
		}
		stats, err := store.CreateSession(r.Context(), h)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, stats)
	})
	mux.HandleFunc("POST "+transcript.APISessionsPath+"/{ns}/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		var body transcript.AppendBody
		if !decodeBody(w, r, &body) {
			return
		}
		recs, err := store.Append(r.Context(), r.PathValue("ns"), r.PathValue("id"), body.Messages...)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, transcript.AppendBody{Records: recs})
	})
	mux.HandleFunc("GET "+transcript.APISessionsPath+"/{ns}/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		q, err := transcript.ParseHistoryQuery(r.URL.Query(), "")
		if err != nil {
			writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
			return
		}
		page, err := store.Read(r.Context(), r.PathValue("ns"), r.PathValue("id"), q.ReadOptions)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, page)
	})
	mux.HandleFunc("GET "+transcript.APISessionsPath+"/{ns}/{id}/stats", func(w http.ResponseWriter, r *http.Request) {
		stats, err := store.Stats(r.Context(), r.PathValue("ns"), r.PathValue("id"))
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, stats)
	})
	mux.HandleFunc("POST "+transcript.APISessionsPath+"/{ns}/{id}/archive", func(w http.ResponseWriter, r *http.Request) {
		if err := store.Archive(r.Context(), r.PathValue("ns"), r.PathValue("id")); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+transcript.APISessionsPath+"/{ns}/{id}/restore", func(w http.ResponseWriter, r *http.Request) {
		if err := store.Restore(r.Context(), r.PathValue("ns"), r.PathValue("id")); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+transcript.APILivePath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var l transcript.LiveList
		var err error
		if ns := q.Get("namespace"); ns == "" {
			l.Namespaces, err = store.LiveNamespaces(r.Context())
		} else {
			limit, _ := strconv.Atoi(q.Get("limit")) // not a number: the default page
			l.SessionIDs, err = store.LiveSessionIDs(r.Context(), ns, q.Get("after"), limit)
		}
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, l)
	})
	mux.Handle("POST "+transcript.APISessionsPath+"/{ns}/{id}"+transcript.APIDeltaPath, deltaHandler(store, hub))
	mux.Handle("POST "+transcript.APISendChangesPath, sendChangesHandler(hub))
	return mux
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeLimited(w, r, v, maxBodySize)
}

// decodeLimited reads a JSON body of at most limit bytes into v, or answers the error.
func decodeLimited(w http.ResponseWriter, r *http.Request, v any, limit int) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err == nil && len(b) > limit {
		writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest, "body larger than "+strconv.Itoa(limit)+" bytes")
		return false
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

// InternalAPI is the internal listener's API: the manager's appends, reads and searches
// (NewAPIHandler), the hook keys it hands over and the hook deliveries it collects, and
// the records of the sessions its retention retires (retired.go).
func InternalAPI(st transcript.Store, index transcript.Searcher, hub *events.Hub, keys *HookKeyring, recall transcript.Recaller,
	retired RetiredRecords) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", NewAPIHandler(st, index, hub))
	retiredAPI(mux, retired)
	if recall != nil {
		memoryAPI(mux, recall)
	}
	mux.Handle("PUT "+transcript.APIHookKeysPath, hookKeysHandler(keys))
	mux.Handle("GET "+transcript.APIHookDeliveriesPath, hookDeliveriesHandler(keys))
	mux.Handle("POST "+transcript.APIHookDeliveriesPath, hookDeliveriesHandler(keys))
	return mux
}
