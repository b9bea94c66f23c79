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

package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func TestSearchTable(t *testing.T) {
	res := transcript.SearchResult{Hits: []transcript.SearchHit{
		{SessionKey: "agent:main:main", Cursor: "seq:4", Role: "user", Excerpt: "tell me about llamas"},
		{SessionKey: "agent:research:main", Cursor: "seq:12", Role: "assistant", Excerpt: "…llamas are camelids"},
	}, NextOffset: 2}
	cases := map[string]struct {
		res     transcript.SearchResult
		output  string
		want    string
		wantErr bool
	}{
		"table with the next page": {res: res, want: "" +
			"SESSION              CURSOR  ROLE       EXCERPT\n" +
			"agent:main:main      seq:4   user       tell me about llamas\n" +
			"agent:research:main  seq:12  assistant  …llamas are camelids\n" +
			"more: --offset 2\n"},
		"no hits": {res: transcript.SearchResult{}, want: "SESSION  CURSOR  ROLE  EXCERPT\n"},
		"json":    {res: transcript.SearchResult{Hits: []transcript.SearchHit{}}, output: "json", want: "{\n  \"hits\": []\n}\n"},
		"yaml":    {res: res, output: "yaml", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := printSearch(&out, tc.res, tc.output)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if d := cmp.Diff(tc.want, out.String()); !tc.wantErr && d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
