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

// ChannelOf returns the channel column of sessions_list for a session with
// key k, following the seeds' Channel Field rule:
//   - cron, hook and node sessions: "internal";
//   - groups: the channel recorded on the session (sessionChannel), else the
//     channel named by the key;
//   - direct chats (main, direct and other keys): lastChannel, the channel the
//     conversation last came through, else the channel named by the key, else
//     sessionChannel;
//   - nothing known: "unknown".
//
// Values are trimmed and lower-cased, the form send-policy rules match on.
func ChannelOf(k Key, sessionChannel, lastChannel string) string {
	var candidates []string
	switch k.Kind {
	case KindCron, KindHook, KindNode:
		return ChannelInternal
	case KindGroup:
		candidates = []string{sessionChannel, k.Channel}
	default:
		candidates = []string{lastChannel, k.Channel, sessionChannel}
	}
	for _, c := range candidates {
		if c = strings.ToLower(strings.TrimSpace(c)); c != "" {
			return c
		}
	}
	return ChannelUnknown
}
