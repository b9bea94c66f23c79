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

package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func TestLiveHeaderGivesTheWholeHeaderBack(t *testing.T) {
	at := time.Date(2026, 11, 27, 18, 0, 0, 123456789, time.UTC)
	key := "agent:main:webchat:group:g1"
	cases := map[string]struct {
		h            transcript.SessionHeader
		conventional bool
	}{
		"conventional name": {h: transcript.SessionHeader{Namespace: "ns", SessionID: "id1", SessionKey: key,
			Name: sessionkey.ObjectName(key), ParentSessionKey: "agent:main:main", CreatedAt: at}, conventional: true},
		"another name":                  {h: transcript.SessionHeader{Namespace: "ns", SessionID: "id2", SessionKey: key, Name: "mine", CreatedAt: at}},
		"no name (an older transcript)": {h: transcript.SessionHeader{Namespace: "ns", SessionID: "id3", SessionKey: key, CreatedAt: at}},
		"no key":                        {h: transcript.SessionHeader{Namespace: "ns", SessionID: "id4", Name: "x", CreatedAt: at}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := compactHeader(tc.h)
			if l.conventional != tc.conventional || (tc.conventional && l.name != "") {
				t.Fatalf("kept name %q conventional %v, want conventional %v with no copy", l.name, l.conventional, tc.conventional)
			}
			if d := cmp.Diff(tc.h, l.header(tc.h.Namespace, tc.h.SessionID)); d != "" {
				t.Fatalf("header back (-want +got):\n%s", d)
			}
		})
	}
}
