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
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	long := "agent:a:telegram:group:" + strings.Repeat("9", MaxLen-len("agent:a:telegram:group:"))
	cases := map[string]struct {
		in   string
		want Key
	}{
		"main alias":          {in: "main", want: Key{Raw: "main", Kind: KindMain}},
		"global aliases main": {in: "global", want: Key{Raw: "global", Kind: KindMain}},
		"unknown reserved":    {in: "unknown", want: Key{Raw: "unknown", Kind: KindOther}},
		"agent main": {
			in:   "agent:research:main",
			want: Key{Raw: "agent:research:main", Kind: KindMain, AgentID: "research"},
		},
		"agent id with digits, dash and underscore": {
			in:   "agent:0ops_bot-2:main",
			want: Key{Raw: "agent:0ops_bot-2:main", Kind: KindMain, AgentID: "0ops_bot-2"},
		},
		"agent id of 64 chars": {
			in:   "agent:" + strings.Repeat("a", 64) + ":main",
			want: Key{Raw: "agent:" + strings.Repeat("a", 64) + ":main", Kind: KindMain, AgentID: strings.Repeat("a", 64)},
		},
		"group": {
			in: "agent:main:discord:group:12345",
			want: Key{Raw: "agent:main:discord:group:12345", Kind: KindGroup, AgentID: "main",
				Channel: "discord", ChatType: "group", ID: "12345"},
		},
		"channel": {
			in: "agent:ops:slack:channel:C0123",
			want: Key{Raw: "agent:ops:slack:channel:C0123", Kind: KindGroup, AgentID: "ops",
				Channel: "slack", ChatType: "channel", ID: "C0123"},
		},
		"group id with topic suffix and negative number": {
			in: "agent:a:telegram:group:-100123:topic:42",
			want: Key{Raw: "agent:a:telegram:group:-100123:topic:42", Kind: KindGroup, AgentID: "a",
				Channel: "telegram", ChatType: "group", ID: "-100123:topic:42"},
		},
		"group id with non-ASCII": {
			in: "agent:a:webchat:group:café",
			want: Key{Raw: "agent:a:webchat:group:café", Kind: KindGroup, AgentID: "a",
				Channel: "webchat", ChatType: "group", ID: "café"},
		},
		"direct": {
			in: "agent:a:whatsapp:direct:+15551234567",
			want: Key{Raw: "agent:a:whatsapp:direct:+15551234567", Kind: KindOther, AgentID: "a",
				Channel: "whatsapp", ChatType: "direct", ID: "+15551234567"},
		},
		"subagent": {
			in: "agent:a:subagent:0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01",
			want: Key{Raw: "agent:a:subagent:0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01", Kind: KindOther, AgentID: "a",
				ID: "0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01", Subagent: true},
		},
		"other agent-scoped": {
			in:   "agent:a:project-x",
			want: Key{Raw: "agent:a:project-x", Kind: KindOther, AgentID: "a", ID: "project-x"},
		},
		"main with thread suffix is other": {
			in:   "agent:a:main:thread:7",
			want: Key{Raw: "agent:a:main:thread:7", Kind: KindOther, AgentID: "a", ID: "main:thread:7"},
		},
		"main is not a channel": {
			in:   "agent:a:main:group:7",
			want: Key{Raw: "agent:a:main:group:7", Kind: KindOther, AgentID: "a", ID: "main:group:7"},
		},
		"unknown chat type is other": {
			in:   "agent:a:telegram:dm:1",
			want: Key{Raw: "agent:a:telegram:dm:1", Kind: KindOther, AgentID: "a", ID: "telegram:dm:1"},
		},
		"cron":                     {in: "cron:nightly-digest", want: Key{Raw: "cron:nightly-digest", Kind: KindCron, ID: "nightly-digest"}},
		"cron id with colon":       {in: "cron:job:run:3", want: Key{Raw: "cron:job:run:3", Kind: KindCron, ID: "job:run:3"}},
		"hook":                     {in: "hook:5f0c", want: Key{Raw: "hook:5f0c", Kind: KindHook, ID: "5f0c"}},
		"node":                     {in: "node-kitchen-pi", want: Key{Raw: "node-kitchen-pi", Kind: KindNode, ID: "kitchen-pi"}},
		"legacy group":             {in: "discord:group:42", want: Key{Raw: "discord:group:42", Kind: KindGroup, Channel: "discord", ChatType: "group", ID: "42"}},
		"legacy channel":           {in: "slack:channel:C1", want: Key{Raw: "slack:channel:C1", Kind: KindGroup, Channel: "slack", ChatType: "channel", ID: "C1"}},
		"exactly MaxLen bytes":     {in: long, want: Key{Raw: long, Kind: KindGroup, AgentID: "a", Channel: "telegram", ChatType: "group", ID: long[len("agent:a:telegram:group:"):]}},
		"agent named like a kind":  {in: "agent:cron:main", want: Key{Raw: "agent:cron:main", Kind: KindMain, AgentID: "cron"}},
		"channel named internal":   {in: "agent:a:internal:group:x", want: Key{Raw: "agent:a:internal:group:x", Kind: KindGroup, AgentID: "a", Channel: "internal", ChatType: "group", ID: "x"}},
		"agent group legacy shape": {in: "agent:group:1", want: Key{Raw: "agent:group:1", Kind: KindOther, AgentID: "group", ID: "1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		in      string
		wantErr string
	}{
		"empty": {
			in:      "",
			wantErr: `session key "": must not be empty; ` + wantAny,
		},
		"too long": {
			in:      "cron:" + strings.Repeat("x", MaxLen),
			wantErr: `session key "cron:` + strings.Repeat("x", 59) + `"... (517 bytes): is 517 bytes long; at most 512 are allowed`,
		},
		"invalid UTF-8": {
			in:      "cron:\xff",
			wantErr: `session key "cron:\xff": is not valid UTF-8`,
		},
		"space": {
			in:      "agent:a:main ",
			wantErr: `session key "agent:a:main ": contains whitespace U+0020 at byte 12; keys have no spaces`,
		},
		"newline": {
			in:      "cron:a\nb",
			wantErr: `session key "cron:a\nb": contains whitespace U+000A at byte 6; keys have no spaces`,
		},
		"no-break space": {
			in:      "hook:a\u00a0b",
			wantErr: `session key "hook:a\u00a0b": contains whitespace U+00A0 at byte 6; keys have no spaces`,
		},
		"control": {
			in:      "hook:a\x00b",
			wantErr: `session key "hook:a\x00b": contains control character U+0000 at byte 6`,
		},
		"zero-width space": {
			in:      "hook:a\u200bb",
			wantErr: `session key "hook:a\u200bb": contains invisible formatting character U+200B at byte 6`,
		},
		"bidi override": {
			in:      "agent:a:\u202emain",
			wantErr: `session key "agent:a:\u202emain": contains invisible formatting character U+202E at byte 8`,
		},
		"unrecognised": {
			in:      "foo",
			wantErr: `session key "foo": not a recognised form; ` + wantAny,
		},
		"legacy direct is not a form": {
			in:      "telegram:direct:1",
			wantErr: `session key "telegram:direct:1": not a recognised form; ` + wantAny,
		},
		"upper-case main": {
			in:      "Main",
			wantErr: `session key "Main": keys are case-sensitive; write the form in lower case: ` + wantAny,
		},
		"upper-case prefix": {
			in:      "AGENT:a:main",
			wantErr: `session key "AGENT:a:main": keys are case-sensitive; write the form in lower case: ` + wantAny,
		},
		"empty agent id": {
			in:      "agent::main",
			wantErr: `session key "agent::main": agent id is empty; want agent:<agentId>:main`,
		},
		"empty agent id in group key": {
			in:      "agent::discord:group:1",
			wantErr: `session key "agent::discord:group:1": agent id is empty; want agent:<agentId>:<channel>:group:<id>`,
		},
		"empty agent id in subagent key": {
			in:      "agent::subagent:u",
			wantErr: `session key "agent::subagent:u": agent id is empty; want agent:<agentId>:subagent:<uuid>`,
		},
		"bare agent prefix": {
			in:      "agent:",
			wantErr: `session key "agent:": agent id is empty; want agent:<agentId>:main`,
		},
		"upper-case agent id": {
			in:      "agent:Research:main",
			wantErr: `session key "agent:Research:main": agent id "Research" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"agent id starts with dash": {
			in:      "agent:-a:main",
			wantErr: `session key "agent:-a:main": agent id "-a" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"agent id with dot": {
			in:      "agent:a.b:main",
			wantErr: `session key "agent:a.b:main": agent id "a.b" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"agent id of 65 chars": {
			in: "agent:" + strings.Repeat("a", 65) + ":main",
			wantErr: `session key "agent:` + strings.Repeat("a", 58) + `"... (76 bytes): agent id "` + strings.Repeat("a", 65) +
				`" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"nothing after agent id": {
			in:      "agent:a",
			wantErr: `session key "agent:a": nothing follows the agent id; want agent:a:main or agent:a:<channel>:group:<id>`,
		},
		"trailing colon after agent id": {
			in:      "agent:a:",
			wantErr: `session key "agent:a:": nothing follows the agent id; want agent:a:main or agent:a:<channel>:group:<id>`,
		},
		"empty segment after agent id": {
			in:      "agent:a::main",
			wantErr: `session key "agent:a::main": empty segment after the agent id; want agent:<agentId>:main`,
		},
		"main with trailing colon": {
			in:      "agent:a:main:",
			wantErr: `session key "agent:a:main:": has an empty segment ("::" or a trailing ':'); a value is missing`,
		},
		"other with empty segment": {
			in:      "agent:a:x::y",
			wantErr: `session key "agent:a:x::y": has an empty segment ("::" or a trailing ':'); a value is missing`,
		},
		"empty subagent id": {
			in:      "agent:a:subagent:",
			wantErr: `session key "agent:a:subagent:": subagent id is empty; want agent:<agentId>:subagent:<uuid>`,
		},
		"missing subagent id": {
			in:      "agent:a:subagent",
			wantErr: `session key "agent:a:subagent": subagent id is empty; want agent:<agentId>:subagent:<uuid>`,
		},
		"nested subagent id": {
			in:      "agent:a:subagent:u1:subagent:u2",
			wantErr: `session key "agent:a:subagent:u1:subagent:u2": subagent id "u1:subagent:u2" contains ':'; want agent:<agentId>:subagent:<uuid>`,
		},
		"empty group id": {
			in:      "agent:a:discord:group:",
			wantErr: `session key "agent:a:discord:group:": group id is empty; want agent:<agentId>:<channel>:group:<id>`,
		},
		"missing direct peer": {
			in:      "agent:a:telegram:direct",
			wantErr: `session key "agent:a:telegram:direct": direct id is empty; want agent:<agentId>:<channel>:direct:<id>`,
		},
		"group id with empty segment": {
			in:      "agent:a:discord:group:1::2",
			wantErr: `session key "agent:a:discord:group:1::2": has an empty segment ("::" or a trailing ':'); a value is missing`,
		},
		"upper-case channel": {
			in:      "agent:a:Discord:group:1",
			wantErr: `session key "agent:a:Discord:group:1": channel "Discord" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"empty cron id": {
			in:      "cron:",
			wantErr: `session key "cron:": job id is empty; want cron:<job.id>`,
		},
		"empty hook id": {
			in:      "hook:",
			wantErr: `session key "hook:": hook id is empty; want hook:<uuid>`,
		},
		"empty node id": {
			in:      "node-",
			wantErr: `session key "node-": node id is empty; want node-<nodeId>`,
		},
		"legacy empty group id": {
			in:      "discord:group:",
			wantErr: `session key "discord:group:": group id is empty; want discord:group:<id> (or agent:<agentId>:discord:group:<id>)`,
		},
		"legacy channel with a space": {
			in:      "Dis cord:group:1",
			wantErr: `session key "Dis cord:group:1": contains whitespace U+0020 at byte 3; keys have no spaces`,
		},
		"legacy upper-case channel": {
			in:      "Discord:channel:1",
			wantErr: `session key "Discord:channel:1": channel "Discord" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
		"legacy empty channel": {
			in:      ":group:1",
			wantErr: `session key ":group:1": channel "" is invalid: it must match [a-z0-9][a-z0-9_-]{0,63}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error %q", tc.in, got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("Parse(%q) error mismatch (-want +got):\n%s", tc.in, diff)
			}
			var perr *Error
			if !errors.As(err, &perr) || perr.Key != tc.in {
				t.Errorf("Parse(%q) error %T does not carry the key as *Error", tc.in, err)
			}
			if diff := cmp.Diff(Key{}, got); diff != "" {
				t.Errorf("Parse(%q) returned a key with its error (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestIsReserved(t *testing.T) {
	cases := map[string]bool{
		"global":               true,
		"unknown":              true,
		"main":                 false,
		"Global":               false,
		"agent:a:main":         false,
		"agent:global:main":    false,
		"agent:a:global":       false,
		"agent:unknown:main":   false,
		"":                     false,
		"discord:group:global": false,
	}
	for in, want := range cases {
		if got := IsReserved(in); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestConstructors(t *testing.T) {
	cases := map[string]struct {
		got, want string
		wantKey   Key
	}{
		"MainKey": {
			got:     MainKey("research"),
			want:    "agent:research:main",
			wantKey: Key{Raw: "agent:research:main", Kind: KindMain, AgentID: "research"},
		},
		"SubagentKey": {
			got:     SubagentKey("research", "0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01"),
			want:    "agent:research:subagent:0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01",
			wantKey: Key{Raw: "agent:research:subagent:0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01", Kind: KindOther, AgentID: "research", ID: "0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01", Subagent: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			k, err := Parse(tc.got)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.got, err)
			}
			if diff := cmp.Diff(tc.wantKey, k); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.got, diff)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cases := map[string]struct {
		in, agentID, want string
	}{
		"main":                   {in: "main", agentID: "research", want: "agent:research:main"},
		"global aliases to main": {in: "global", agentID: "research", want: "agent:research:main"},
		"unknown unchanged":      {in: "unknown", agentID: "research", want: "unknown"},
		"full main key of another agent": {
			in: "agent:ops:main", agentID: "research", want: "agent:ops:main",
		},
		"group unchanged":     {in: "agent:ops:discord:group:1", agentID: "research", want: "agent:ops:discord:group:1"},
		"cron unchanged":      {in: "cron:x", agentID: "research", want: "cron:x"},
		"case-sensitive":      {in: "Main", agentID: "research", want: "Main"},
		"empty agent id":      {in: "main", agentID: "", want: "agent::main"},
		"sessionId unchanged": {in: "0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01", agentID: "a", want: "0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Resolve(tc.in, tc.agentID)); diff != "" {
				t.Errorf("Resolve(%q, %q) mismatch (-want +got):\n%s", tc.in, tc.agentID, diff)
			}
		})
	}
}

func TestAgentOf(t *testing.T) {
	cases := map[string]string{
		"agent:research:main":         "research",
		"agent:ops:discord:group:1":   "ops",
		"agent:ops:telegram:direct:9": "ops",
		"agent:ops:subagent:u":        "ops",
		"agent:ops:anything":          "ops",
		"main":                        "",
		"global":                      "",
		"unknown":                     "",
		"cron:x":                      "",
		"hook:x":                      "",
		"node-x":                      "",
		"discord:group:1":             "",
		"agent:Ops:main":              "",
		"agent::main":                 "",
		"":                            "",
		"agent:ops:main\n":            "",
	}
	for in, want := range cases {
		if got := AgentOf(in); got != want {
			t.Errorf("AgentOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidAgentID(t *testing.T) {
	cases := map[string]bool{
		"a":                     true,
		"0":                     true,
		"a_b-c9":                true,
		strings.Repeat("a", 64): true,
		strings.Repeat("a", 65): false,
		"":                      false,
		"_a":                    false,
		"-a":                    false,
		"A":                     false,
		"a.b":                   false,
		"a:b":                   false,
		"é":                     false,
	}
	for in, want := range cases {
		if got := ValidAgentID(in); got != want {
			t.Errorf("ValidAgentID(%q) = %v, want %v", in, got, want)
		}
	}
}
