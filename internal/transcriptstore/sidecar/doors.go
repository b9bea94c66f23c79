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

package sidecar

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/a2aserver"
	"github.com/agent-sessions/agent-session-operator/internal/a2atools"
	"github.com/agent-sessions/agent-session-operator/internal/console"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// door is a row of the public listener: a route and how its handler is built from the
// dependencies. Which routes are doors, and how the shard front routes them, is declared in
// transcriptstore (routes.go); PublicMux refuses a route declared neither a door nor another
// route, and TestEveryDeclaredRouteHasARow a declared route without a row.
type door struct {
	route string
	build func(d *deps) (http.Handler, error)
}

// doors are the public listener's routes.
var doors = []door{
	{"/sessions/", history},
	{"/search", searchDoor},
	{"/events", eventStreams},
	// A stream's subscriptions (POST /events/{streamId}/subscriptions): the same handler,
	// which holds the open streams, not counted as a stream.
	{"/events/", func(d *deps) (http.Handler, error) { return d.eventsDoor, nil }},
	{"/mcp", asCaller(func(d *deps) (http.Handler, error) { return mcpserver.Handler(d.callers), nil })},
	{"/console/", asCaller(func(d *deps) (http.Handler, error) { return actions.Handler(d.callers), nil })},
	{a2aserver.Route, asCaller(a2a)},
	{transcriptstore.HooksRoute, asCaller(hooks)},
	{"/", func(*deps) (http.Handler, error) { return console.Handler(), nil }},
	{"/healthz", func(*deps) (http.Handler, error) { return http.HandlerFunc(ok), nil }},
	{"/readyz", readyz},
	{"/metrics", func(d *deps) (http.Handler, error) {
		return transcriptstore.MetricsAuth(d.authz, promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg})), nil
	}},
}

// publicHandler builds every row's handler and mounts them behind the shard front.
func publicHandler(d *deps) (http.Handler, error) {
	routes := make(map[string]http.Handler, len(doors))
	for _, r := range doors {
		h, err := r.build(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.route, err)
		}
		routes[r.route] = h
	}
	return transcriptstore.PublicMux(routes, d.cfg, d.log.WithName("front"))
}

// asCaller is a door that acts for a caller through impersonation: without API access
// (--insecure-no-auth) it cannot tell who calls, so it acts for nobody.
func asCaller(build func(d *deps) (http.Handler, error)) func(d *deps) (http.Handler, error) {
	return func(d *deps) (http.Handler, error) {
		if d.authz == nil {
			return transcriptstore.NoCallerAPI(), nil
		}
		return build(d)
	}
}

// limitStreams counts each request of h as one of its user's open streams.
func limitStreams(d *deps, h http.Handler) http.Handler {
	if d.authz == nil {
		return h // no user to count against
	}
	return transcriptstore.LimitStreams(h, d.authz.Identify, d.limits.Streams)
}

// authorizer is the access layer's authorizer; nil (not a nil pointer) without API access.
func (d *deps) authorizer() transcriptstore.Authorizer {
	if d.authz == nil {
		return nil
	}
	return d.authz
}

func history(d *deps) (http.Handler, error) {
	return transcriptstore.NewHistoryHandler(transcriptstore.HistoryOptions{
		Source: d.store, Authorizer: d.authorizer(), DefaultNamespace: d.cfg.DefaultNamespace, Log: d.log.WithName("history"),
		MaxStreamsPerUser: d.cfg.MaxStreamsPerUser, Streams: d.limits.Streams,
	}), nil
}

func searchDoor(d *deps) (http.Handler, error) {
	return transcriptstore.NewSearchHandler(transcriptstore.SearchOptions{Index: d.index, Sessions: d.objects,
		Authorizer: d.authorizer(), DefaultNamespace: d.cfg.DefaultNamespace, Log: d.log.WithName("search")}), nil
}

func eventStreams(d *deps) (http.Handler, error) { return limitStreams(d, d.eventsDoor), nil }

// a2a serves every Agent as an A2A agent; each request may wait for its task or stream it,
// so it counts as a stream.
func a2a(d *deps) (http.Handler, error) {
	var signer *a2aserver.CardSigner
	if len(d.cfg.A2ACardSigningKey) > 0 {
		key, err := a2atools.ParseSigningKey(d.cfg.A2ACardSigningKey)
		if err != nil {
			return nil, err
		}
		signer = a2aserver.NewCardSigner(key)
	}
	return limitStreams(d, a2aserver.Handler(a2aserver.Options{Callers: d.callers, Hub: d.hub, Signer: signer})), nil
}

func hooks(d *deps) (http.Handler, error) {
	c, err := client.New(d.rc, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	return transcriptstore.NewHookHandler(transcriptstore.HookOptions{Keys: d.keyring, Client: c, Clock: d.cfg.Clock,
		Registry: d.reg, Log: d.log.WithName("hooks")}), nil
}

func readyz(d *deps) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	}), nil
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
