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

package mcpserver

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StatelessRevision is the first MCP revision without sessions (SEP-2575, SEP-2567): each
// request carries its own protocol version, in the Mcp-Protocol-Version header and in
// _meta. The Go SDK serves it only from a stateless handler, so /mcp keeps two: the
// stateful one for 2025-11-25 and older peers, which open with initialize, and a stateless
// one for requests that name this revision or a later one.
const StatelessRevision = "2026-07-28"

// Revisions are the MCP revisions /mcp negotiates, newest first.
var Revisions = []string{StatelessRevision, "2025-11-25"}

// speaksStateless tells whether r names the stateless revision or a later one. Revisions
// are dates, so they order as strings (the SDK compares them the same way).
func speaksStateless(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= StatelessRevision
}

// serveStateless serves one request of the stateless revision. There is no session to
// count, so the bounds are per request: the user's API rate for every POST, and the
// user's stream cap for a subscriptions/listen, which stays open as a GET stream would.
func (l *sessionLimiter) serveStateless(w http.ResponseWriter, r *http.Request, user string, next http.Handler) {
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r) // the SDK answers 405
		return
	}
	if err := l.lim.Rates.Exhausted(user); err != nil {
		refuse(w, r, err.Error())
		return
	}
	if m, _ := methodOf(r); m == "subscriptions/listen" && l.lim.Streams != nil {
		release, ok := l.lim.Streams.Acquire(user)
		if !ok {
			refuse(w, r, fmt.Sprintf("user %q has %d streams open (/events, history and /mcp together), the most allowed; "+
				"close one, or raise --max-streams-per-user", user, l.lim.Streams.Max()))
			return
		}
		defer release()
	}
	next.ServeHTTP(w, r)
}

// maxStatelessServers bounds the servers statelessServers keeps.
const maxStatelessServers = 256

// statelessServers keeps the stateless revision's servers by namespace and session: building
// one (its tools and their schemas) takes milliseconds, which every request would otherwise
// pay. The keys come from callers, so the cache starts over when full.
type statelessServers struct {
	build func(namespace, session string) *mcp.Server

	mu      sync.Mutex
	servers map[[2]string]*mcp.Server
}

func (c *statelessServers) get(r *http.Request) *mcp.Server {
	key := [2]string{namespaceOf(r), r.URL.Query().Get("session")}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.servers[key]; s != nil {
		return s
	}
	if c.servers == nil || len(c.servers) >= maxStatelessServers {
		c.servers = map[[2]string]*mcp.Server{}
	}
	s := c.build(key[0], key[1])
	c.servers[key] = s
	return s
}
