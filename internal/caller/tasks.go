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

package caller

import (
	"crypto/sha256"
	"encoding/hex"
)

// TaskOwner is the label value that marks a task (the SessionSend behind an A2A task or an
// MCP task) with the user that made it: 40 hex characters of the SHA-256 of the name the
// API server authenticated, never anything the request says. It is the one rule of every
// task door: a task is its caller's; every read, wait and cancel of a task looks for it
// among the sends labelled with the caller's value only, so another caller's task is the
// same not-found as an unknown id. People with RBAC on SessionSends see them all with
// kubectl.
func TaskOwner(user string) string {
	sum := sha256.Sum256([]byte(user))
	return hex.EncodeToString(sum[:20])
}
