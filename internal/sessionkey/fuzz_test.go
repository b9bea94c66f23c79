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
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

// seedKeys start both fuzzers; the committed corpus under testdata/fuzz adds
// more. Keys reach the parser from kubectl, from agents' tool calls and from
// channel plugins, so it must hold for any byte string.
var seedKeys = []string{
	"main", "global", "unknown", "agent:a:main", "agent::main", "agent:a:discord:group:1",
	"agent:a:slack:channel:C1:thread:2", "agent:a:telegram:direct:+1", "agent:a:subagent:u",
	"agent:a:x", "cron:j", "hook:h", "node-n", "discord:group:1", "", "\xff", "a\u202eb",
}

func FuzzParse(f *testing.F) {
	for _, s := range seedKeys {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		if err != nil {
			checkRefused(t, s, k, err)
			return
		}
		checkParsed(t, s, k)
	})
}

// checkRefused holds what a refused key must give: an *Error naming it, no parts, no agent.
func checkRefused(t *testing.T, s string, k Key, err error) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) || perr.Key != s {
		t.Fatalf("Parse(%q) error %v is not an *Error for the key", s, err)
	}
	if k != (Key{}) {
		t.Fatalf("Parse(%q) returned %+v with error %v", s, k, err)
	}
	if AgentOf(s) != "" {
		t.Fatalf("AgentOf(%q) = %q for an invalid key", s, AgentOf(s))
	}
}

// checkParsed holds what an accepted key must give: a round trip, a bounded clean text, a
// known kind, parts that agree with the key's own helpers.
func checkParsed(t *testing.T, s string, k Key) {
	t.Helper()
	if k.Raw != s {
		t.Fatalf("Parse(%q).Raw = %q", s, k.Raw)
	}
	again, err := Parse(k.Raw)
	if err != nil {
		t.Fatalf("Parse(Parse(%q).Raw): %v", s, err)
	}
	if diff := cmp.Diff(k, again); diff != "" {
		t.Fatalf("Parse(%q) does not round-trip (-first +second):\n%s", s, diff)
	}
	if s == "" || len(s) > MaxLen || !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\x00") {
		t.Fatalf("Parse accepted %q", s)
	}
	switch k.Kind {
	case KindMain, KindGroup, KindCron, KindHook, KindNode, KindOther:
	default:
		t.Fatalf("Parse(%q).Kind = %q", s, k.Kind)
	}
	if k.AgentID != "" {
		if !ValidAgentID(k.AgentID) || !strings.HasPrefix(s, "agent:"+k.AgentID+":") {
			t.Fatalf("Parse(%q).AgentID = %q", s, k.AgentID)
		}
		if k.Kind == KindMain && s != MainKey(k.AgentID) {
			t.Fatalf("Parse(%q) is main but not MainKey(%q)", s, k.AgentID)
		}
		if k.Subagent && s != SubagentKey(k.AgentID, k.ID) {
			t.Fatalf("Parse(%q) is a subagent but not SubagentKey(%q, %q)", s, k.AgentID, k.ID)
		}
	}
	if k.Channel != "" && !ValidAgentID(k.Channel) {
		t.Fatalf("Parse(%q).Channel = %q", s, k.Channel)
	}
	if k.Kind == KindGroup && k.ChatType != ChatTypeGroup && k.ChatType != ChatTypeChannel {
		t.Fatalf("Parse(%q) is a group with chat type %q", s, k.ChatType)
	}
	if AgentOf(s) != k.AgentID {
		t.Fatalf("AgentOf(%q) = %q, Parse says %q", s, AgentOf(s), k.AgentID)
	}
	if c := ChannelOf(k, "", ""); c == "" {
		t.Fatalf("ChannelOf(Parse(%q)) is empty", s)
	}
	if r := Resolve(s, "a"); r != s {
		if (s != Main && s != Global) || r != MainKey("a") {
			t.Fatalf("Resolve(%q, a) = %q", s, r)
		}
	}
}

func FuzzObjectName(f *testing.F) {
	for _, s := range seedKeys {
		f.Add(s)
	}
	f.Add(strings.Repeat("-", 70) + "x")
	f.Add(strings.Repeat("a", 52) + "-b")
	f.Fuzz(func(t *testing.T, s string) {
		name := ObjectName(s)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("ObjectName(%q) = %q: %v", s, name, errs)
		}
		if again := ObjectName(s); again != name {
			t.Fatalf("ObjectName(%q) not deterministic: %q then %q", s, name, again)
		}
		if !strings.HasSuffix(name, "-"+hashOf(s)) {
			t.Fatalf("ObjectName(%q) = %q does not end in its hash", s, name)
		}
	})
}
