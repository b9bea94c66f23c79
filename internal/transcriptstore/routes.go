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
	"fmt"
	"net/http"
	"slices"

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
	doorRoutes   = []string{"/sessions/", "/search", "/events", "/mcp", "/console/", "/a2a/"}
	signedRoutes = []string{HooksRoute}
	otherRoutes  = []string{"/", "/healthz", "/readyz", "/metrics"}
)

// publicMux mounts handlers by route. A route in neither list is refused, so a new route
// is declared a door (and gets matrix rows) or not before the sidecar serves it.
func publicMux(handlers map[string]http.Handler) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	for route, h := range handlers {
		if !slices.Contains(doorRoutes, route) && !slices.Contains(signedRoutes, route) && !slices.Contains(otherRoutes, route) {
			return nil, fmt.Errorf("public route %q is neither a door nor another route (routes.go)", route)
		}
		mux.Handle(route, h)
	}
	return mux, nil
}

// frontDoors puts the shard front before each door (outermost: a request for another
// shard's namespace costs this store no review, stream or rate of the caller's). The
// history API and /events default to the store's namespace, /mcp and the console to MCP's;
// /hooks/{namespace}/{name} names its namespace in the path.
func frontDoors(routes map[string]http.Handler, front *owners, defaultNamespace string) {
	for _, route := range doorRoutes {
		ns := defaultNamespace
		if route == "/mcp" || route == "/console/" {
			ns = mcpserver.DefaultNamespace
		}
		routes[route] = front.front(routes[route], ns)
	}
	if h, ok := routes[HooksRoute]; ok {
		routes[HooksRoute] = front.frontBy(h, func(r *http.Request) string {
			ns, _, _ := HookPathNamespace(r.URL.Path)
			return ns
		})
	}
}

// DoorRoutes are the public routes that are doors.
func DoorRoutes() []string { return slices.Clone(doorRoutes) }
