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
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// SidecarConfig is the transcript-store process configuration (its flags).
type SidecarConfig struct {
	DataDir          string
	Socket           string // unix socket path, or host:port on loopback
	Listen           string
	DefaultNamespace string
	Kubeconfig       string
	InsecureNoAuth   bool
	// TLSCertDir holds tls.crt and tls.key of the public listener; empty means a
	// self-signed certificate. With InsecureNoAuth the listener is plain HTTP.
	TLSCertDir string
	// Audiences are asked of history readers' tokens (TokenReview); empty means the API
	// server's own.
	Audiences []string
	// MaxStreamsPerUser bounds one user's open streams, /events, history and /mcp GET
	// together (0: DefaultMaxStreamsPerUser).
	MaxStreamsPerUser int
	// MaxMCPSessionsPerUser bounds one user's open MCP sessions, and MCPSessionIdleTimeout
	// closes one unused for that long (0: mcpserver's defaults).
	MaxMCPSessionsPerUser int
	MCPSessionIdleTimeout time.Duration
	// APIQPSPerUser and APIBurstPerUser are each user's share of the store's API calls made
	// on their behalf (0: DefaultAPIQPSPerUser, DefaultAPIBurstPerUser; a negative QPS: no
	// limit).
	APIQPSPerUser   float64
	APIBurstPerUser int
	// MCPAllowedHosts are the host names /mcp answers to besides localhost (DNS rebinding
	// protection); empty checks only the Origin.
	MCPAllowedHosts []string
	// ArchivedRetention is how long archived transcripts are kept; 0 keeps them forever.
	ArchivedRetention time.Duration
	// A2ACardSigningKey is the PEM private key (ECDSA P-256 or Ed25519) the agent cards are
	// signed with, its public half published at /a2a/.well-known/jwks.json; nil serves
	// them unsigned.
	A2ACardSigningKey []byte
	// Front passes requests for other shards' namespaces to their owner (an unsharded
	// install answers everything itself).
	Front FrontConfig
	// Clock drives the retention loop, the per-user rates and MCP idle expiry; nil is the
	// real clock.
	Clock           clock.WithTickerAndDelayedExecution
	ShutdownTimeout time.Duration
	Log             logr.Logger
	// Ready, when set, receives the bound addresses once both listeners are up.
	Ready func(socketAddr, listenAddr string)
}
