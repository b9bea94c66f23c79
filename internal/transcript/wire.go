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

package transcript

import (
	"encoding/json"
	"time"
)

// APISessionsPath is the root of the internal API that the transcript store serves to the
// manager on a unix socket (or loopback); see server.NewAPIHandler.
const APISessionsPath = "/v1/sessions"

// AppendBody is the internal API's append request and response.
type AppendBody struct {
	Messages []AppendRequest `json:"messages,omitempty"`
	Records  []Record        `json:"records,omitempty"`
}

// HistoryResponse is the JSON of GET /sessions/{sessionKey}/history and of the SSE history event.
type HistoryResponse struct {
	SessionKey string `json:"sessionKey"`
	SessionID  string `json:"sessionId"`
	Namespace  string `json:"namespace"`
	Page
}

// APIDeltaPath, after a session's path, takes a Delta: a piece of a running turn's reply that
// the store publishes live as a session.delta event and never stores.
const APIDeltaPath = "/delta"

// MaxDeltaText bounds the text of one Delta; the writer cuts longer runs of text.
const MaxDeltaText = 4 << 10

// Delta is a piece of a running turn's reply. Step is the turn's model call (each makes its
// own assistant message) and Seq counts the pieces of that call from 1: a gap means pieces
// were dropped, and the session.message record that follows is whole either way.
type Delta struct {
	RunID string `json:"runId"`
	Step  int    `json:"step"`
	Seq   int64  `json:"seq"`
	Text  string `json:"text"`
}

// ReplyWriter takes a running reply's text as it streams and publishes it as Deltas (see
// client.Client.LiveReply); Flush sends what it holds when the model call ends.
type ReplyWriter interface {
	Write(text string)
	Flush()
}

// APISendChangesPath takes SendChanges: the SessionSend changes the manager sees, which the
// store publishes on /events as sends.changed, so that it needs no watch of sends itself.
const APISendChangesPath = "/v1/changes/sends"

// The types of a SendChange, as a watch names them.
const (
	ChangeAdded    = "ADDED"
	ChangeModified = "MODIFIED"
	ChangeDeleted  = "DELETED"
)

// MaxSendChanges bounds the changes of one SendChanges request.
const MaxSendChanges = 64

// SendChanges is one batch of SessionSend changes, oldest first.
type SendChanges struct {
	Changes []SendChange `json:"changes"`
}

// SendChange is one change of a SessionSend: its type and the object (JSON) after it, or as
// it was last seen for a delete.
type SendChange struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// APIHookKeysPath takes HookKeys: the SessionHooks whose deliveries the store accepts on
// /hooks, with their signing secrets, from the manager. The store reads no Secrets itself:
// the network-facing sidecar holds only the keys of the hooks it serves.
const APIHookKeysPath = "/v1/hooks/keys"

// APIHookDeliveriesPath reports the deliveries the /hooks door accepted that the hook's
// status does not count yet (GET ?namespace=&name=, a HookDelivery), and takes the
// SessionHook controller's acknowledgement of those it wrote (POST a HookDelivery): the
// controller is the one writer of a hook's status.
const APIHookDeliveriesPath = "/v1/hooks/deliveries"

// HookDelivery is a hook's deliveries not yet in its status: how many, and when the last came.
type HookDelivery struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Count     int64     `json:"count"`
	Last      time.Time `json:"last,omitzero"`
}

// MaxHookKeys bounds the keys of one HookKeys request; MaxHookSecretBytes one secret.
const (
	MaxHookKeys        = 64
	MaxHookSecretBytes = 4096
)

// HookKeys is one batch of hook keys to set or drop.
type HookKeys struct {
	Keys []HookKey `json:"keys"`
}

// HookKey is a SessionHook the store serves (the object, JSON, as the manager read it) and
// its signing secret; Delete drops the hook's key, so its deliveries are refused.
type HookKey struct {
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Delete    bool            `json:"delete,omitempty"`
	Hook      json.RawMessage `json:"hook,omitempty"`
	Secret    []byte          `json:"secret,omitempty"`
}
