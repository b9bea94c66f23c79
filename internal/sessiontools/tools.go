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

// Package sessiontools is the seeds' session tools, defined once: sessions_list,
// sessions_history, sessions_search, sessions_send, sessions_spawn and agents_list, and the
// gateway's newer session_status, sessions (management) and sessions_yield. The turn runtime offers
// them to models and the transcript-store's MCP endpoint offers them to callers outside the
// cluster; both see the same names, schemas, arguments and result shapes.
//
// A tool runs as a Call: the namespace, the calling session (none for a person) and the
// clients it reads and writes with. Whose rights those clients carry is the host's choice
// (the manager's for a turn, the caller's by impersonation over MCP), so RBAC and the
// admission webhook judge whoever the host says is calling.
package sessiontools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Tool is one session tool: its definition and how it runs.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON schema of the arguments.
	Schema json.RawMessage
	Run    func(ctx context.Context, c *Call, args json.RawMessage) (any, error)
	// SessionOnly marks a tool that only a session can call (sessions_yield): doors that
	// speak as a person, the console, do not offer it.
	SessionOnly bool
	// Memory marks the memory tools, offered to a session only when its Agent enables
	// memory.
	Memory bool
}

// All is the session tools, in the order they are offered.
func All() []Tool {
	return []Tool{listTool(), historyTool(), searchTool(), sendTool(), spawnTool(), agentsListTool(), statusTool(), manageTool(), yieldTool(),
		memorySearchTool(), memoryGetTool(), memoryWriteTool()}
}

// Transcripts reads transcripts: the store in the manager, the local one in the sidecar.
type Transcripts = transcript.Reader

// Env is what the tools read and write with.
type Env struct {
	// Client creates SessionSends and SubagentRuns.
	Client client.Client
	// Reader lists and reads sessions, Agents and the SessionPolicy (a cache in the
	// manager).
	Reader client.Reader
	// APIReader confirms cache misses and reads what a tool just created; nil is Client.
	APIReader client.Reader
	// Watcher watches a SessionSend while sessions_send waits; nil offers no waiting.
	Watcher client.WithWatch
	// Store reads transcripts.
	Store Transcripts
	// Retired reads the records of retired sessions (objects the SessionPolicy's retention
	// deleted) and archived transcripts: sessions_list's archived rows, sessions_history of
	// an archived session and restore of a retired one. nil: none are found.
	Retired transcript.Retired
	// Clock bounds waits; nil is the real clock.
	Clock clock.WithTicker
	// Access asks the access layer whether the caller of a door has a right on an object of
	// the call's namespace ("" for the namespace); nil is the manager's own turns, where the
	// SessionPolicy's visibility alone decides. A door's host must set it.
	Access func(ctx context.Context, r caller.Right, name string) error
	// Embeddings is an Agent's embeddings provider with its key read from its Secret, handed
	// to the store with each recall; nil hands none (the store uses what it was last given).
	Embeddings func(ctx context.Context, a *sessionsv1alpha1.Agent) (*transcript.EmbeddingsSpec, error)
}

func (e *Env) apiReader() client.Reader {
	if e.APIReader != nil {
		return e.APIReader
	}
	return e.Client
}

// Now is the time on the Env's clock.
func (e *Env) Now() time.Time { return e.clock().Now() }

func (e *Env) clock() clock.WithTicker {
	if e.Clock != nil {
		return e.Clock
	}
	return clock.RealClock{}
}

func (e *Env) lookup() lookup.Lookup { return lookup.New(e.Reader, e.apiReader()) }

// Call is one call of a session tool.
type Call struct {
	*Env
	Namespace string
	// Session is the calling session and Agent its Agent; both nil for a person, who sees
	// every session of the namespace its RBAC lets it read and sends as nobody's session.
	Session *sessionsv1alpha1.AgentSession
	Agent   *sessionsv1alpha1.Agent
	// ID is the same on every repeat of the call: what the call creates is named from it,
	// so a repeated call finds its object instead of creating a second one.
	ID string
	// Stamp adds the host's labels and annotations (owner, hop count, trace) to an object
	// before it is created; nil adds none.
	Stamp func(ctx context.Context, obj client.Object) error
	// NoWait makes sessions_send return once its send is created (accepted, with its runId),
	// whatever its timeoutSeconds: the send still waits that long for its reply, and the
	// caller follows it (an MCP task, SendOutcome) rather than this call.
	NoWait bool
	// EmbeddingsGate judges and charges a recall's embeddings call; nil for a person.
	EmbeddingsGate EmbeddingsGate
}

// ObjectName names an object the call creates.
func (c *Call) ObjectName(prefix string) string {
	sum := sha256.Sum256([]byte(c.ID))
	return prefix + hex.EncodeToString(sum[:])[:20]
}

// callUUID is a UUID-shaped id derived from the call, for keys that must be known up front.
func (c *Call) callUUID() string {
	sum := sha256.Sum256([]byte("uuid/" + c.ID))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// agentID is the calling session's agent id; empty for a person.
func (c *Call) agentID() string {
	if c.Session == nil {
		return ""
	}
	return c.Session.Spec.AgentID
}

// sessionKey is the calling session's key; empty for a person.
func (c *Call) sessionKey() string {
	if c.Session == nil {
		return ""
	}
	return c.Session.Spec.Key
}

// sessionByKey is the session with key; a missing one is an error.
func (c *Call) sessionByKey(ctx context.Context, key string) (*sessionsv1alpha1.AgentSession, error) {
	s, err := c.lookup().SessionByKey(ctx, c.Namespace, key)
	if err == nil && s == nil {
		err = fmt.Errorf("session %q not found", key)
	}
	return s, err
}

// resolveSession finds a session by key, sessionId, or the alias main/global.
func (c *Call) resolveSession(ctx context.Context, ref string) (*sessionsv1alpha1.AgentSession, error) {
	s, err := c.lookup().ResolveSession(ctx, c.Namespace, ref, c.agentID())
	if err == nil && s == nil {
		err = notFoundError{ref: ref}
	}
	return s, err
}

// notFoundError is a session reference that names no session.
type notFoundError struct{ ref string }

func (e notFoundError) Error() string { return fmt.Sprintf("session %q not found", e.ref) }

// sessionPolicy reads the namespace's SessionPolicy; none is the zero policy.
func (c *Call) sessionPolicy(ctx context.Context) (*sessionsv1alpha1.SessionPolicy, error) {
	p, err := c.lookup().SessionPolicy(ctx, c.Namespace)
	if err == nil && p == nil {
		p = &sessionsv1alpha1.SessionPolicy{}
	}
	return p, err
}
