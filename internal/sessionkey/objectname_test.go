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
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestObjectName(t *testing.T) {
	// The hashes are pinned: object names are stored state, and a change to
	// the format would orphan every existing AgentSession.
	cases := map[string]struct {
		key  string
		want string
	}{
		"main key":           {key: "agent:research:main", want: "agent-research-main-" + hashOf("agent:research:main")},
		"group":              {key: "agent:a:discord:group:12345", want: "agent-a-discord-group-12345-" + hashOf("agent:a:discord:group:12345")},
		"upper case lowered": {key: "agent:a:slack:channel:C0ABC", want: "agent-a-slack-channel-c0abc-" + hashOf("agent:a:slack:channel:C0ABC")},
		"runs collapse, ends trimmed": {
			key: "agent:a:telegram:group:-100123:topic:42", want: "agent-a-telegram-group-100123-topic-42-" + hashOf("agent:a:telegram:group:-100123:topic:42"),
		},
		"leading non-alphanumeric":  {key: "::x", want: "x-" + hashOf("::x")},
		"trailing non-alphanumeric": {key: "node-x_", want: "node-x-" + hashOf("node-x_")},
		"nothing readable":          {key: "日本::", want: "session-" + hashOf("日本::")},
		"empty":                     {key: "", want: "session-" + hashOf("")},
		"underscores and dots":      {key: "cron:a_b.c", want: "cron-a-b-c-" + hashOf("cron:a_b.c")},
		"long key cut to 52":        {key: "cron:" + strings.Repeat("x", 100), want: "cron-" + strings.Repeat("x", 47) + "-" + hashOf("cron:"+strings.Repeat("x", 100))},
		"cut on a separator":        {key: strings.Repeat("a", 51) + ":b", want: strings.Repeat("a", 51) + "-" + hashOf(strings.Repeat("a", 51)+":b")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ObjectName(tc.key)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ObjectName(%q) mismatch (-want +got):\n%s", tc.key, diff)
			}
			checkName(t, tc.key, got)
		})
	}
}

// TestObjectNamePinned fixes one name literally, so that a change to the
// hash or its length cannot pass by changing hashOf along with ObjectName.
func TestObjectNamePinned(t *testing.T) {
	if got, want := ObjectName("agent:research:main"), "agent-research-main-"+"c5f70b5e09"; got != want {
		t.Errorf("ObjectName(agent:research:main) = %q, want %q", got, want)
	}
}

func TestObjectNameDistinct(t *testing.T) {
	// Keys that sanitize to the same prefix must still get different names.
	keys := []string{
		"agent:a:main", "agent-a-main", "agent:a:Main", "agent.a.main", "agent:a::main",
		"cron:" + strings.Repeat("x", 100), "cron:" + strings.Repeat("x", 101),
		"main", "global", "unknown", "", "日本", "日本語",
	}
	seen := map[string]string{}
	for _, k := range keys {
		name := ObjectName(k)
		if other, ok := seen[name]; ok {
			t.Errorf("ObjectName(%q) = ObjectName(%q) = %q", k, other, name)
		}
		seen[name] = k
		if again := ObjectName(k); again != name {
			t.Errorf("ObjectName(%q) not deterministic: %q then %q", k, name, again)
		}
	}
}

func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:10]
}

func checkName(t *testing.T, key, name string) {
	t.Helper()
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		t.Errorf("ObjectName(%q) = %q is not a DNS-1123 label: %v", key, name, errs)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		t.Errorf("ObjectName(%q) = %q is not a DNS-1123 subdomain: %v", key, name, errs)
	}
	if len(name) > validation.DNS1123LabelMaxLength {
		t.Errorf("ObjectName(%q) = %q is %d characters long", key, name, len(name))
	}
}

// A session's object name is made on every lookup and admission: one allocation, the name.
func TestObjectNameAllocatesOnlyTheName(t *testing.T) {
	key := "agent:main:discord:group:General-Chat"
	if allocs := testing.AllocsPerRun(50, func() { _ = ObjectName(key) }); allocs > 1 {
		t.Errorf("ObjectName allocates %.0f times, want 1", allocs)
	}
}
