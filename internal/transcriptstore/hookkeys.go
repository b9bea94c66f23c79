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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// maxHookKeys bounds the hooks one store serves: a manager that hands more is refused.
const maxHookKeys = 100000

// HookKeyring holds the SessionHooks the store serves and their signing secrets, as the
// manager hands them over its internal API (hookKeysHandler): the store reads no Secrets.
// A store that restarted serves no hook until the manager's next resync (a minute).
type HookKeyring struct {
	mu   sync.RWMutex
	keys map[types.NamespacedName]hookEntry
	// tally holds each hook's accepted deliveries until the SessionHook controller has
	// written them in the hook's status and acknowledged them (hookDeliveriesHandler).
	tally map[types.NamespacedName]transcript.HookDelivery
}

type hookEntry struct {
	hook   *sessionsv1alpha1.SessionHook
	secret []byte
}

// NewHookKeyring returns an empty keyring.
func NewHookKeyring() *HookKeyring {
	return &HookKeyring{keys: map[types.NamespacedName]hookEntry{}, tally: map[types.NamespacedName]transcript.HookDelivery{}}
}

// accepted counts a delivery the door accepted for hook at time at.
func (k *HookKeyring) accepted(hook types.NamespacedName, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d := k.tally[hook]
	d.Namespace, d.Name, d.Count = hook.Namespace, hook.Name, d.Count+1
	if at.After(d.Last) {
		d.Last = at
	}
	k.tally[hook] = d
}

// pending is hook's deliveries not yet acknowledged.
func (k *HookKeyring) pending(hook types.NamespacedName) transcript.HookDelivery {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if d, ok := k.tally[hook]; ok {
		return d
	}
	return transcript.HookDelivery{Namespace: hook.Namespace, Name: hook.Name}
}

// acknowledge drops n of hook's deliveries: the controller wrote them in its status.
func (k *HookKeyring) acknowledge(hook types.NamespacedName, n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d := k.tally[hook]
	if d.Count -= n; d.Count <= 0 {
		delete(k.tally, hook)
		return
	}
	k.tally[hook] = d
}

// hookDeliveriesHandler reports a hook's deliveries not yet in its status (GET) and takes the
// SessionHook controller's acknowledgement of those it wrote (POST): the controller is the one
// writer of the hook's status, the door the one that sees the deliveries. A delivery counted
// here and lost with the store before the controller read it is missing from the count; one
// written and not acknowledged (the manager stopped between) is counted again.
func hookDeliveriesHandler(k *HookKeyring) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			q := r.URL.Query()
			writeJSON(w, http.StatusOK, k.pending(types.NamespacedName{Namespace: q.Get("namespace"), Name: q.Get("name")}))
			return
		}
		var d transcript.HookDelivery
		if !decodeBody(w, r, &d) {
			return
		}
		k.acknowledge(types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, d.Count)
		w.WriteHeader(http.StatusNoContent)
	})
}

// get is the hook of ns/name and its secret; nil when the store serves no such hook.
func (k *HookKeyring) get(ns, name string) (*sessionsv1alpha1.SessionHook, []byte) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	e, ok := k.keys[types.NamespacedName{Namespace: ns, Name: name}]
	if !ok {
		return nil, nil
	}
	return e.hook, e.secret
}

// hookKeysHandler takes the manager's HookKeys: each key sets or drops a hook.
func hookKeysHandler(k *HookKeyring) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body transcript.HookKeys
		if !decodeBody(w, r, &body) {
			return
		}
		if len(body.Keys) > transcript.MaxHookKeys {
			writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest,
				"more than "+strconv.Itoa(transcript.MaxHookKeys)+" keys")
			return
		}
		set := make(map[types.NamespacedName]hookEntry, len(body.Keys))
		var drop []types.NamespacedName
		for _, key := range body.Keys {
			name := types.NamespacedName{Namespace: key.Namespace, Name: key.Name}
			if key.Delete {
				drop = append(drop, name)
				continue
			}
			h := &sessionsv1alpha1.SessionHook{}
			if err := json.Unmarshal(key.Hook, h); err != nil || h.Namespace != key.Namespace || h.Name != key.Name || h.UID == "" {
				writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "key "+name.String()+": not its SessionHook")
				return
			}
			if len(key.Secret) == 0 || len(key.Secret) > transcript.MaxHookSecretBytes {
				writeError(w, http.StatusBadRequest, transcript.ErrTypeInvalidRequest, "key "+name.String()+": a secret of 1 to "+
					strconv.Itoa(transcript.MaxHookSecretBytes)+" bytes")
				return
			}
			set[name] = hookEntry{hook: h, secret: key.Secret}
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, name := range drop {
			delete(k.keys, name)
		}
		for name, e := range set {
			if _, had := k.keys[name]; !had && len(k.keys) >= maxHookKeys {
				writeError(w, http.StatusInsufficientStorage, transcript.ErrTypeUnavailable, "the store serves "+strconv.Itoa(maxHookKeys)+" hooks already")
				return
			}
			k.keys[name] = e
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
