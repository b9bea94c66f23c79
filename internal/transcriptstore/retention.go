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
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// DefaultArchivedRetention is how long archived transcripts are kept (30 days).
const DefaultArchivedRetention = 30 * 24 * time.Hour

// pruneEvery is how often archived transcripts are looked at under a retention of ten hours
// or more (a retention is counted in days); a shorter one is looked at a tenth as often as
// it lasts, at most once a minute (pruneInterval).
const pruneEvery = time.Hour

// pruneInterval is how often a retention is applied: what outlives it by at most a tenth.
func pruneInterval(retention time.Duration) time.Duration {
	return min(pruneEvery, max(time.Minute, retention/10))
}

// pruner is what the retention loop needs of the store.
type pruner interface {
	PruneArchived(retention time.Duration) (int, error)
}

// PruneArchived removes expired archived transcripts now and then every pruneInterval on
// clk, until ctx ends. retention <= 0 keeps them all.
func PruneArchived(ctx context.Context, p pruner, retention time.Duration, clk clock.WithTicker, log logr.Logger) {
	if retention <= 0 {
		return
	}
	t := clk.NewTicker(pruneInterval(retention))
	defer t.Stop()
	for {
		n, err := p.PruneArchived(retention)
		if err != nil {
			log.Error(err, "removing expired archived transcripts")
		}
		if n > 0 {
			log.Info("removed expired archived transcripts", "count", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}
