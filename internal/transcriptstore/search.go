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
	"strconv"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SearchOptions configure the public search handler.
type SearchOptions struct {
	Index transcript.Searcher
	// Sessions lists the namespace's sessions, to find those a caller without the
	// namespace-wide grant may read (nil: only a namespace-wide grant searches).
	Sessions client.Reader
	// Authorizer judges every request; nil turns authentication off (--insecure-no-auth).
	Authorizer       Authorizer
	DefaultNamespace string
	Log              logr.Logger
}

// NewSearchHandler serves GET /search?namespace=&q=&limit=&offset=: the hits of the
// namespace's transcripts the caller may read (get agentsessions/transcript), best first.
// What the caller may read is settled before the index is asked, so the hits, nextOffset
// and the time an answer takes are all of readable transcripts: a caller with the
// namespace-wide right searches the namespace; one without it is refused as /events
// refuses it when it may read no session (403, before any search), and otherwise searches
// the sessions it may read among the namespace's sessiontools.MaxSearchScan most recently
// updated.
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
		if q.SessionIDs, err = readableIDs(r, o, q.Namespace); err != nil {
			refuseAuth(w, err, o.Log)
			return
		}
		res, err := o.Index.Search(r.Context(), q)
		if err != nil {
			writeStoreError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// readableIDs are the sessionIds a search by r's caller covers in namespace: nil (all) for
// the namespace-wide grant, else those it may read one by one; an error wrapping
// ErrForbidden when it may read none, as /events says it (readsAny).
func readableIDs(r *http.Request, o SearchOptions, namespace string) ([]string, error) {
	check := func(_ context.Context, namespace, name string) error {
		_, err := authorizeRead(o.Authorizer, r, namespace, name)
		return err
	}
	ctx := r.Context()
	if err := readsAny(ctx, check, o.Sessions, namespace); err != nil {
		return nil, err
	}
	if check(ctx, namespace, "") == nil {
		return nil, nil
	}
	var lerr error
	ids, err := sessiontools.ReadableSessionIDs(func(yield func(*sessionsv1alpha1.AgentSession) bool) {
		lerr = newest(ctx, o.Sessions, namespace, yield)
	}, func(name string) (bool, error) {
		err := check(ctx, namespace, name)
		if err != nil && !errors.Is(err, ErrForbidden) {
			return false, err
		}
		return err == nil, nil
	})
	return ids, errors.Join(err, lerr)
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
