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

package sessionkey

import "strings"

// ChatIDOfTo is the chat id a delivery recipient (spec.deliveryContext.to, spec.lastTo)
// names: the recipient itself ("-1001234", "C0123"), or the id after a chat type in the
// key grammar's words ("group:-1001234", "telegram:group:-1001234" -> "-1001234").
func ChatIDOfTo(to string) string {
	to = strings.TrimSpace(to)
	first, rest, ok := strings.Cut(to, ":")
	if !ok {
		return to
	}
	if isChatType(strings.ToLower(strings.TrimSpace(first))) {
		return strings.TrimSpace(rest)
	}
	if second, id, ok := strings.Cut(rest, ":"); ok && isChatType(strings.ToLower(strings.TrimSpace(second))) {
		return strings.TrimSpace(id)
	}
	return to
}

// ChatIDOfKey is the chat id a session key names on channel: the id of
// agent:<agentId>:<channel>:<group|channel|direct>:<id> ("" for any other key, or a key of
// another channel).
func ChatIDOfKey(key, channel string) string {
	k, err := Parse(key)
	if err != nil || k.ChatType == "" || !strings.EqualFold(k.Channel, channel) {
		return ""
	}
	return k.ID
}
