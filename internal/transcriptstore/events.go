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
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewEventHub is the sidecar's live event hub; its epoch is the start time, so a client's
// Last-Event-ID from before a restart gets a reset.
func NewEventHub() *events.Hub {
	return events.NewHub(events.DefaultLogSize, strconv.FormatInt(time.Now().UnixNano(), 36))
}

// PublishCommits feeds the hub from the store's commits.
func PublishCommits(hub *events.Hub) store.Option {
	return store.WithCommitHook(func(c store.Commit) {
		seqs := make([]int64, len(c.Events))
		lines := make([][]byte, len(c.Events))
		for i, e := range c.Events {
			seqs[i], lines[i] = e.Seq, e.Data
		}
		hub.PublishCommit(c.Header, seqs, lines, c.Stats)
	})
}

// SessionResolver finds a live session by key or sessionId; *FileStore implements it.
type SessionResolver interface {
	Resolve(namespace, keyOrID string) (transcript.SessionHeader, error)
}

// NewEventsHandler serves GET /events and a stream's POST /events/{streamId}/subscriptions
// (mount it at /events and /events/), judging each session with the history API's check
// (the access layer's ReadTranscript) as the caller; nil authz serves everyone (local
// runs). resolver finds a followed session by key or sessionId, as the history API does
// (nil: by key only). A namespace stream opens only for a caller who may read some session
// of it: sessions lists the namespace's sessions to find one (nil: only a namespace-wide
// grant).
func NewEventsHandler(hub *events.Hub, authz Authorizer, resolver SessionResolver, sessions client.Reader, defaultNamespace string, log logr.Logger) http.Handler {
	o := events.Options{
		Hub: hub, DefaultNamespace: defaultNamespace,
		Refuse: func(w http.ResponseWriter, err error) { refuseAuth(w, err, log) },
	}
	if resolver != nil {
		o.Resolve = func(namespace, ref string) (events.Followed, bool) {
			hdr, err := resolver.Resolve(namespace, ref)
			return events.Followed{Key: hdr.SessionKey, Name: sessionName(hdr)}, err == nil
		}
	}
	if authz != nil {
		o.Access = func(r *http.Request) events.Access {
			token, _ := bearerToken(r)
			check := func(ctx context.Context, namespace, name string) error {
				if token == "" {
					return errNoToken
				}
				_, err := authz.Authorize(ctx, token, namespace, name)
				return err
			}
			return events.Access{
				Check: check,
				// A caller over their API rate is refused (429), or their stream ends to be
				// resumed with Last-Event-ID, rather than silently missing events.
				Fatal: func(err error) bool {
					return errors.Is(err, ErrUnauthenticated) || errors.Is(err, userlimits.ErrRateLimited)
				},
				Any: func(ctx context.Context, namespace string) error { return readsAny(ctx, check, sessions, namespace) },
			}
		}
	}
	return events.NewHandler(o)
}

// maxAdmitScan bounds the sessions asked about before a namespace stream opens for a caller
// without a namespace-wide grant: the most recently updated ones. A caller granted only an
// older session follows it with ?session=.
const maxAdmitScan = 100

// readsAny is nil when check allows the namespace as a whole or one of its maxAdmitScan
// most recently updated sessions. The access layer remembers each answer, so a reconnecting
// client costs no new reviews.
func readsAny(ctx context.Context, check func(ctx context.Context, namespace, name string) error, sessions client.Reader, namespace string) error {
	err := check(ctx, namespace, "")
	if err == nil || !errors.Is(err, ErrForbidden) {
		return err
	}
	names, lerr := newestNames(ctx, sessions, namespace, maxAdmitScan)
	if lerr != nil {
		return lerr
	}
	for _, name := range names {
		err := check(ctx, namespace, name)
		if err == nil || !errors.Is(err, ErrForbidden) {
			return err
		}
	}
	return fmt.Errorf("%w: the caller may read the transcript of no session in namespace %q (of its %d most recently updated); follow a session with ?session=",
		ErrForbidden, namespace, maxAdmitScan)
}

// newestNames are the object names of up to n of namespace's sessions, most recently
// updated first when the reader keeps that order.
func newestNames(ctx context.Context, sessions client.Reader, namespace string, n int) ([]string, error) {
	var names []string
	err := newest(ctx, sessions, namespace, func(s *sessionsv1alpha1.AgentSession) bool {
		names = append(names, s.Name)
		return len(names) < n
	})
	return names, err
}

// newest yields namespace's sessions most recently updated first (in the reader's order
// when it keeps one, else sorted) until yield returns false; a nil reader yields none.
func newest(ctx context.Context, sessions client.Reader, namespace string, yield func(*sessionsv1alpha1.AgentSession) bool) error {
	switch r := sessions.(type) {
	case nil:
		return nil
	case interface {
		Newest(namespace string, yield func(*sessionsv1alpha1.AgentSession) bool)
	}:
		r.Newest(namespace, yield)
		return nil
	}
	all, err := sessiontools.ListSessions(ctx, sessions, namespace)
	all = slices.Clone(all)
	slices.SortFunc(all, sessionrows.NewerFirst)
	for _, s := range all {
		if !yield(s) {
			break
		}
	}
	return err
}

// WatchObjects feeds the hub from an informer of sessions and watches of runs and tool
// approvals until ctx is done; nothing polls. Sends' changes come from the manager over the
// internal API (sendChangesHandler): the store watches no sends. The cache it returns holds sessions only (trimmed:
// cacheindex.ReaderCacheOptions), with the manager's session indexes and each namespace's
// sessions newest first, and answers /mcp's session reads. A shard's store (s) holds and
// follows only its own namespaces' objects: its front passes the others' requests on.
func WatchObjects(ctx context.Context, rc *rest.Config, hub *events.Hub, s shard.Shard, log logr.Logger) (cache.Cache, error) {
	opts := cacheindex.ReaderCacheOptions(s)
	opts.Scheme = scheme.New()
	c, err := cache.New(rc, opts)
	if err != nil {
		return nil, fmt.Errorf("event informers: %w", err)
	}
	w, err := client.NewWithWatch(rc, client.Options{Scheme: opts.Scheme})
	if err != nil {
		return nil, fmt.Errorf("event watches: %w", err)
	}
	if err := cacheindex.SessionIndexes(ctx, c); err != nil {
		return nil, fmt.Errorf("session indexes: %w", err)
	}
	if err := hub.Watch(ctx, c, w, s.Selector()); err != nil {
		return nil, fmt.Errorf("event informers: %w", err)
	}
	recency := sessionrows.NewRecency()
	inf, err := c.GetInformer(ctx, &sessionsv1alpha1.AgentSession{})
	if err == nil {
		_, err = inf.AddEventHandler(recency.Handler())
	}
	if err != nil {
		return nil, fmt.Errorf("session order: %w", err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			log.Error(err, "event informers stopped")
		}
	}()
	return recencyCache{Cache: c, Recency: recency}, nil
}

// recencyCache is the sidecar's cache with its sessions also kept newest first, for /mcp's
// sessions_list.
type recencyCache struct {
	cache.Cache
	*sessionrows.Recency
}
