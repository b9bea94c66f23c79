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
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"
)

type countingPruner struct {
	calls     atomic.Int32
	retention atomic.Int64
}

func (p *countingPruner) PruneArchived(r time.Duration) (int, error) {
	p.retention.Store(int64(r))
	p.calls.Add(1)
	return 0, nil
}

// The sidecar prunes at start and then every hour of its clock, with the flag's retention.
func TestPruneArchivedLoop(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := &countingPruner{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); PruneArchived(ctx, p, 720*time.Hour, clk, logr.Discard()) }()

	waitFor := func(n int32) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); p.calls.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d prunes, want %d", p.calls.Load(), n)
			}
		}
	}
	waitFor(1)
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(pruneEvery)
	waitFor(2)
	if got := time.Duration(p.retention.Load()); got != 720*time.Hour {
		t.Errorf("retention %v, want 720h", got)
	}
	cancel()
	<-done

	off := &countingPruner{}
	PruneArchived(t.Context(), off, 0, clk, logr.Discard()) // returns at once
	if off.calls.Load() != 0 {
		t.Errorf("retention 0 pruned %d times", off.calls.Load())
	}
}

func TestPruneInterval(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		720 * time.Hour:  time.Hour, // the default: hourly
		10 * time.Hour:   time.Hour,
		2 * time.Hour:    12 * time.Minute,
		15 * time.Minute: 90 * time.Second,
		5 * time.Minute:  time.Minute, // never more often than once a minute
		time.Second:      time.Minute,
	}
	for retention, want := range cases {
		if got := pruneInterval(retention); got != want {
			t.Errorf("pruneInterval(%v) = %v, want %v", retention, got, want)
		}
	}
}
