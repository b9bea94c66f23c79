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

package userlimits_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// Each user has a bucket of their own: alice spending hers leaves bob's whole, and hers
// refills at the rate.
func TestRatesArePerUser(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	r := userlimits.NewRates(2, 3, clk)
	for i := range 3 {
		if err := r.Take("alice"); err != nil {
			t.Fatalf("alice's call %d within the burst: %v", i, err)
		}
	}
	if err := r.Take("alice"); !errors.Is(err, userlimits.ErrRateLimited) {
		t.Fatalf("alice over the burst: %v, want ErrRateLimited", err)
	}
	if err := r.Exhausted("alice"); !errors.Is(err, userlimits.ErrRateLimited) {
		t.Fatalf("alice's bucket not seen empty: %v", err)
	}
	if err := r.Limiter("alice").Wait(context.Background()); !errors.Is(err, userlimits.ErrRateLimited) {
		t.Fatalf("client-go's Wait for alice over the rate: %v, want ErrRateLimited at once", err)
	}
	if err := r.Exhausted("bob"); err != nil {
		t.Fatalf("bob refused for alice's calls: %v", err)
	}
	if err := r.Take("bob"); err != nil {
		t.Fatalf("bob refused for alice's calls: %v", err)
	}
	clk.SetTime(clk.Now().Add(500 * time.Millisecond)) // one token at 2/s
	if err := r.Take("alice"); err != nil {
		t.Fatalf("alice after her bucket refilled: %v", err)
	}
	if r := userlimits.NewRates(0, 0, clk); r.Take("anyone") != nil || r.Exhausted("anyone") != nil {
		t.Fatal("qps 0 limits someone")
	}
}

// Streams are counted per user against one maximum, and a release counts once.
func TestStreamsPerUser(t *testing.T) {
	s := userlimits.NewStreams(2)
	r1, ok1 := s.Acquire("alice")
	_, ok2 := s.Acquire("alice")
	_, ok3 := s.Acquire("alice")
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("alice's three streams at max 2: %v %v %v", ok1, ok2, ok3)
	}
	if _, ok := s.Acquire("bob"); !ok {
		t.Fatal("bob refused for alice's streams")
	}
	r1()
	r1()
	if _, ok := s.Acquire("alice"); !ok {
		t.Fatal("alice refused after a release")
	}
	if _, ok := s.Acquire("alice"); ok {
		t.Fatal("a double release freed two slots")
	}
}
