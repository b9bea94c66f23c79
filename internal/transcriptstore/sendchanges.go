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
	"encoding/json"
	"net/http"
	"strconv"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sendChangesHandler publishes the SessionSend changes the manager hands over (it watches
// sends anyway) as sends.changed on hub, as a watch of the store's own would: each judged by
// the send's target session for each subscriber. The store then watches no sends: one
// watcher of every send fewer on the API server. hub nil drops them.
func sendChangesHandler(hub *events.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body transcript.SendChanges
		if !decodeBody(w, r, &body) {
			return
		}
		if len(body.Changes) > transcript.MaxSendChanges {
			writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest,
				"more than "+strconv.Itoa(transcript.MaxSendChanges)+" changes")
			return
		}
		changes := make([]events.ObjectChange, 0, len(body.Changes))
		for _, c := range body.Changes {
			s := &sessionsv1alpha1.SessionSend{}
			if err := json.Unmarshal(c.Object, s); err != nil {
				writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "invalid SessionSend: "+err.Error())
				return
			}
			ch, ok := sendChange(c.Type, s)
			if !ok {
				writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "unknown change type "+strconv.Quote(c.Type))
				return
			}
			changes = append(changes, ch)
		}
		if hub != nil {
			for _, ch := range changes {
				hub.PublishChange(ch)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// sendChange is the change a watch event of type t would have published: a modification
// carries the object as both old and new, as a watch that keeps nothing does.
func sendChange(t string, s *sessionsv1alpha1.SessionSend) (events.ObjectChange, bool) {
	switch t {
	case transcript.ChangeAdded:
		return events.ObjectChange{Cur: s}, true
	case transcript.ChangeModified:
		return events.ObjectChange{Old: s, Cur: s}, true
	case transcript.ChangeDeleted:
		return events.ObjectChange{Old: s}, true
	}
	return events.ObjectChange{}, false
}
