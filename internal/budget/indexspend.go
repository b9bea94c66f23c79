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

package budget

import (
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// IndexSpendInterval is how often the manager collects what the transcript-store's memory
// indexer embedded: the most a namespace's window can be behind the indexer's spend.
const IndexSpendInterval = 10 * time.Second

// IndexCharger applies judge, then charge to the embeddings the transcript-store's memory
// indexer makes on the append path, which no turn asks for: it collects what they owe,
// charges it to each namespace's window (PurposeEmbedding), and tells the store which
// namespaces' windows are spent, whose indexing then waits. It runs on the leader only.
type IndexCharger struct {
	Gate  Gate
	Store transcript.IndexSpender
	// Every is the collection interval (0: IndexSpendInterval).
	Every time.Duration

	ack transcript.IndexSpendAck
}

// Start collects every interval until ctx ends.
func (c *IndexCharger) Start(ctx context.Context) error {
	every := c.Every
	if every <= 0 {
		every = IndexSpendInterval
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := c.Collect(ctx); err != nil {
			klog.FromContext(ctx).V(2).Info("collecting the memory indexer's spend failed; tried again next interval", "error", err.Error())
		}
	}, every)
	return nil
}

// Collect is one collection: the last tally acknowledged with the namespaces held, the new
// tally charged, and the namespaces judged again for the next. A failed call keeps the
// acknowledgement for the next one; the store takes a tally off what is owed only once.
// A namespace whose judge fails (the cache) keeps the hold it had.
func (c *IndexCharger) Collect(ctx context.Context) error {
	s, err := c.Store.IndexSpend(ctx, c.ack)
	if err != nil {
		return err
	}
	for ns, tokens := range s.Owed {
		c.Gate.Charge(ctx, indexCall(ns), usage.Turn{Input: tokens})
	}
	next := transcript.IndexSpendAck{Tally: s.ID}
	var errs []error
	for _, ns := range s.Namespaces {
		err := c.Gate.Judge(ctx, indexCall(ns))
		if errors.Is(err, ErrExceeded) || (err != nil && slices.Contains(c.ack.Held, ns)) {
			next.Held = append(next.Held, ns)
		}
		if err != nil && !errors.Is(err, ErrExceeded) {
			errs = append(errs, err)
		}
	}
	c.ack = next
	return errors.Join(errs...)
}

// indexCall is the indexer's embeddings in ns as budgets see them: no owner, the namespace's
// window only, one turn id per namespace (owners count turns, a window does not).
func indexCall(ns string) Call {
	return Call{Namespace: ns, Turn: "memory-index/" + ns, Purpose: PurposeEmbedding}
}
