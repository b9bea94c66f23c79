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

package sessiontools

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// TurnID names the turn of an owner at a step: "<owner UID>/<step>", e.g. "…/round-1".
// Turn ids are the idempotency keys' prefix, so the format never changes. A send's runId is
// the id of its round-1 turn.
func TurnID(owner types.UID, step string) string { return string(owner) + "/" + step }

// OwnerUIDOf is the owner UID a turn id starts with.
func OwnerUIDOf(turnID string) types.UID {
	uid, _, _ := strings.Cut(turnID, "/")
	return types.UID(uid)
}
