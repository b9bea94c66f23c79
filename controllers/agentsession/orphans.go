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

package agentsession

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// DefaultOrphanSweepInterval is how often the orphan sweep looks again after the one it
// makes when this replica starts leading. That one finds what a manager that was down, or
// whose cleanup queue went with its Pod, missed; the periodic ones find the rare transcript a
// reconcile created for a session deleted under it. An orphan costs only its file and a line
// of the store's index until then, and a sweep of 10,000 live sessions costs ten pages of
// the store's index and a read of the cache, so ten minutes is cheap and soon enough.
const DefaultOrphanSweepInterval = 10 * time.Minute

// orphanSweepRetry is how soon a sweep that failed (the store restarting) is tried again.
const orphanSweepRetry = time.Minute

// apiListPage bounds the pages of sessions the sweep reads from the API server.
const apiListPage = 500

// OrphanSweep is the safety net of the delete cleanup (cleanup.go): in each namespace of
// this manager's shard, a live transcript whose session no AgentSession holds any more is
// archived and its workspace removed. It runs on the leader only, once its cache has
// synced, and then every Interval.
//
// Only the manager creates transcripts (reconcileTranscript, reset, adopt), each for an
// object its cache already holds, so the sweep reads the store first and the objects after:
// a transcript listed belongs to an object the cache saw. Archived transcripts (an archived,
// retired or restorable session's) are not live and never listed. A transcript an adoption
// or a reset made live before its status write landed is held by the object that asked for
// it (transcriptsOf). And what the cache does not hold is asked of the API server before
// anything is archived: a shard's cache sees only objects with its label, and one made
// before the install was sharded has it only once the relabel is done.
type OrphanSweep struct {
	// Cache is the manager's: the sweep waits for it to sync and reads the sessions from it.
	Cache cache.Cache
	// APIReader reads the sessions the cache does not hold from the API server.
	APIReader client.Reader
	Store     transcript.Store
	// WorkspaceRoot holds the sessions' workspaces; empty: no workspaces.
	WorkspaceRoot string
	// Owns says which namespaces are this manager's shard's; nil owns every one.
	Owns func(namespace string) bool
	// Clock times the sweeps; nil is the real clock.
	Clock clock.Clock
	// Interval is the time between sweeps; <= 0 is DefaultOrphanSweepInterval.
	Interval time.Duration
}

// NeedLeaderElection: one replica sweeps.
func (o *OrphanSweep) NeedLeaderElection() bool { return true }

// Start sweeps once the AgentSession informer has synced, and every Interval after.
func (o *OrphanSweep) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("orphan-sweep")
	if _, err := o.Cache.GetInformer(ctx, &sessionsv1alpha1.AgentSession{}); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while it synced
		}
		return fmt.Errorf("orphan sweep: the AgentSession informer: %w", err)
	}
	if !o.Cache.WaitForCacheSync(ctx) {
		return nil // ended before the cache synced
	}
	clk, every := o.Clock, o.Interval
	if clk == nil {
		clk = clock.RealClock{}
	}
	if every <= 0 {
		every = DefaultOrphanSweepInterval
	}
	for {
		next := every
		n, err := o.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "orphan sweep failed; trying again", "in", orphanSweepRetry)
			next = min(every, orphanSweepRetry)
		}
		if n > 0 {
			log.Info("archived the transcripts of sessions that are gone", "transcripts", n)
		}
		t := clk.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Sweep archives the orphaned live transcripts of the shard's namespaces and says how many.
func (o *OrphanSweep) Sweep(ctx context.Context) (int, error) {
	namespaces, err := o.Store.LiveNamespaces(ctx)
	if err != nil {
		return 0, fmt.Errorf("live namespaces: %w", err)
	}
	total := 0
	var errs []error
	for _, ns := range namespaces {
		if o.Owns != nil && !o.Owns(ns) {
			continue
		}
		n, err := o.sweepNamespace(ctx, ns)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns, err))
		}
	}
	return total, errors.Join(errs...)
}

// sweepNamespace archives namespace's orphans: its live transcripts, less those its
// sessions hold in the cache, less those they hold on the API server.
func (o *OrphanSweep) sweepNamespace(ctx context.Context, namespace string) (int, error) {
	live, err := o.liveIDs(ctx, namespace)
	if err != nil || len(live) == 0 {
		return 0, err
	}
	cached := &sessionsv1alpha1.AgentSessionList{}
	// Read only: the cache's objects are not copied, a namespace's sessions may be many.
	if err := o.Cache.List(ctx, cached, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	orphans := unheld(live, cached.Items)
	if len(orphans) == 0 {
		return 0, nil
	}
	if orphans, err = o.unheldOnServer(ctx, namespace, orphans); err != nil {
		return 0, err
	}
	log := ctrl.LoggerFrom(ctx)
	for i, id := range orphans {
		log.V(2).Info("archiving the transcript of a session that is gone", "namespace", namespace, "sessionId", id)
		if err := archiveTranscript(ctx, o.Store, o.WorkspaceRoot, namespace, id); err != nil {
			return i, err
		}
	}
	return len(orphans), nil
}

// liveIDs are every live sessionId of namespace, page by page.
func (o *OrphanSweep) liveIDs(ctx context.Context, namespace string) ([]string, error) {
	var ids []string
	for after := ""; ; {
		page, err := o.Store.LiveSessionIDs(ctx, namespace, after, transcript.MaxLivePage)
		if err != nil {
			return nil, fmt.Errorf("live sessions: %w", err)
		}
		ids = append(ids, page...)
		if len(page) < transcript.MaxLivePage {
			return ids, nil
		}
		after = page[len(page)-1]
	}
}

// unheldOnServer is candidates less those the namespace's sessions on the API server hold.
func (o *OrphanSweep) unheldOnServer(ctx context.Context, namespace string, candidates []string) ([]string, error) {
	opts := []client.ListOption{client.InNamespace(namespace), client.Limit(apiListPage)}
	for {
		page := &sessionsv1alpha1.AgentSessionList{}
		if err := o.APIReader.List(ctx, page, opts...); err != nil {
			return nil, err
		}
		if candidates = unheld(candidates, page.Items); len(candidates) == 0 || page.Continue == "" {
			return candidates, nil
		}
		opts = []client.ListOption{client.InNamespace(namespace), client.Limit(apiListPage), client.Continue(page.Continue)}
	}
}

// unheld are the ids none of sessions holds: not its UID, nor its transcripts (transcriptsOf).
func unheld(ids []string, sessions []sessionsv1alpha1.AgentSession) []string {
	held := make(map[string]bool, 2*len(sessions))
	for i := range sessions {
		s := &sessions[i]
		current, pending := transcriptsOf(s)
		held[string(s.UID)], held[current], held[pending] = true, true, true
	}
	var out []string
	for _, id := range ids {
		if !held[id] {
			out = append(out, id)
		}
	}
	return out
}
