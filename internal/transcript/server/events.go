package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/go-logr/logr"
)

// newEventHub is the sidecar's live event hub; its epoch is the start time, so a client's
// Last-Event-ID from before a restart gets a reset.
func newEventHub() *events.Hub {
	return events.NewHub(events.DefaultLogSize, strconv.FormatInt(time.Now().UnixNano(), 36))
}

// publishCommits feeds the hub from the store's commits.
func publishCommits(hub *events.Hub) store.Option {
	return store.WithCommitHook(func(c store.Commit) {
		seqs := make([]int64, len(c.Events))
		lines := make([][]byte, len(c.Events))
		for i, e := range c.Events {
			seqs[i], lines[i] = e.Seq, e.Data
		}
		hub.PublishCommit(c.Header, seqs, lines, c.Stats)
	})
}

// newEventsHandler serves GET /events, judging each session with the history API's check
// (get agentsessions/transcript) as the caller; nil authz serves everyone (local runs).
func newEventsHandler(hub *events.Hub, authz Authorizer, defaultNamespace string, log logr.Logger) http.Handler {
	o := events.Options{
		Hub: hub, DefaultNamespace: defaultNamespace,
		Refuse: func(w http.ResponseWriter, err error) { refuseAuth(w, err, log) },
	}
	if authz != nil {
		o.Access = func(r *http.Request) events.Access {
			token, _ := bearerToken(r)
			return events.Access{
				Check: func(ctx context.Context, namespace, name string) error {
					if token == "" {
						return errNoToken
					}
					_, err := authz.Authorize(ctx, token, namespace, name)
					return err
				},
				Fatal: func(err error) bool { return errors.Is(err, ErrUnauthenticated) },
			}
		}
	}
	return events.NewHandler(o)
}
