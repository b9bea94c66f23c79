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
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Cleanup archives a deleted session's transcript, removes its workspace and releases its
// sandbox claim, as the transcript finalizer did before the object could go: the
// AgentSession informer's delete event (the object's last state, or a tombstone's) queues
// a goneSession, and a failed step is retried with the queue's backoff. Every step is
// idempotent. No finalizer: a session costs no finalizer patch at creation and no
// deletionTimestamp write before its delete, and carries one managedFields entry less. A
// delete the manager never saw (it was down; its queue went with it) is the orphan
// sweep's (orphans.go).
type Cleanup struct {
	// Client reads the cache (a session recreated under the name) and deletes claims.
	Client client.Client
	Store  transcript.Store
	// WorkspaceRoot holds the sessions' workspaces; empty: no workspaces.
	WorkspaceRoot string
	// Sandboxes: a gone session's SandboxClaim is released.
	Sandboxes bool
	// Owns says which namespaces are this manager's shard's; nil owns every one.
	Owns func(namespace string) bool
}

// goneSession is a deleted session as its last state named it: the work queue's item.
type goneSession struct {
	types.NamespacedName
	UID types.UID
	// SessionID is the transcript the session held (transcriptsOf); Pending the one a
	// restore-from adoption or a reset may have made live before its status said so.
	SessionID, Pending string
}

// goneOf is the cleanup a deleted session s needs, if any. An archived session (the
// Archived condition true) has none: its transcript was archived, its workspace removed and
// its claim released before the status that says so was written. Retention deletes only
// archived sessions, so a retirement costs the store nothing more. A tombstone
// (stateUnknown: the informer missed the delete) may hold an older state than the last
// one, so it is cleaned up whatever it says.
func goneOf(s *sessionsv1alpha1.AgentSession, stateUnknown bool) (goneSession, bool) {
	if !stateUnknown && meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionArchived) {
		return goneSession{}, false
	}
	current, pending := transcriptsOf(s)
	return goneSession{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, UID: s.UID,
		SessionID: current, Pending: pending}, true
}

// transcriptsOf are the sessionIds whose live transcripts are session s's: current, its
// status.sessionId (its UID until the first status write lands: the transcript is created
// before it); pending, the one an adoption (adopt.go) or a reset (reset.go) in flight may
// have made live before the status write that records it, "" for none.
func transcriptsOf(s *sessionsv1alpha1.AgentSession) (current, pending string) {
	current = s.Status.SessionID
	if current == "" {
		current = string(s.UID)
	}
	if sid := adoptAsked(s); sid != "" {
		return current, sid
	}
	if old := resetAsked(s); old != "" {
		return current, nextSessionID(s.UID, old)
	}
	return current, ""
}

// Reconcile cleans up after one gone session.
func (c *Cleanup) Reconcile(ctx context.Context, g goneSession) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("agentSession", g.NamespacedName, "sessionId", g.SessionID)
	kept, err := c.keptByNewSession(ctx, g)
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, id := range []string{g.SessionID, g.Pending} {
		if id == "" || kept[id] {
			continue
		}
		if err := archiveTranscript(ctx, c.Store, c.WorkspaceRoot, g.Namespace, id); err != nil {
			return reconcile.Result{}, err
		}
	}
	if c.Sandboxes {
		if err := releaseClaims(ctx, c.Client, g.NamespacedName, g.UID); err != nil {
			return reconcile.Result{}, err
		}
	}
	log.V(2).Info("deleted session cleaned up: transcript archived, workspace removed")
	return reconcile.Result{}, nil
}

// keptByNewSession are the transcripts a session created since under the gone one's name
// holds: a restore of a retired session adopts its transcript under the same name, and a
// delete and restore in quick succession must not archive what the new object adopted.
func (c *Cleanup) keptByNewSession(ctx context.Context, g goneSession) (map[string]bool, error) {
	now := &sessionsv1alpha1.AgentSession{}
	if err := c.Client.Get(ctx, g.NamespacedName, now); err != nil || now.UID == g.UID {
		return nil, client.IgnoreNotFound(err)
	}
	current, pending := transcriptsOf(now)
	return map[string]bool{current: true, pending: true}, nil
}

// archiveTranscript archives namespace's transcript sid (the store keeps it, as
// *.deleted.<unix>, for its archived-transcript retention) and removes its workspace: an
// archived or deleted session runs no more turns, and files a sub-agent was handed must not
// outlive it on the shared volume. Both are idempotent.
func archiveTranscript(ctx context.Context, st transcript.Store, workspaceRoot, namespace, sid string) error {
	// Not found: the store no longer has it (its archived-transcript retention removed it),
	// or never had it (a session deleted before its first reconcile).
	if err := st.Archive(ctx, namespace, sid); err != nil && !errors.Is(err, transcript.ErrNotFound) {
		return fmt.Errorf("archive transcript: %w", err)
	}
	if workspaceRoot == "" {
		return nil
	}
	if err := os.RemoveAll(turns.WorkspaceDir(workspaceRoot, namespace, sid)); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	return nil
}

// SetupWithManager registers the cleanup as controller agentsession-cleanup, fed by the
// AgentSession informer's delete events, with concurrency workers.
func (c *Cleanup) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	onDelete := handler.TypedFuncs[*sessionsv1alpha1.AgentSession, goneSession]{
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*sessionsv1alpha1.AgentSession], q workqueue.TypedRateLimitingInterface[goneSession]) {
			if c.Owns != nil && !c.Owns(e.Object.Namespace) {
				return
			}
			if g, ok := goneOf(e.Object, e.DeleteStateUnknown); ok {
				q.Add(g)
			}
		},
	}
	return builder.TypedControllerManagedBy[goneSession](mgr).Named("agentsession-cleanup").
		WithOptions(controller.TypedOptions[goneSession]{MaxConcurrentReconciles: max(concurrency, 1)}).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &sessionsv1alpha1.AgentSession{}, onDelete)).
		Complete(c)
}
