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
	"context"
	"slices"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// liveHeader is what the store keeps in memory of each live session's header, one per
// session for as long as it lives: the namespace and the session id are the keys of the
// maps that hold it, and the object name is left out when it is the key's conventional one
// (sessionkey.ObjectName), which every session the operator, the plugin and the tools make
// has. At 100,000 sessions the whole header was a tenth of the transcript-store's memory.
type liveHeader struct {
	key, name, parent string
	created           int64 // unix nanoseconds
	conventional      bool  // name is sessionkey.ObjectName(key), left out
}

func compactHeader(h transcript.SessionHeader) liveHeader {
	l := liveHeader{key: h.SessionKey, name: h.Name, parent: h.ParentSessionKey, created: h.CreatedAt.UnixNano()}
	if h.Name != "" && h.SessionKey != "" && h.Name == sessionkey.ObjectName(h.SessionKey) {
		l.name, l.conventional = "", true
	}
	return l
}

// header is the session's whole header again.
func (l liveHeader) header(namespace, sessionID string) transcript.SessionHeader {
	h := transcript.SessionHeader{Namespace: namespace, SessionID: sessionID, SessionKey: l.key, Name: l.name,
		ParentSessionKey: l.parent, CreatedAt: time.Unix(0, l.created).UTC()}
	if l.conventional {
		h.Name = sessionkey.ObjectName(l.key)
	}
	return h
}

// LiveNamespaces implements transcript.LiveLister.
func (st *FileStore) LiveNamespaces(context.Context) ([]string, error) {
	st.mu.Lock()
	out := make([]string, 0, len(st.headers))
	for ns, hs := range st.headers {
		if len(hs) > 0 {
			out = append(out, ns)
		}
	}
	st.mu.Unlock()
	slices.Sort(out)
	return out, nil
}

// LiveSessionIDs implements transcript.LiveLister: a page of the live sessions' index,
// which holds every live transcript whether its file is open or not.
func (st *FileStore) LiveSessionIDs(_ context.Context, namespace, after string, limit int) ([]string, error) {
	if err := transcript.ValidName(namespace); err != nil {
		return nil, err
	}
	st.mu.Lock()
	ids := make([]string, 0, len(st.headers[namespace]))
	for id := range st.headers[namespace] {
		if id > after {
			ids = append(ids, id)
		}
	}
	st.mu.Unlock()
	return transcript.LivePage(ids, after, limit), nil
}
