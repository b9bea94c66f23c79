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

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the sessions_list kind of a key, derived from the key alone.
type Kind string

// The kinds of sessions_list.
const (
	KindMain  Kind = "main"
	KindGroup Kind = "group"
	KindCron  Kind = "cron"
	KindHook  Kind = "hook"
	KindNode  Kind = "node"
	KindOther Kind = "other"
)

// Channel values that do not name a messaging surface.
const (
	ChannelInternal = "internal" // cron, hook and node sessions
	ChannelUnknown  = "unknown"  // nothing recorded
)

// Literal keys with a special meaning.
const (
	Main    = "main"    // alias for the current agent's main key
	Global  = "global"  // reserved; aliases to Main so callers never see it
	Unknown = "unknown" // reserved; never listed
)

// Chat types that can appear in a key.
const (
	ChatTypeGroup   = "group"
	ChatTypeChannel = "channel"
	ChatTypeDirect  = "direct"
)

// MaxLen is the longest key accepted, in bytes. It bounds what a key costs
// in every index, event and log line that carries it.
const MaxLen = 512

// maxIDLen is the longest agent id or channel name.
const maxIDLen = 64

const (
	agentPrefix    = "agent:"
	cronPrefix     = "cron:"
	hookPrefix     = "hook:"
	nodePrefix     = "node-"
	subagentMarker = "subagent"
)

// Key is a parsed session key.
type Key struct {
	// Raw is the key exactly as given.
	Raw  string
	Kind Kind
	// AgentID is the agent of an agent-scoped key, "" otherwise (also for
	// the unresolved alias "main").
	AgentID string
	// Channel is the channel named by the key, "" when the key names none.
	Channel string
	// ChatType is "group", "channel", "direct" or "".
	ChatType string
	// ID is the trailing id: group id, peer, job id, hook uuid, node id,
	// subagent uuid; for other agent-scoped keys, everything after
	// "agent:<agentId>:".
	ID string
	// Subagent is set for agent:<agentId>:subagent:<uuid>.
	Subagent bool
}

// Error is the error Parse returns. Its message quotes the key and, where the
// key resembles a known form, the form that was expected.
type Error struct {
	Key    string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("session key %s: %s", quoteShort(e.Key), e.Reason)
}

// quoteShort quotes at most the first 64 bytes of s so that a hostile or
// mistaken multi-kilobyte key does not flood kubectl output.
func quoteShort(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

func errorf(key, format string, args ...any) error {
	return &Error{Key: key, Reason: fmt.Sprintf(format, args...)}
}

const wantAny = "want main, agent:<agentId>:main, agent:<agentId>:<channel>:group:<id>, " +
	"agent:<agentId>:<channel>:direct:<peer>, agent:<agentId>:subagent:<uuid>, " +
	"cron:<job.id>, hook:<uuid> or node-<nodeId>"

// Parse parses and classifies a session key. The aliases "main" and
// "global" parse without an agent id (resolve them with Resolve first when
// the agent is known); IsReserved tells "global" and "unknown" apart from
// keys that may be listed.
func Parse(s string) (Key, error) {
	if err := checkChars(s); err != nil {
		return Key{}, err
	}
	switch s {
	case Main, Global:
		return Key{Raw: s, Kind: KindMain}, nil
	case Unknown:
		return Key{Raw: s, Kind: KindOther}, nil
	}
	switch {
	case strings.HasPrefix(s, agentPrefix):
		return parseAgent(s)
	case strings.HasPrefix(s, cronPrefix):
		return parseOpaque(s, cronPrefix, KindCron, "job id", "cron:<job.id>")
	case strings.HasPrefix(s, hookPrefix):
		return parseOpaque(s, hookPrefix, KindHook, "hook id", "hook:<uuid>")
	case strings.HasPrefix(s, nodePrefix):
		return parseOpaque(s, nodePrefix, KindNode, "node id", "node-<nodeId>")
	}
	if k, ok, err := parseLegacyGroup(s); ok {
		return k, err
	}
	if strings.EqualFold(s, Main) || strings.EqualFold(s, Global) || strings.EqualFold(s, Unknown) ||
		hasFoldPrefix(s, agentPrefix) || hasFoldPrefix(s, cronPrefix) ||
		hasFoldPrefix(s, hookPrefix) || hasFoldPrefix(s, nodePrefix) {
		return Key{}, errorf(s, "keys are case-sensitive; write the form in lower case: %s", wantAny)
	}
	return Key{}, errorf(s, "not a recognised form; %s", wantAny)
}

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// checkChars enforces the byte-level rules shared by every form. Invisible
// format characters (zero-width spaces, bidi overrides) are refused along
// with whitespace because they let two keys that print the same differ.
func checkChars(s string) error {
	if s == "" {
		return errorf(s, "must not be empty; %s", wantAny)
	}
	if len(s) > MaxLen {
		return errorf(s, "is %d bytes long; at most %d are allowed", len(s), MaxLen)
	}
	if !utf8.ValidString(s) {
		return errorf(s, "is not valid UTF-8")
	}
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			return errorf(s, "contains whitespace %U at byte %d; keys have no spaces", r, i)
		case unicode.IsControl(r):
			return errorf(s, "contains control character %U at byte %d", r, i)
		case unicode.Is(unicode.Cf, r):
			return errorf(s, "contains invisible formatting character %U at byte %d", r, i)
		}
	}
	return nil
}

func parseOpaque(s, prefix string, kind Kind, what, want string) (Key, error) {
	id := s[len(prefix):]
	if id == "" {
		return Key{}, errorf(s, "%s is empty; want %s", what, want)
	}
	return Key{Raw: s, Kind: kind, ID: id}, nil
}

func parseAgent(s string) (Key, error) {
	rest := s[len(agentPrefix):]
	agentID, tail, _ := strings.Cut(rest, ":")
	first, after, hasAfter := strings.Cut(tail, ":")
	want := wantAgentForm(first, after)
	if agentID == "" {
		return Key{}, errorf(s, "agent id is empty; want %s", want)
	}
	if !validToken(agentID) {
		return Key{}, errorf(s, "agent id %q is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}", agentID)
	}
	if tail == "" {
		return Key{}, errorf(s, "nothing follows the agent id; want agent:%s:main or agent:%s:<channel>:group:<id>", agentID, agentID)
	}
	k := Key{Raw: s, AgentID: agentID}
	switch {
	case first == "":
		return Key{}, errorf(s, "empty segment after the agent id; want %s", want)
	case first == Main && !hasAfter:
		k.Kind = KindMain
		return k, nil
	case first == subagentMarker:
		if after == "" {
			return Key{}, errorf(s, "subagent id is empty; want agent:<agentId>:subagent:<uuid>")
		}
		if strings.Contains(after, ":") {
			return Key{}, errorf(s, "subagent id %q contains ':'; want agent:<agentId>:subagent:<uuid>", after)
		}
		k.Kind, k.Subagent, k.ID = KindOther, true, after
		return k, nil
	}
	chatType, id, _ := strings.Cut(after, ":")
	if isChatType(chatType) && first != Main {
		if !validToken(first) {
			return Key{}, errorf(s, "channel %q is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}", first)
		}
		if id == "" {
			return Key{}, errorf(s, "%s id is empty; want agent:<agentId>:<channel>:%s:<id>", chatType, chatType)
		}
		if err := checkSegments(s, id); err != nil {
			return Key{}, err
		}
		k.Kind = KindGroup
		if chatType == ChatTypeDirect {
			k.Kind = KindOther
		}
		k.Channel, k.ChatType, k.ID = first, chatType, id
		return k, nil
	}
	if err := checkSegments(s, tail); err != nil {
		return Key{}, err
	}
	k.Kind, k.ID = KindOther, tail
	return k, nil
}

// wantAgentForm picks the form an erroneous agent key most resembles, so
// the error shows the user the shape they were aiming for.
func wantAgentForm(first, after string) string {
	chatType, _, _ := strings.Cut(after, ":")
	switch {
	case first == Main:
		return "agent:<agentId>:main"
	case first == subagentMarker:
		return "agent:<agentId>:subagent:<uuid>"
	case isChatType(chatType):
		return "agent:<agentId>:<channel>:" + chatType + ":<id>"
	default:
		return "agent:<agentId>:main"
	}
}

// checkSegments rejects empty ':'-separated segments in an agent-scoped key:
// "a::b" and a trailing ':' are almost always a missing value.
func checkSegments(s, part string) error {
	if strings.Contains(part, "::") || strings.HasSuffix(part, ":") {
		return errorf(s, "has an empty segment (\"::\" or a trailing ':'); a value is missing")
	}
	return nil
}

// parseLegacyGroup recognises <channel>:group:<id> and <channel>:channel:<id>
// from the older seeds, where group keys were not agent-scoped. ok reports
// whether s has that shape at all.
func parseLegacyGroup(s string) (k Key, ok bool, err error) {
	channel, after, found := strings.Cut(s, ":")
	if !found {
		return Key{}, false, nil
	}
	chatType, id, _ := strings.Cut(after, ":")
	if chatType != ChatTypeGroup && chatType != ChatTypeChannel {
		return Key{}, false, nil
	}
	if !validToken(channel) {
		return Key{}, true, errorf(s, "channel %q is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}", channel)
	}
	if id == "" {
		return Key{}, true, errorf(s, "%s id is empty; want %s:%s:<id> (or agent:<agentId>:%s:%s:<id>)",
			chatType, channel, chatType, channel, chatType)
	}
	return Key{Raw: s, Kind: KindGroup, Channel: channel, ChatType: chatType, ID: id}, true, nil
}

func isChatType(s string) bool {
	return s == ChatTypeGroup || s == ChatTypeChannel || s == ChatTypeDirect
}

// validToken reports whether s matches [a-z0-9][a-z0-9_-]{0,63}, the format
// of agent ids and channel names. Written out rather than as a regexp: it
// runs on every admission request and every list filter.
func validToken(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidAgentID reports whether id is a well-formed agent id.
func ValidAgentID(id string) bool { return validToken(id) }

// IsReserved reports whether s is one of the internal-only keys "global" and
// "unknown", which are never listed.
func IsReserved(s string) bool {
	return s == Global || s == Unknown
}

// MainKey returns the main key of an agent. It does not validate agentID;
// Parse of the result does.
func MainKey(agentID string) string {
	return agentPrefix + agentID + ":" + Main
}

// SubagentKey returns the key of a sessions_spawn child session. It does not
// validate its arguments; Parse of the result does.
func SubagentKey(agentID, uuid string) string {
	return agentPrefix + agentID + ":" + subagentMarker + ":" + uuid
}

// Resolve replaces the aliases "main" and "global" by the main key of
// agentID, the agent on whose behalf the key is used; any other s is
// returned unchanged. Aliasing "global" here is what keeps it out of every
// tool result.
func Resolve(s, agentID string) string {
	if s == Main || s == Global {
		return MainKey(agentID)
	}
	return s
}

// AgentOf returns the agent id of an agent-scoped key, or "" for keys that
// are not agent-scoped or do not parse.
func AgentOf(key string) string {
	k, err := Parse(key)
	if err != nil {
		return ""
	}
	return k.AgentID
}
