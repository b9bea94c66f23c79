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
	"errors"
	"net/http"
	"strconv"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SearchOptions configure the public search handler.
type SearchOptions struct {
	Index transcript.Searcher
	// Resolve names a hit's session for the per-session access check.
	Resolve SessionResolver
	// Authorizer judges every request; nil turns authentication off (--insecure-no-auth).
	Authorizer       Authorizer
	DefaultNamespace string
	Log              logr.Logger
}

// NewSearchHandler serves GET /search?namespace=&q=&limit=&offset=: the hits of the
// namespace's transcripts the caller may read (get agentsessions/transcript), best first. A
// caller with the namespace-wide right is asked once; otherwise each hit's session is asked,
// and the hits of sessions the caller may not read are left out.
func NewSearchHandler(o SearchOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		q, err := parseSearchQuery(r, o.DefaultNamespace)
		if err != nil {
			writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
			return
		}
		_, werr := authorizeRead(o.Authorizer, r, q.Namespace, "")
		wide := werr == nil
		if !wide && !errors.Is(werr, ErrForbidden) {
			refuseAuth(w, werr, o.Log)
			return
		}
		res, err := o.Index.Search(r.Context(), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		if !wide {
			res.Hits = readable(res.Hits, func(sessionID string) bool {
				hdr, err := o.Resolve.Resolve(q.Namespace, sessionID)
				if err != nil {
					return false
				}
				_, err = authorizeRead(o.Authorizer, r, q.Namespace, sessionName(hdr))
				return err == nil
			})
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// readable keeps the hits of sessions may allows, asking once per session.
func readable(hits []transcript.SearchHit, may func(sessionID string) bool) []transcript.SearchHit {
	asked := map[string]bool{}
	out := make([]transcript.SearchHit, 0, len(hits))
	for _, h := range hits {
		ok, seen := asked[h.SessionID]
		if !seen {
			ok = may(h.SessionID)
			asked[h.SessionID] = ok
		}
		if ok {
			out = append(out, h)
		}
	}
	return out
}

// parseSearchQuery reads namespace, q, limit and offset.
func parseSearchQuery(r *http.Request, defaultNamespace string) (transcript.SearchQuery, error) {
	v := r.URL.Query()
	q := transcript.SearchQuery{Namespace: v.Get("namespace"), Text: v.Get("q")}
	if q.Namespace == "" {
		q.Namespace = defaultNamespace
	}
	if q.Namespace == "" {
		return q, errors.New("namespace is required")
	}
	if err := transcript.ValidName(q.Namespace); err != nil {
		return q, err
	}
	if q.Text == "" {
		return q, errors.New("q is required")
	}
	for name, dst := range map[string]*int{"limit": &q.Limit, "offset": &q.Offset} {
		s := v.Get(name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, errors.New("invalid " + name + " " + strconv.Quote(s))
		}
		*dst = n
	}
	return q, nil
}
