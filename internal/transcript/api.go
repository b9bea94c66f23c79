package transcript

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// Internal API paths, served on the unix socket shared with the manager.
const (
	apiSessions = "/v1/sessions"
	maxBodySize = 32 << 20
)

// AppendBody is the internal API's append request and response.
type AppendBody struct {
	Messages []AppendRequest `json:"messages,omitempty"`
	Records  []Record        `json:"records,omitempty"`
}

// NewAPIHandler serves the internal API over store:
//
//	POST /v1/sessions                         create (SessionHeader -> Stats)
//	POST /v1/sessions/{ns}/{id}/messages      append ({"messages":[...]} -> {"records":[...]})
//	GET  /v1/sessions/{ns}/{id}/messages      read (?limit=&cursor=&includeTools=1 -> Page)
//	GET  /v1/sessions/{ns}/{id}/stats         stats
//	POST /v1/sessions/{ns}/{id}/archive       archive (204)
func NewAPIHandler(store Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+apiSessions, func(w http.ResponseWriter, r *http.Request) {
		var h SessionHeader
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
	mux.HandleFunc("POST "+apiSessions+"/{ns}/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		var body AppendBody
		if !decodeBody(w, r, &body) {
			return
		}
		recs, err := store.Append(r.Context(), r.PathValue("ns"), r.PathValue("id"), body.Messages...)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, AppendBody{Records: recs})
	})
	mux.HandleFunc("GET "+apiSessions+"/{ns}/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		q, err := ParseHistoryQuery(r.URL.Query(), "")
		if err != nil {
			writeError(w, http.StatusBadRequest, ErrTypeInvalidRequest, err.Error())
			return
		}
		page, err := store.Read(r.Context(), r.PathValue("ns"), r.PathValue("id"), q.ReadOptions)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, page)
	})
	mux.HandleFunc("GET "+apiSessions+"/{ns}/{id}/stats", func(w http.ResponseWriter, r *http.Request) {
		stats, err := store.Stats(r.Context(), r.PathValue("ns"), r.PathValue("id"))
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, stats)
	})
	mux.HandleFunc("POST "+apiSessions+"/{ns}/{id}/archive", func(w http.ResponseWriter, r *http.Request) {
		if err := store.Archive(r.Context(), r.PathValue("ns"), r.PathValue("id")); err != nil {
			writeStoreError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err == nil && len(b) > maxBodySize {
		writeError(w, http.StatusRequestEntityTooLarge, ErrTypeInvalidRequest, "body larger than "+strconv.Itoa(maxBodySize)+" bytes")
		return false
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, ErrTypeInvalidRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}
