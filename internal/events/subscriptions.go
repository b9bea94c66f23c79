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
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// KindStream is a stream's first event: its id, and where its owner changes what it follows.
const KindStream = "stream"

// StreamInfo is the data of a stream's first event.
type StreamInfo struct {
	StreamID string `json:"streamId"`
	// Subscriptions is the path its owner POSTs to: {"subscribe": [...], "unsubscribe": [...]}.
	Subscriptions string   `json:"subscriptions"`
	Namespace     string   `json:"namespace"`
	Kinds         []string `json:"kinds"`
	// Sessions are the followed sessions (a stream of sessions) or the targeted transcript
	// subscriptions (a namespace stream), as keys.
	Sessions []string `json:"sessions"`
	// Whole: the stream carries its kinds for every session of the namespace.
	Whole bool `json:"whole"`
}

// SubscriptionsRequest is the body of POST /events/{streamId}/subscriptions: sessions (keys
// or sessionIds) to add and to remove.
type SubscriptionsRequest struct {
	Subscribe   []string `json:"subscribe,omitempty"`
	Unsubscribe []string `json:"unsubscribe,omitempty"`
}

// SubscriptionsResponse is the stream's followed sessions after a change.
type SubscriptionsResponse struct {
	StreamID string   `json:"streamId"`
	Sessions []string `json:"sessions"`
}

// maxSubscriptionsBody bounds the body of a subscriptions request: 2 x maxSessions refs.
const maxSubscriptionsBody = 64 << 10

// change is one subscriptions request, applied by the stream's own goroutine.
type change struct {
	add    []Followed
	remove []string
	reply  chan changeResult
}

type changeResult struct {
	sessions []string
	err      error
}

// errTooManySessions: a subscribe would take a stream over maxSessions.
var errTooManySessions = errors.New("too many sessions")

// liveStream is an open stream as the registry knows it.
type liveStream struct {
	owner     [32]byte
	namespace string
	changes   chan change
	done      chan struct{}
}

// registry holds the open streams by id.
type registry struct {
	mu      sync.Mutex
	streams map[string]*liveStream
}

// add registers a stream opened by owner and returns its id and its remove function.
func (g *registry) add(s *liveStream) (string, func()) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on the supported platforms
	id := hex.EncodeToString(b[:])
	g.mu.Lock()
	if g.streams == nil {
		g.streams = map[string]*liveStream{}
	}
	g.streams[id] = s
	g.mu.Unlock()
	return id, func() {
		g.mu.Lock()
		delete(g.streams, id)
		g.mu.Unlock()
		close(s.done)
	}
}

// get is the stream id names when owner opened it; another caller's stream is none.
func (g *registry) get(id string, owner [32]byte) *liveStream {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.streams[id]
	if s == nil || s.owner != owner {
		return nil
	}
	return s
}

// ownerOf is who opened a stream: its credential, so only the same bearer changes it.
func ownerOf(r *http.Request) [32]byte {
	return sha256.Sum256([]byte("events-owner/" + r.Header.Get("Authorization")))
}

// subscriptionsPath is the path of a stream's subscriptions.
func subscriptionsPath(id string) string { return "/events/" + id + "/subscriptions" }

// streamIDOf is the id in /events/{streamId}/subscriptions, or "".
func streamIDOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/events/")
	if !ok {
		return ""
	}
	id, ok := strings.CutSuffix(rest, "/subscriptions")
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

// subscriptions serves POST /events/{streamId}/subscriptions: the stream's owner adds and
// removes followed sessions while it runs. Each added session is judged by the access layer
// as session= is when a stream opens; another caller's stream, or one that ended, is 404.
func (h *handler) subscriptions(w http.ResponseWriter, r *http.Request) {
	id := streamIDOf(r.URL.Path)
	if id == "" {
		writeNotFound(w, "no such path: POST /events/{streamId}/subscriptions")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s := h.streams.get(id, ownerOf(r))
	if s == nil || (r.URL.Query().Get("namespace") != "" && r.URL.Query().Get("namespace") != s.namespace) {
		writeNotFound(w, fmt.Sprintf("stream %q not found: it ended, or another caller opened it", id))
		return
	}
	req, err := decodeSubscriptions(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f := Filter{Namespace: s.namespace, Sessions: req.Subscribe}
	add, unknown := f.ResolveSessions(h.o.Resolve)
	if h.o.Access != nil && len(add) > 0 {
		if err := admit(r.Context(), f, add, h.o.Access(r)); err != nil {
			h.o.Refuse(w, err)
			return
		}
	}
	if unknown != nil {
		writeNotFound(w, unknown.Error())
		return
	}
	gone := Filter{Namespace: s.namespace, Sessions: req.Unsubscribe}
	_, _ = gone.ResolveSessions(h.o.Resolve) // an unknown one is simply not followed
	c := change{add: add, remove: gone.Sessions, reply: make(chan changeResult, 1)}
	var res changeResult
	select {
	case s.changes <- c:
		res = <-c.reply
	case <-s.done:
		writeNotFound(w, fmt.Sprintf("stream %q ended", id))
		return
	case <-r.Context().Done():
		return
	}
	if res.err != nil {
		http.Error(w, res.err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(SubscriptionsResponse{StreamID: id, Sessions: res.sessions})
}

// decodeSubscriptions reads a bounded subscriptions body.
func decodeSubscriptions(w http.ResponseWriter, r *http.Request) (SubscriptionsRequest, error) {
	var req SubscriptionsRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSubscriptionsBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("want {\"subscribe\": [...], \"unsubscribe\": [...]} of session keys or sessionIds: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, errors.New("want one JSON object")
	}
	if len(req.Subscribe) == 0 && len(req.Unsubscribe) == 0 {
		return req, errors.New("nothing to change: give subscribe or unsubscribe")
	}
	if len(req.Subscribe) > maxSessions || len(req.Unsubscribe) > maxSessions {
		return req, fmt.Errorf("one stream follows %d sessions at most", maxSessions)
	}
	for _, ref := range slices.Concat(req.Subscribe, req.Unsubscribe) {
		if ref == "" {
			return req, errors.New("a session is empty: give a session key or a sessionId")
		}
	}
	return req, nil
}

// apply changes the followed sessions; over maxSessions nothing changes.
func (c change) apply(f *Filter, followed []Followed) ([]Followed, error) {
	out := slices.DeleteFunc(slices.Clone(followed), func(s Followed) bool { return slices.Contains(c.remove, s.Key) })
	for _, s := range c.add {
		if !slices.ContainsFunc(out, func(o Followed) bool { return o.Key == s.Key }) {
			out = append(out, s)
		}
	}
	if len(out) > maxSessions {
		return followed, fmt.Errorf("%w: one stream follows %d at most", errTooManySessions, maxSessions)
	}
	f.Sessions = f.Sessions[:0]
	for _, s := range out {
		f.Sessions = append(f.Sessions, s.Key)
	}
	return out, nil
}

func writeNotFound(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(transcript.ErrorBody{Error: transcript.ErrorDetail{Type: transcript.ErrTypeNotFound, Message: msg}})
}
