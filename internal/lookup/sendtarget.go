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

package lookup

import (
	"context"
	"errors"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// ErrMainWithoutRequester refuses the alias main (or global) in a send that has no requester:
// the alias names the requester's main session, and a person's send has no requester.
var ErrMainWithoutRequester = errors.New("main names the requester's main session and this send has no fromSessionKey; use the target's full key, e.g. agent:<agentId>:main")

// SendTargetKey is the session key a send's sessionKey ref names when the requester runs
// under requesterAgent ("" for a send with no requester): the aliases main and global are
// the requester's main key, anything else (a key or a sessionId) is itself.
func SendTargetKey(ref, requesterAgent string) (string, error) {
	if (ref == sessionkey.Main || ref == sessionkey.Global) && requesterAgent == "" {
		return "", ErrMainWithoutRequester
	}
	return sessionkey.Resolve(ref, requesterAgent), nil
}

// SendTarget is the session a send's ref names (see SendTargetKey and ResolveSession) and
// the key it names. The session is nil when none has that key or sessionId: the key is then
// the main session the controller creates on first send, or no session at all.
func (l Lookup) SendTarget(ctx context.Context, namespace, ref, requesterAgent string) (*v1.AgentSession, string, error) {
	key, err := SendTargetKey(ref, requesterAgent)
	if err != nil {
		return nil, "", err
	}
	s, err := l.ResolveSession(ctx, namespace, ref, requesterAgent)
	return s, key, err
}
