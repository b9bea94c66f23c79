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

package redact

import "testing"

func TestRedact(t *testing.T) {
	cases := map[string]struct {
		in, want string
		redacted bool
	}{
		"plain text":         {in: "the build passed at 10:42", want: "the build passed at 10:42"},
		"openai key":         {in: "use sk-abcdefghijklmnop0123456789 now", want: "use [REDACTED] now", redacted: true},
		"anthropic key":      {in: "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAA", want: "[REDACTED]", redacted: true},
		"github token":       {in: "token ghp_0123456789abcdefghijABCDEFGHIJ", want: "token [REDACTED]", redacted: true},
		"slack token":        {in: "xoxb-1234567890-abcdefghij", want: "[REDACTED]", redacted: true},
		"aws key id":         {in: "AKIAABCDEFGHIJKLMNOP", want: "[REDACTED]", redacted: true},
		"bearer header":      {in: "Authorization: Bearer abcdefghijklmnopqrstuvwxyz", want: "Authorization: [REDACTED]", redacted: true},
		"jwt":                {in: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", want: "[REDACTED]", redacted: true},
		"password assign":    {in: "password=hunter2hunter2", want: "password=[REDACTED]", redacted: true},
		"json api_key":       {in: `{"api_key": "abcd1234efgh5678"}`, want: `{"api_key": "[REDACTED]"}`, redacted: true},
		"short value kept":   {in: "token: abc", want: "token: abc"},
		"private key block":  {in: "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\ny", want: "x\n[REDACTED]\ny", redacted: true},
		"word sk- is kept":   {in: "ask-me later", want: "ask-me later"},
		"two secrets in one": {in: "sk-abcdefghijklmnop0123 and ghp_0123456789abcdefghijABCD", want: "[REDACTED] and [REDACTED]", redacted: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, redacted := Redact(tc.in)
			if got != tc.want || redacted != tc.redacted {
				t.Errorf("Redact(%q) = %q, %v; want %q, %v", tc.in, got, redacted, tc.want, tc.redacted)
			}
		})
	}
}
