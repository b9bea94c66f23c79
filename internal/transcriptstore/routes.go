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
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/a2aserver"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
)

// The public listener's routes. A door acts for a caller on sessions, sends and runs and
// asks the access layer (caller.Access, shared through KubeAuthorizer) before it does; the
// door matrix test (doors_envtest_test.go) needs rows for each. The other routes serve no
// caller's sessions: the console's static files, probes, and /metrics (its own review).
// A signed door acts on sessions and sends for a request that carries no token: a
// SessionHook delivery, authenticated by its signature with the hook's own secret
// (hooks.go); hooks_envtest_test.go holds its rows (signature, replay, unknown hook).
var (
	doors = []door{
		{route: "/sessions/", namespace: queryNamespace},
		{route: "/search", namespace: queryNamespace},
		{route: "/events", namespace: queryNamespace},
		{route: "/events/", namespace: queryNamespace},
		{route: "/mcp", namespace: mcpNamespace},
		{route: "/console/", namespace: mcpNamespace},
		{route: a2aserver.Route, namespace: pathNamespace(a2aserver.Route)},
	}
	// signedDoors act for no caller: a request is authenticated by its signature (hooks.go).
	signedDoors = []door{{route: HooksRoute, namespace: hookNamespace}}
	otherRoutes = []string{"/", "/healthz", "/readyz", "/metrics"}
)

// door is a public route that acts for a caller, and how its requests name the namespace
// they act in: the shard front routes each request by it, so a door routes by what it
// acts on (a path segment, the query), never by something else the request says. A new
// door declares its own.
type door struct {
	route string
	// namespace is the namespace r acts in; storeNamespace is the store's default one.
	// "" when r names none: it is served here (and answered 404 or 400 by the door).
	namespace func(r *http.Request, storeNamespace string) string
}

// queryNamespace is ?namespace=, else the store's namespace (the history API, /events,
// /search).
func queryNamespace(r *http.Request, storeNamespace string) string {
	return cmp.Or(r.URL.Query().Get("namespace"), storeNamespace)
}

// mcpNamespace is ?namespace=, else MCP's default (/mcp, the console's tools).
func mcpNamespace(r *http.Request, _ string) string {
	return cmp.Or(r.URL.Query().Get("namespace"), mcpserver.DefaultNamespace)
}

// pathNamespace is the path segment after prefix: prefix{namespace}/... (/a2a/, /hooks/).
// A query's namespace is not read: the door acts in the path's.
func pathNamespace(prefix string) func(*http.Request, string) string {
	return func(r *http.Request, _ string) string {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			return ""
		}
		ns, _, _ := strings.Cut(rest, "/")
		return ns
	}
}

// publicMux mounts handlers by route. A route in neither list is refused, so a new route
// is declared a door (and gets matrix rows) or not before the sidecar serves it.
func publicMux(handlers map[string]http.Handler) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	for route, h := range handlers {
		if !slices.Contains(DoorRoutes(), route) && !slices.Contains(routesOf(signedDoors), route) && !slices.Contains(otherRoutes, route) {
			return nil, fmt.Errorf("public route %q is neither a door nor another route (routes.go)", route)
		}
		mux.Handle(route, h)
	}
	return mux, nil
}

// frontDoors puts the shard front before each door (outermost: a request for another
// shard's namespace costs this store no review, stream or rate of the caller's), routing by
// the namespace the door acts in.
func frontDoors(routes map[string]http.Handler, front *owners, defaultNamespace string) {
	for _, d := range append(slices.Clone(doors), signedDoors...) {
		if h, ok := routes[d.route]; ok {
			routes[d.route] = front.front(h, func(r *http.Request) string { return d.namespace(r, defaultNamespace) })
		}
	}
}

// hookNamespace is the namespace of /hooks/{namespace}/{name}; "" for a path that names no
// hook, which this store answers (as it answers an unknown hook).
func hookNamespace(r *http.Request, _ string) string {
	ns, _, _ := HookPathNamespace(r.URL.Path)
	return ns
}

// PublicMux mounts the public listener's handlers by route, each door behind the shard front
// of cfg.Front (routing by the namespace the door acts in).
func PublicMux(handlers map[string]http.Handler, cfg SidecarConfig, log logr.Logger) (*http.ServeMux, error) {
	front, err := newOwners(cfg.Front, cfg.TLSCertDir, log)
	if err != nil {
		return nil, err
	}
	frontDoors(handlers, front, cfg.DefaultNamespace)
	return publicMux(handlers)
}

// PublicRoutes are every route the public listener serves: the doors, the signed doors
// and the other routes.
func PublicRoutes() []string {
	return slices.Concat(DoorRoutes(), routesOf(signedDoors), otherRoutes)
}

// DoorRoutes are the public routes that are doors.
func DoorRoutes() []string { return routesOf(doors) }

func routesOf(ds []door) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.route
	}
	return out
}
