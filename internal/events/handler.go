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

package events

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Access is the caller's access, as the transcript-store's authorizer decides it for the
// request's bearer token. Check returns nil when the caller may read the session named
// name in namespace ("" for the namespace as a whole). Fatal tells which errors end the
// stream for every session (the token is no longer accepted) rather than for one.
type Access struct {
	Check func(ctx context.Context, namespace, name string) error
	Fatal func(err error) bool
	// Any is nil when the caller may read some session of namespace; a namespace stream is
	// refused before it opens when it is not. Nil Any opens it for anyone Check
	// authenticates.
	Any func(ctx context.Context, namespace string) error
}

// Options configure the handler.
type Options struct {
	Hub              *Hub
	DefaultNamespace string
	// Resolve finds the session a followed key or sessionId names (see
	// Filter.ResolveSessions); nil follows keys only.
	Resolve func(namespace, ref string) (Followed, bool)
	// Access builds the caller's access from the request; Refuse answers a request whose
	// first check failed (401/403). Nil Access serves everyone (local runs).
	Access func(r *http.Request) Access
	Refuse func(w http.ResponseWriter, err error)
	// Recheck is how long a per-session decision holds (default one minute).
	Recheck time.Duration
	Clock   clock.WithTicker
}

// NewHandler serves GET /events, the streams, and POST /events/{streamId}/subscriptions,
// where a stream's owner changes what it follows (mount it at both /events and /events/).
func NewHandler(o Options) http.Handler {
	if o.Recheck <= 0 {
		o.Recheck = time.Minute
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &handler{o: o}
}

type handler struct {
	o       Options
	streams registry
}

type decision struct {
	ok      bool
	expires time.Time
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/events" && strings.HasPrefix(r.URL.Path, "/events/") {
		h.subscriptions(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, err := ParseFilter(r.URL.Query(), h.o.DefaultNamespace)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	access := Access{Check: func(context.Context, string, string) error { return nil }, Fatal: func(error) bool { return false }}
	if h.o.Access != nil {
		access = h.o.Access(r)
	}
	followed, unknown := f.ResolveSessions(h.o.Resolve)
	if err := admit(r.Context(), f, followed, access); err != nil {
		h.o.Refuse(w, err)
		return
	}
	if unknown != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(transcript.ErrorBody{Error: transcript.ErrorDetail{Type: transcript.ErrTypeNotFound, Message: unknown.Error()}})
		return
	}
	h.stream(w, r, f, followed, access)
}

// admit is the check before a stream opens: a stream of named sessions needs every one of
// them, a namespace stream some session of the namespace (each event is then judged by its
// own). The first check also authenticates the caller.
func admit(ctx context.Context, f Filter, followed []Followed, access Access) error {
	if len(followed) > 0 {
		for _, s := range followed {
			if err := access.Check(ctx, f.Namespace, s.Name); err != nil {
				return err
			}
		}
		return nil
	}
	if access.Any != nil {
		return access.Any(ctx, f.Namespace)
	}
	if err := access.Check(ctx, f.Namespace, ""); err != nil && access.Fatal(err) {
		return err
	}
	return nil
}

func (h *handler) stream(w http.ResponseWriter, r *http.Request, f Filter, followed []Followed, access Access) {
	ctx := r.Context()
	sub := h.o.Hub.Subscribe(r.Header.Get("Last-Event-ID"))
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if http.NewResponseController(w).Flush() != nil {
		return
	}
	out := sse.NewWriter(w, h.o.Clock)
	buf := &out.Buf
	decisions := map[string]decision{}
	// allowed judges one session, cached for Recheck; ended is set when the caller's token
	// is no longer accepted, or a session a stream of sessions follows was revoked (a
	// namespace stream judges each event: a revoked session's events just stop).
	ended := false
	allowed := func(e Event) bool {
		now := h.o.Clock.Now()
		if d, ok := decisions[e.Name]; ok && now.Before(d.expires) {
			return d.ok
		}
		err := access.Check(ctx, e.Namespace, e.Name)
		if err != nil && (access.Fatal(err) || !f.Whole) {
			ended = true
		}
		decisions[e.Name] = decision{ok: err == nil, expires: now.Add(h.o.Recheck)}
		return err == nil
	}
	send := func(e Event) bool {
		if !f.Match(e) || !allowed(e) {
			return !ended
		}
		id := ""
		if e.ID != 0 { // live-only events (session.delta) keep the client's resume point
			id = h.o.Hub.FormatID(e.ID)
		}
		writeEvent(buf, id, e.Kind, e.Data)
		return true
	}
	live := &liveStream{owner: ownerOf(r), namespace: f.Namespace, changes: make(chan change), done: make(chan struct{})}
	streamID, unregister := h.streams.add(live)
	defer unregister()
	info, _ := json.Marshal(StreamInfo{StreamID: streamID, Subscriptions: subscriptionsPath(streamID),
		Namespace: f.Namespace, Kinds: f.Kinds, Sessions: slices.Clone(f.Sessions), Whole: f.Whole})
	writeEvent(buf, "", KindStream, info)
	if sub.Reset {
		writeEvent(buf, "", KindReset, []byte(`{"reason":"gap older than the log"}`))
	}
	for _, e := range sub.Backlog {
		if !send(e) {
			break
		}
	}
	if !ended && !out.Flush() {
		return
	}
	tick := h.o.Clock.NewTicker(h.o.Recheck)
	defer tick.Stop()
	for !ended {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-sub.C:
			if !ok {
				// Cut off for lagging: the client resumes from the log with Last-Event-ID.
				return
			}
			if !send(e) {
				ended = true
			}
		case c := <-live.changes:
			// The owner's subscriptions request, judged already: it applies from the next event.
			var err error
			followed, err = c.apply(&f, followed)
			c.reply <- changeResult{sessions: slices.Clone(f.Sessions), err: err}
			continue
		case <-tick.C():
			// Re-judge the followed sessions even when nothing happens in them.
			clear(decisions)
			for _, s := range followed {
				if !allowed(Event{Namespace: f.Namespace, Name: s.Name}) && !f.Whole {
					ended = true
				}
			}
			buf.WriteString(": keepalive\n\n")
		}
		if !ended && !out.Flush() {
			return
		}
	}
	buf.Reset()
	writeEvent(buf, "", "end", []byte(`{"reason":"forbidden"}`))
	out.Flush()
}

// writeEvent frames one SSE event; data is single-line JSON.
func writeEvent(buf *bytes.Buffer, id, kind string, data []byte) {
	if id != "" {
		buf.WriteString("id: " + id + "\n")
	}
	buf.WriteString("event: " + kind + "\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}
