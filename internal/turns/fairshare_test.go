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

package turns

import (
	"context"
	"errors"
	"testing"
)

// TestFairShareNamespaceCannotHoldEverySlot: with 4 slots and 2 per namespace, a namespace
// whose turns hang holds 2 slots, and another namespace still gets the other 2.
func TestFairShareNamespaceCannotHoldEverySlot(t *testing.T) {
	f := newFairShare(4, 2)
	ctx := context.Background()
	var held []func()
	for range 2 {
		rel, err := f.acquire(ctx, "noisy")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, rel)
	}
	// A third turn of the noisy namespace waits for its namespace, not for the global bound.
	blocked, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.acquire(blocked, "noisy"); !errors.Is(err, context.Canceled) {
		t.Fatalf("third noisy turn acquired a slot (err %v); the namespace bound is 2", err)
	}
	for range 2 {
		rel, err := f.acquire(live(t), "quiet")
		if err != nil {
			t.Fatalf("quiet namespace starved: %v", err)
		}
		held = append(held, rel)
	}
	// Now every global slot is taken: a third namespace waits.
	if _, err := f.acquire(blocked, "third"); err == nil {
		t.Fatal("a fifth turn ran with a global bound of 4")
	}
	for _, rel := range held {
		rel()
	}
	if n := f.namespaces(); n != 0 {
		t.Errorf("%d namespaces remembered after every turn ended, want 0", n)
	}
}

// live is a context that stays open for the test: acquire must take a free slot.
func live(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

func TestFairSharePerNamespaceDefaultsToTotal(t *testing.T) {
	cases := map[string]struct{ total, per, want int }{
		"unset":        {4, 0, 4},
		"above total":  {4, 9, 4},
		"below total":  {64, 16, 16},
		"single slot":  {1, 1, 1},
		"negative per": {8, -1, 8},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := newFairShare(tc.total, tc.per).perNS; got != tc.want {
				t.Errorf("perNS = %d, want %d", got, tc.want)
			}
		})
	}
}
