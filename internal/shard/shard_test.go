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

package shard

import (
	"strconv"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "1/2": {1, 2}, "3/4": {3, 4}} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1", "2/2", "-1/2", "0/0", "a/b", "1/2/3"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

// Every namespace has exactly one owner among n shards, the same every time, and the
// namespaces spread over the shards.
func TestEveryNamespaceHasOneOwner(t *testing.T) {
	const n = 3
	counts := make([]int, n)
	for i := range 3000 {
		ns := "team-" + strconv.Itoa(i)
		owners := 0
		for s := range n {
			if (Shard{Index: s, Count: n}).Owns(ns) {
				owners++
				counts[s]++
			}
		}
		if owners != 1 {
			t.Fatalf("namespace %s has %d owners", ns, owners)
		}
		if again := Of(ns, n); again != Of(ns, n) {
			t.Fatalf("namespace %s moved", ns)
		}
	}
	for s, c := range counts {
		if c < 800 {
			t.Errorf("shard %d owns %d of 3000 namespaces, want about 1000", s, c)
		}
	}
	if !(Shard{}).Owns("anything") || !(Shard{Index: 0, Count: 1}).Owns("anything") {
		t.Error("an unsharded manager must own every namespace")
	}
}

func TestLeaseName(t *testing.T) {
	if got := (Shard{}).LeaseName("op"); got != "op" {
		t.Errorf("unsharded lease %q", got)
	}
	if got := (Shard{Index: 1, Count: 2}).LeaseName("op"); got != "op-shard-1-of-2" {
		t.Errorf("shard lease %q", got)
	}
}
