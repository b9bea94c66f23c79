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

// Package sessionkey implements the session key grammar of the session tools:
// parsing and classifying keys, the "main"/"global" aliases, the channel
// column of sessions_list, and the Kubernetes object names derived from keys.
//
// A key is 1 to 512 bytes of valid UTF-8 without whitespace, control or
// invisible formatting characters. These forms are recognised:
//
//	main                                  alias for the caller's agent:<agentId>:main
//	agent:<agentId>:main                  an agent's main direct-chat bucket      (kind main)
//	agent:<agentId>:<channel>:group:<id>  a group chat                            (kind group)
//	agent:<agentId>:<channel>:channel:<id>
//	agent:<agentId>:<channel>:direct:<id> a direct chat with a peer               (kind other)
//	agent:<agentId>:subagent:<uuid>       a sessions_spawn child                  (kind other, Subagent)
//	agent:<agentId>:<anything>            any other agent-scoped key              (kind other)
//	cron:<job.id>                                                                 (kind cron)
//	hook:<uuid>                                                                   (kind hook)
//	node-<nodeId>                                                                 (kind node)
//	<channel>:group:<id>                  group keys of the older, unscoped seeds (kind group)
//	<channel>:channel:<id>
//	global, unknown                       reserved: never listed; global aliases to main
//
// agentId and channel match [a-z0-9][a-z0-9_-]{0,63}. Channels are held to
// lower case because send-policy rules match them exactly: a key naming
// "Discord" must not slip past a rule that denies "discord". Group, job, hook
// and node ids are opaque and may themselves contain ':' (thread and topic
// suffixes do). Agent-scoped keys have no empty ':'-separated segments.
//
// Anything else is rejected, so a typo fails at admission with a message
// naming the form it resembled instead of creating a stray session.
package sessionkey
