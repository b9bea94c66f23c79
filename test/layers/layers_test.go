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

// Package layers_test checks the import layering: internal/transcript is the bottom of the
// transcript stack, and no package imports a package of a higher layer.
package layers_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agent-sessions/agent-session-operator/"

// layers lists the module's libraries bottom up. A package imports only packages of lower
// layers, or of its own layer under the same top directory (internal/transcript/client
// imports internal/transcript). A new package gets a row here. Only the packages' own
// imports count: a test may import a higher package to run the real thing.
var layers = [][]string{
	// leaves: the API types and helpers that import nothing of the module's
	{"api/v1alpha1", "internal/argocdhealth", "internal/certs", "internal/delivery/chatfake", "internal/egress",
		"internal/hookauth", "internal/mcptools/mcptest", "internal/memtune", "internal/sessionkey", "internal/shard",
		"internal/redact", "internal/sse", "internal/textutil", "internal/tracing", "internal/userlimits", "controllers/schema"},
	// types and rules over the API: the transcript's types, store and client among them
	{"internal/cacheindex", "internal/caller", "internal/delivery", "internal/eventrec", "internal/policy",
		"internal/protocol", "internal/provider", "internal/sandbox", "internal/sandbox/sandboxd", "internal/scheme", "internal/transcript",
		"internal/transcript/client", "internal/transcript/feed", "internal/transcript/memory", "internal/transcript/search", "internal/transcript/store",
		"internal/transcript/transcripttest",
		"internal/usage"},
	// look-ups and readers
	{"internal/events", "internal/lookup", "internal/secretaccess", "internal/sessionrows", "internal/testenv"},
	// the capabilities the engine is given: the budget ledger (judge and charge of every
	// model call, the namespace window, its gauges, the admission check) and the approval
	// desk (the engine's questions about tool calls that wait for a person)
	{"internal/approval", "internal/budget"},
	// the session tools and the agent's MCP tools
	{"internal/devcluster", "internal/mcptools", "internal/sessiontools"},
	// the agent's remote A2A agents, dialled under the MCP tools' egress and Secret rules
	{"internal/a2atools"},
	// the doors and the turn engine
	{"internal/cli", "internal/mcpserver", "internal/turns", "internal/turns/window", "webhook"},
	// what every reconciler shares: the step runner of the turn owners, the one status write,
	// conflicts, stale reads, outcomes, kstatus, TTLs
	{"controllers/ownerflow"},
	// announce delivery (the owner kinds and the ToolApproval controller share it), and the
	// owner kinds' unit-test fixture
	{"controllers/announce", "controllers/ownerflow/ownerflowtest"},
	// what serves them: the reconcilers (a package per kind), the console (its page and
	// actions)
	{"controllers/agent", "controllers/agentsession", "controllers/sessionhook", "controllers/sessionpolicy",
		"controllers/sessionschedule", "controllers/sessionsend", "controllers/subagentrun", "controllers/toolapproval",
		"internal/a2aserver", "internal/console", "internal/console/actions", "internal/mcpserver/mcpservertest"},
	// the one place that wires the reconcilers
	{"controllers"},
	// the transcript-store program: its doors, and its composition root (sidecar)
	{"internal/transcriptstore", "internal/transcriptstore/sidecar"},
	// test helpers and suites that run whole programs (controllers/managertest: the whole
	// manager for a suite)
	{"controllers/envtest", "controllers/envtest/approval", "controllers/envtest/memory", "controllers/envtest/storm", "controllers/managertest",
		"internal/console/browsertest",
		"internal/console/chromiumtest", "internal/transcriptstore/envtest",
		"internal/transcriptstore/sidecartest", "webhook/envtest"},
}

type pkg struct {
	ImportPath string
	Name       string
	Dir        string
	Imports    []string
}

// goList runs go list -json with args and decodes its stream of packages.
func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// TestTranscriptImportsNothingAbove: the transcript's types, store and client are what the
// tools, the events and the console are built on, so none of them is among their
// dependencies.
func TestTranscriptImportsNothingAbove(t *testing.T) {
	above := []string{"internal/mcpserver", "internal/sessiontools", "internal/events", "internal/console",
		"internal/transcriptstore"}
	for _, p := range goList(t, "-deps", module+"internal/transcript/...") {
		path := strings.TrimPrefix(p.ImportPath, module)
		for _, a := range above {
			if path == a || strings.HasPrefix(path, a+"/") {
				t.Errorf("internal/transcript/... depends on %s", path)
			}
		}
	}
}

// TestNoPackageImportsAHigherLayer checks every import between the module's libraries
// against layers, and that layers names each of them once.
func TestNoPackageImportsAHigherLayer(t *testing.T) {
	rank := map[string]int{}
	for i, layer := range layers {
		for _, p := range layer {
			if _, dup := rank[p]; dup {
				t.Errorf("%s is in two layers", p)
			}
			rank[p] = i
		}
	}
	seen := map[string]bool{}
	for _, p := range goList(t, module+"api/...", module+"controllers/...", module+"internal/...", module+"webhook/...") {
		from := strings.TrimPrefix(p.ImportPath, module)
		seen[from] = true
		r, ok := rank[from]
		if !ok {
			t.Errorf("%s has no layer: add it to layers", from)
			continue
		}
		for _, imp := range p.Imports {
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			rt, ok := rank[to]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no layer", from, to)
			case rt > r || rt == r && top(from) != top(to):
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", from, r, to, rt)
			}
		}
	}
	for p := range rank {
		if !seen[p] {
			t.Errorf("layers names %s, which go list does not list", p)
		}
	}
}

// top is a package's first two path elements: internal/transcript for internal/transcript/store.
func top(path string) string {
	parts := strings.SplitN(path, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}
