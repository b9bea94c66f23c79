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
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// Filter is what one subscriber asked for: a namespace, optionally some sessions, and the
// kinds it wants (DefaultKinds unless it names others).
type Filter struct {
	Namespace string
	// Sessions are the followed sessions as asked (keys or sessionIds) until ResolveSessions
	// turns them into keys. A stream of sessions (Whole false) carries its kinds for these
	// alone; a namespace stream carries its kinds for every session, and session.message and
	// session.delta for these too when its kinds leave them out (the targeted transcript
	// subscriptions its owner adds while it runs).
	Sessions []string
	Kinds    []string
	// Whole: the stream was opened without session= and follows the namespace.
	Whole bool
}

// DefaultKinds are the kinds a stream carries when it names none: sessions.changed,
// session.message and session.delta. sends.changed, runs.changed and approvals.changed are
// asked for with kinds=.
var DefaultKinds = []string{KindSessionsChanged, KindSessionMessage, KindSessionDelta}

// maxSessions bounds the sessions one stream follows: each is judged on every recheck.
const maxSessions = 100

// ErrUnknownSession is a followed session that is neither a session key nor a known sessionId.
var ErrUnknownSession = errors.New("unknown session")

// Followed is one followed session: the key its events carry and the AgentSession object
// name its access is judged on.
type Followed struct{ Key, Name string }

var knownKinds = []string{KindSessionsChanged, KindSessionMessage, KindSessionDelta, KindSendsChanged, KindRunsChanged, KindApprovalsChanged}

// ParseFilter reads ?namespace=&session=&session=&kinds=a,b from a request's query; session
// is repeated to follow several sessions in one stream.
func ParseFilter(q url.Values, defaultNamespace string) (Filter, error) {
	f := Filter{Namespace: q.Get("namespace")}
	if f.Namespace == "" {
		f.Namespace = defaultNamespace
	}
	if f.Namespace == "" {
		return f, fmt.Errorf("namespace is required")
	}
	for _, s := range q["session"] {
		if s == "" {
			return f, fmt.Errorf("session is empty: give a session key or a sessionId")
		}
		if !slices.Contains(f.Sessions, s) {
			f.Sessions = append(f.Sessions, s)
		}
	}
	if len(f.Sessions) > maxSessions {
		return f, fmt.Errorf("%d sessions asked; one stream follows %d at most", len(f.Sessions), maxSessions)
	}
	if k := q.Get("kinds"); k != "" {
		for _, kind := range strings.Split(k, ",") {
			if !slices.Contains(knownKinds, kind) {
				return f, fmt.Errorf("unknown kind %q; known: %s", kind, strings.Join(knownKinds, ", "))
			}
			if !slices.Contains(f.Kinds, kind) {
				f.Kinds = append(f.Kinds, kind)
			}
		}
	} else {
		f.Kinds = slices.Clone(DefaultKinds)
	}
	f.Whole = len(f.Sessions) == 0
	return f, nil
}

// ResolveSessions turns each asked session into the one it names: resolve looks a key or a
// sessionId up among the namespace's sessions. A key no session has yet is followed as it
// is, so a stream can wait for a session to be created; anything else is unknown (the
// error), yet still listed under the name its key would have, so that the caller judges
// access before it tells a miss and a caller without access cannot probe which sessionIds
// exist. After it, f.Sessions holds keys.
func (f *Filter) ResolveSessions(resolve func(namespace, ref string) (Followed, bool)) ([]Followed, error) {
	var out []Followed
	var unknown error
	for i, ref := range f.Sessions {
		s, ok := Followed{}, false
		if resolve != nil {
			s, ok = resolve(f.Namespace, ref)
		}
		if !ok {
			s = Followed{Key: ref, Name: objectName(ref)}
			if _, err := sessionkey.Parse(ref); err != nil && unknown == nil {
				unknown = fmt.Errorf("%w %q: not a session key (%v), and no session has it as sessionId", ErrUnknownSession, ref, err)
			}
		}
		f.Sessions[i] = s.Key
		out = append(out, s)
	}
	return out, unknown
}

// Match tells whether e is for this subscriber (authorization aside).
func (f Filter) Match(e Event) bool {
	if e.Namespace != f.Namespace {
		return false
	}
	followed := slices.Contains(f.Sessions, e.SessionKey)
	if f.Whole {
		return slices.Contains(f.Kinds, e.Kind) || followed && transcriptKind(e.Kind)
	}
	return followed && slices.Contains(f.Kinds, e.Kind)
}

// transcriptKind: the kinds of a targeted transcript subscription.
func transcriptKind(kind string) bool { return kind == KindSessionMessage || kind == KindSessionDelta }

// objectName is the AgentSession name of a session key.
func objectName(key string) string { return sessionkey.ObjectName(key) }
