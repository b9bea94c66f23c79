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

package transcriptstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The owners' addresses come from the operator's template or list, one per shard.
func TestOwnerURLs(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []string
	}{
		"template": {in: "https://aso-shard-{i}.ns.svc:8090", want: []string{"https://aso-shard-0.ns.svc:8090", "https://aso-shard-1.ns.svc:8090"}},
		"list":     {in: "https://127.0.0.1:1, https://127.0.0.1:2", want: []string{"https://127.0.0.1:1", "https://127.0.0.1:2"}},
		"too few":  {in: "https://127.0.0.1:1"},
		"no host":  {in: "shard-{i}"},
	} {
		urls, err := ownerURLs(tc.in, 2)
		var got []string
		for _, u := range urls {
			got = append(got, u.String())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || (err == nil) != (tc.want != nil) {
			t.Errorf("%s: ownerURLs(%q) = %v (-want +got):\n%s", name, tc.in, err, diff)
		}
	}
}
