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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// HistorySource is what the public history API reads; *FileStore implements it.
type HistorySource interface {
	SessionResolver
	Read(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error)
	Subscribe(ctx context.Context, namespace, sessionID string) (*store.Subscription, int64, error)
}

var _ HistorySource = (*store.FileStore)(nil)

// HistoryOptions configure the public history handler.
type HistoryOptions struct {
	Source HistorySource
	// Authorizer judges every request; nil turns authentication off (--insecure-no-auth).
	Authorizer       Authorizer
	DefaultNamespace string
	// KeepAlive is the SSE comment interval (default 15s); Retry the reconnect delay sent to
	// clients (default 3s).
	KeepAlive time.Duration
	Retry     time.Duration
	// ReauthInterval is how often a stream's access is checked again (default 1m);
	// MaxStreamsPerUser bounds the streams one user holds open at once (default 32).
	ReauthInterval    time.Duration
	MaxStreamsPerUser int
	// Streams, when set, counts the streams instead, shared with the other doors
	// (MaxStreamsPerUser is then its bound).
	Streams *userlimits.Streams
	Clock   clock.WithTicker
	Log     logr.Logger
}

// HistoryPattern is where NewHistoryHandler expects to be mounted.
const HistoryPattern = "/sessions/{sessionKey}/history"

// NewHistoryHandler serves GET /sessions/{sessionKey}/history as JSON pages or, with follow=1 or
// Accept: text/event-stream, as Server-Sent Events: one history event, then a message event per
// appended record, with keepalive comments in between.
func NewHistoryHandler(o HistoryOptions) http.Handler {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = 3 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.ReauthInterval <= 0 {
		o.ReauthInterval = time.Minute
	}
	o.MaxStreamsPerUser = maxStreamsOr(o.MaxStreamsPerUser)
	if o.Streams == nil {
		o.Streams = userlimits.NewStreams(o.MaxStreamsPerUser)
	}
	h := &historyHandler{o: o}
	mux := http.NewServeMux()
	mux.Handle(HistoryPattern, h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, transcript.ErrTypeNotFound, "no such endpoint; use GET "+HistoryPattern)
	})
	return mux
}

// DefaultMaxStreamsPerUser bounds one user's open history streams, and its event streams.
const DefaultMaxStreamsPerUser = 32

func maxStreamsOr(n int) int {
	if n <= 0 {
		return DefaultMaxStreamsPerUser
	}
	return n
}

type historyHandler struct {
	o HistoryOptions
}

func (h *historyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	q, err := transcript.ParseHistoryQuery(r.URL.Query(), h.o.DefaultNamespace)
	if err != nil {
		writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, err.Error())
		return
	}
	if q.Namespace == "" {
		writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "namespace is required")
		return
	}
	// The access check names the session. An unknown one is judged by the name its key
	// would have, before the 404, so a caller without access cannot probe which keys exist.
	ref := r.PathValue("sessionKey")
	hdr, rerr := h.o.Source.Resolve(q.Namespace, ref)
	name := sessionkey.ObjectName(ref)
	if rerr == nil {
		name = sessionName(hdr)
	}
	user, ok := h.authorize(w, r, q.Namespace, name)
	if !ok {
		return
	}
	if errors.Is(rerr, transcript.ErrNotFound) {
		// A sessionId is accepted wherever a key is: a ref of a sessionId's form that no
		// session has is a miss (404), as an unknown key is. Only a ref that has neither
		// form is malformed.
		if _, perr := sessionkey.Parse(ref); perr != nil && transcript.ValidName(ref) != nil {
			writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, perr.Error()+", and it is not a sessionId either")
			return
		}
	}
	if rerr != nil {
		writeStoreError(w, rerr)
		return
	}
	if q.Follow || acceptsEventStream(r) {
		release, ok := acquireStream(w, h.o.Streams, user)
		if !ok {
			return
		}
		defer release()
		h.follow(w, r, hdr, q, func() bool { _, err := h.check(r, hdr.Namespace, name); return err == nil })
		return
	}
	page, err := h.o.Source.Read(r.Context(), hdr.Namespace, hdr.SessionID, q.ReadOptions)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, transcript.HistoryResponse{SessionKey: hdr.SessionKey, SessionID: hdr.SessionID, Namespace: hdr.Namespace, Page: page})
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/event-stream") {
			return true
		}
	}
	return false
}

// sessionName is the object name of the session a transcript belongs to.
func sessionName(hdr transcript.SessionHeader) string {
	if hdr.Name != "" {
		return hdr.Name
	}
	return sessionkey.ObjectName(hdr.SessionKey)
}

// check asks the Authorizer about the request's token; with none configured (local runs)
// everyone is one anonymous user.
func (h *historyHandler) check(r *http.Request, namespace, name string) (string, error) {
	return authorizeRead(h.o.Authorizer, r, namespace, name)
}

// authorizeRead asks a (nil: nobody is asked) whether the request's bearer token may read
// the transcript of the session named name ("" for the namespace).
func authorizeRead(a Authorizer, r *http.Request, namespace, name string) (string, error) {
	if a == nil {
		return "", nil
	}
	token, ok := bearerToken(r)
	if !ok {
		return "", errNoToken
	}
	return a.Authorize(r.Context(), token, namespace, name)
}

var errNoToken = fmt.Errorf("%w: a bearer token is required", ErrUnauthenticated)

func (h *historyHandler) authorize(w http.ResponseWriter, r *http.Request, namespace, name string) (string, bool) {
	user, err := h.check(r, namespace, name)
	if err == nil {
		return user, true
	}
	refuseAuth(w, err, h.o.Log)
	return "", false
}

// refuseAuth answers a request whose access check failed: 401, 403, or 503 when the
// authorizer could not decide.
func refuseAuth(w http.ResponseWriter, err error, log logr.Logger) {
	switch {
	case errors.Is(err, ErrUnauthenticated):
		w.Header().Set("WWW-Authenticate", `Bearer realm="transcript-store"`)
		writeError(w, http.StatusUnauthorized, transcript.ErrTypeUnauthorized, err.Error())
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, transcript.ErrTypeForbidden, err.Error())
	case errors.Is(err, userlimits.ErrRateLimited):
		writeError(w, http.StatusTooManyRequests, transcript.ErrTypeTooManyRequests, err.Error())
	default:
		log.Error(err, "authorization check failed")
		writeError(w, http.StatusServiceUnavailable, transcript.ErrTypeUnavailable, "authorization check failed")
	}
}

func bearerToken(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// follow streams the history snapshot and then every appended record. Subscribing before
// reading the snapshot, bounded by the seq the subscription started at, means no record is
// missed or sent twice between the two.
//
// allowed is asked again every ReauthInterval: a stream whose reader lost access (RBAC
// changed, token expired or revoked) ends with an "end" event of reason "forbidden".
func (h *historyHandler) follow(w http.ResponseWriter, r *http.Request, hdr transcript.SessionHeader, q transcript.HistoryQuery, allowed func() bool) {
	ctx := r.Context()
	sub, lastSeq, err := h.o.Source.Subscribe(ctx, hdr.Namespace, hdr.SessionID)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	defer sub.Close()
	opts := q.ReadOptions
	if opts.BeforeSeq == 0 || opts.BeforeSeq > lastSeq+1 {
		opts.BeforeSeq = lastSeq + 1
	}
	page, err := h.o.Source.Read(ctx, hdr.Namespace, hdr.SessionID, opts)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	snapshot, err := json.Marshal(transcript.HistoryResponse{SessionKey: hdr.SessionKey, SessionID: hdr.SessionID, Namespace: hdr.Namespace, Page: page})
	if err != nil {
		writeStoreError(w, err)
		return
	}
	// The keepalive ticker exists before the first byte goes out (tests with a fake clock rely
	// on that).
	ticker := h.o.Clock.NewTicker(h.o.KeepAlive)
	defer ticker.Stop()
	reauth := h.o.Clock.NewTicker(h.o.ReauthInterval)
	defer reauth.Stop()

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	out := sse.NewWriter(w, h.o.Clock)
	buf := &out.Buf
	buf.WriteString("retry: " + strconv.FormatInt(h.o.Retry.Milliseconds(), 10) + "\n\n")
	writeEvent(buf, "history", lastSeq, snapshot)
	if !out.Flush() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			buf.WriteString(": keepalive\n\n")
		case <-reauth.C():
			if !allowed() {
				writeEvent(buf, "end", 0, []byte(`{"reason":"forbidden"}`))
				out.Flush()
				return
			}
			continue
		case events, ok := <-sub.C:
			if !ok {
				reason := "closed"
				if sub.Lagged() {
					reason = "lagged"
				}
				writeEvent(buf, "end", 0, []byte(`{"reason":"`+reason+`"}`))
				out.Flush()
				return
			}
			for _, ev := range events {
				if ev.Tool && !q.IncludeTools {
					continue
				}
				writeEvent(buf, "message", ev.Seq, ev.Data)
			}
			if buf.Len() == 0 {
				continue
			}
		}
		if !out.Flush() {
			return
		}
	}
}

// writeEvent frames one SSE event. data is single-line JSON, so one data: field suffices.
func writeEvent(buf *bytes.Buffer, event string, id int64, data []byte) {
	if id > 0 {
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatInt(id, 10))
		buf.WriteByte('\n')
	}
	buf.WriteString("event: ")
	buf.WriteString(event)
	buf.WriteString("\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}
