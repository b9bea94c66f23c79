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

package sessiontools

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllowedAgents(t *testing.T) {
	cases := map[string]struct {
		allow, all []string
		want       []string
	}{
		"default: only itself": {want: []string{"main"}},
		"named":                {allow: []string{"research", "ops"}, want: []string{"main", "ops", "research"}},
		"star expands":         {allow: []string{"*"}, all: []string{"zeta", "main", "alpha"}, want: []string{"alpha", "main", "zeta"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AllowedAgents("main", tc.allow, tc.all)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolArguments(t *testing.T) {
	cases := map[string]struct {
		raw     string
		want    sendArgs
		wantErr bool
	}{
		"numbers as numbers":           {raw: `{"sessionKey":"k","message":"m","timeoutSeconds":5}`, want: sendArgs{SessionKey: "k", Message: "m", TimeoutSeconds: Number{Set: true, V: 5, F: 5}}},
		"numbers as strings":           {raw: `{"sessionKey":"k","message":"m","timeoutSeconds":"7"}`, want: sendArgs{SessionKey: "k", Message: "m", TimeoutSeconds: Number{Set: true, V: 7, F: 7}}},
		"fractions cut, kept as given": {raw: `{"timeoutSeconds":2.9}`, want: sendArgs{TimeoutSeconds: Number{Set: true, V: 2, F: 2.9}}},
		"null is empty":                {raw: `null`},
		"a word is not a number":       {raw: `{"timeoutSeconds":"soon"}`, wantErr: true},
		"not json":                     {raw: `{`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got sendArgs
			err := DecodeArgs(json.RawMessage(tc.raw), &got)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
