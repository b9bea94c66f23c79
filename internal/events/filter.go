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
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// Filter is what one subscriber asked for: a namespace, optionally one session, and the
// kinds it wants (sessions.changed and session.message unless it names others).
type Filter struct {
	Namespace  string
	SessionKey string
	Kinds      []string
}

var knownKinds = []string{KindSessionsChanged, KindSessionMessage, KindSendsChanged, KindRunsChanged}

// ParseFilter reads ?namespace=&session=&kinds=a,b from a request's query.
func ParseFilter(q url.Values, defaultNamespace string) (Filter, error) {
	f := Filter{Namespace: q.Get("namespace"), SessionKey: q.Get("session")}
	if f.Namespace == "" {
		f.Namespace = defaultNamespace
	}
	if f.Namespace == "" {
		return f, fmt.Errorf("namespace is required")
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
		f.Kinds = []string{KindSessionsChanged, KindSessionMessage}
	}
	return f, nil
}

// Match tells whether e is for this subscriber (authorization aside).
func (f Filter) Match(e Event) bool {
	return e.Namespace == f.Namespace &&
		(f.SessionKey == "" || e.SessionKey == f.SessionKey) &&
		slices.Contains(f.Kinds, e.Kind)
}

// objectName is the AgentSession name of a session key.
func objectName(key string) string { return sessionkey.ObjectName(key) }
