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


package policy

import (
	"regexp"
	"strings"
	"testing"
)

// TestCarriedChecksMatchTheGrammar holds the byte-loop checks of a carried chain to the
// grammar the extension's reference gives, as regular expressions.
func TestCarriedChecksMatchTheGrammar(t *testing.T) {
	grammar := map[string]struct {
		re    *regexp.Regexp
		check func(string) bool
	}{
		"id":   {regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`), carriedIDOK},
		"pair": {regexp.MustCompile(`^[0-9a-f]{16}$`), func(s string) bool { return lowerHexOK(s, 16) }},
		"seal": {regexp.MustCompile(`^[0-9a-f]{32}$`), func(s string) bool { return lowerHexOK(s, 32) }},
		"cost": {regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,9})?$`), decimalOK},
		"root": {regexp.MustCompile(`^(SessionSend|SubagentRun)/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`), carriedRootOK},
	}
	inputs := []string{"", "a", "A", "0", "-", ".", ":", "_", "/", " ", "é", "0123456789abcdef", "0123456789ABCDEF", "0123456789abcdeg",
		"0123456789abcde", "0123456789abcdef0", strings.Repeat("ab", 16), strings.Repeat("ab", 17), strings.Repeat("x", 128), strings.Repeat("x", 129),
		"6f0d1c2e-4b7a-4e0f-9c1d-2a3b4c5d6e7f", "uid:1.2_3", "1", "1.", ".5", "0.25", "123456789", "1234567890", "1.123456789", "1.1234567890",
		"1.2.3", "+1", "-1", "1e3", "SessionSend/seed", "SubagentRun/r-1.a", "SessionSend/", "SessionSend/-a", "SessionSend/a-", "SessionSend/a.",
		"SessionSend/A", "SessionSend/a_b", "Other/a", "SessionSend/a/b", "SubagentRun/" + strings.Repeat("a", 253), "SubagentRun/" + strings.Repeat("a", 254),
		"sessionsend/a", "SessionSend/0", "SessionSend/a--b", "SessionSend/a..b"}
	for name, g := range grammar {
		for _, in := range inputs {
			if want, got := g.re.MatchString(in), g.check(in); got != want {
				t.Errorf("%s %q: check says %v, the grammar %v", name, in, got, want)
			}
		}
	}
}
