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

// ChatTypeOfTo returns the chat type a delivery recipient (spec.lastTo,
// spec.deliveryContext.to) names in the key grammar's words: "group:<id>",
// "channel:<id>" or "direct:<peer>", also behind a channel as in the older
// group keys ("discord:group:7"); "" when it names none. The delivery check
// judges an announce by the chat it goes to, so a recipient that names a
// group is judged as a group whatever the session is. Case is ignored: a
// sink may read "Group:7" as a group too, and spaces around a part ("group :7") as
// nothing, so each part is trimmed: a recipient cannot hide its chat type behind one.
func ChatTypeOfTo(to string) string {
	first, rest, _ := strings.Cut(strings.ToLower(to), ":")
	if first = strings.TrimSpace(first); isChatType(first) {
		return first
	}
	if second, _, ok := strings.Cut(rest, ":"); ok && isChatType(strings.TrimSpace(second)) {
		return strings.TrimSpace(second)
	}
	return ""
}
