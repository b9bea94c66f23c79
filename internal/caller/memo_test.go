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

package caller

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestMemoRemembersUntilTTL(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	m := NewMemo[string](10*time.Second, clk)
	k := Key("alice", "list")
	if _, ok := m.Get(k); ok {
		t.Fatal("an empty memo answered")
	}
	m.Put(k, "yes")
	clk.SetTime(clk.Now().Add(9 * time.Second))
	if v, ok := m.Get(k); !ok || v != "yes" {
		t.Fatalf("within the TTL: %q, %v; want yes", v, ok)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if _, ok := m.Get(k); ok {
		t.Fatal("an answer outlived its TTL")
	}
}

func TestMemoKeysDoNotCollideAcrossParts(t *testing.T) {
	if Key("ab", "c") == Key("a", "bc") {
		t.Fatal(`Key("ab","c") == Key("a","bc")`)
	}
}

func TestMemoStaysBounded(t *testing.T) {
	m := NewMemo[int](time.Minute, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	for i := range maxMemoEntries + 5 {
		m.Put(Key(string(rune(i))), i)
	}
	if n := len(m.m); n > maxMemoEntries {
		t.Fatalf("memo holds %d entries, bound %d", n, maxMemoEntries)
	}
}

func TestMemoWithoutTTLRemembersNothing(t *testing.T) {
	m := NewMemo[int](0, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	m.Put(Key("x"), 1)
	if _, ok := m.Get(Key("x")); ok {
		t.Fatal("a memo with TTL 0 answered")
	}
}
