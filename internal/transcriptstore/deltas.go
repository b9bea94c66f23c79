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
	"net/http"
	"strconv"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// maxDeltaBody bounds one delta request: its text and the JSON around it.
const maxDeltaBody = 2*transcript.MaxDeltaText + 1024

// deltaHandler publishes a running turn's reply piece as a session.delta on hub, for the
// session's readers as /events judges them; nothing is stored. A piece for a session the
// store does not know is refused, so the manager names sessions only as appends do.
func deltaHandler(store transcript.Store, hub *events.Hub) http.Handler {
	resolver, _ := store.(SessionResolver)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d transcript.Delta
		if !decodeLimited(w, r, &d, maxDeltaBody) {
			return
		}
		if len(d.Text) > transcript.MaxDeltaText {
			writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest, "delta text larger than "+strconv.Itoa(transcript.MaxDeltaText)+" bytes")
			return
		}
		if hub == nil || resolver == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hdr, err := resolver.Resolve(r.PathValue("ns"), r.PathValue("id"))
		if err != nil {
			writeStoreError(w, err)
			return
		}
		hub.PublishDelta(hdr, d)
		w.WriteHeader(http.StatusNoContent)
	})
}
