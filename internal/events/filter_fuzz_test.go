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
	"net/url"
	"slices"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// The /events query is outside input: any query either parses into a filter that follows
// at most maxSessions non-empty sessions with known kinds, or is refused; resolved with no
// known sessionIds, every followed session is a key, or the filter names an unknown one.
func FuzzParseFilter(f *testing.F) {
	for _, q := range []string{
		"", "namespace=ns", "session=agent:a:main", "session=agent:a:main&session=0b6f9a3e-1111-4222-8333-444455556666",
		"session=&kinds=", "kinds=session.message,runs.changed", "kinds=nope", "namespace=&session=main", "session=%ff",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		flt, err := ParseFilter(q, "def")
		if err != nil {
			return
		}
		if flt.Namespace == "" || len(flt.Sessions) > maxSessions || len(flt.Kinds) == 0 {
			t.Fatalf("ParseFilter(%q) = %+v", raw, flt)
		}
		for _, k := range flt.Kinds {
			if !slices.Contains(knownKinds, k) {
				t.Fatalf("ParseFilter(%q) kept kind %q", raw, k)
			}
		}
		followed, err := flt.ResolveSessions(nil)
		if len(followed) != len(flt.Sessions) {
			t.Fatalf("ResolveSessions(%q) = %d sessions of %d", raw, len(followed), len(flt.Sessions))
		}
		if err != nil {
			if !errors.Is(err, ErrUnknownSession) {
				t.Fatalf("ResolveSessions(%q): %v", raw, err)
			}
			return
		}
		for _, s := range followed {
			if _, perr := sessionkey.Parse(s.Key); perr != nil || s.Name != sessionkey.ObjectName(s.Key) {
				t.Fatalf("ResolveSessions(%q) follows %+v", raw, s)
			}
		}
	})
}
