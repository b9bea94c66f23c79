//go:build cluster

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

package cluster

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/test/cluster/harness"
)

const (
	statefulSet = "agent-session-operator-controller-manager"
	// claimPrefix + i is the claim the StatefulSet's template makes for shard i.
	claimPrefix = "transcripts-" + statefulSet + "-"
)

// shardPVs provides the two claims of a two-shard install: the harness's StorageClass has no
// provisioner, so each claim gets a local PersistentVolume of its own, bound to it ahead
// (claimRef), in a directory of the work directory that the test can look into.
func shardPVs(ctx context.Context, t *testing.T) [2]string {
	t.Helper()
	var dirs [2]string
	for i := range dirs {
		dirs[i] = filepath.Join(cl.WorkDir, fmt.Sprint("pv-shard-", i))
		if err := os.MkdirAll(dirs[i], 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dirs[i], 65532, 65532); err != nil {
			t.Fatal(err)
		}
		apply(ctx, t, harness.LocalPVYAML(fmt.Sprint("transcripts-shard-", i), dirs[i], operatorNS+"/"+claimPrefix+fmt.Sprint(i)))
	}
	return dirs
}

// ownedBy is a namespace name shard i of 2 owns, by the operator's own hash.
func ownedBy(i int) string {
	for n := 0; ; n++ {
		if ns := fmt.Sprint("shard-test-", n); shard.Of(ns, 2) == i {
			return ns
		}
	}
}

// echoIn creates namespace ns with an Agent that echoes (and answers "slow" after 30s) and
// its session agent:echo:main.
func echoIn(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	apply(ctx, t, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)+slowAgentYAML(ns, "echo"))
}

// send creates a send into ns's agent:echo:main; timeoutSeconds 0 makes it fire-and-forget,
// so its status shows the run started.
func send(ctx context.Context, t *testing.T, ns, name, message string, timeoutSeconds int) {
	t.Helper()
	apply(ctx, t, fmt.Sprintf(`apiVersion: sessions.agents.dev/v1alpha1
kind: SessionSend
metadata: {name: %s, namespace: %s}
spec: {sessionKey: "agent:echo:main", message: %q, timeoutSeconds: %d}
`, name, ns, message, timeoutSeconds))
}

func waitReply(ctx context.Context, t *testing.T, ns, name, want string) {
	t.Helper()
	kubectl(ctx, t, "-n", ns, "wait", "--for=condition=Completed", "sessionsend/"+name, "--timeout="+objectTimeout.String())
	got := kubectl(ctx, t, "-n", ns, "get", "sessionsend/"+name, "-o", "jsonpath={.status.status} {.status.reply}")
	if got != "ok "+want && got != "accepted "+want {
		t.Errorf("send %s/%s: %q, want ok (or accepted) %s", ns, name, got, want)
	}
}

// frontRequest is a request to a transcript-store through addr, as a caller with token; MCP
// wants a Host it allows (localhost), which the front passes on.
func frontRequest(ctx context.Context, t *testing.T, method, addr, path, token, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "https://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "localhost"
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: historyTLS(ctx, t)}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mcpThroughFront opens an MCP session for ns through addr and lists its tools.
func mcpThroughFront(ctx context.Context, t *testing.T, addr, ns, token string) {
	t.Helper()
	path := "/mcp?namespace=" + ns
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	resp := frontRequest(ctx, t, http.MethodPost, addr, path, token,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cluster-test","version":"0"}}}`, h)
	id := resp.Header.Get("Mcp-Session-Id")
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize through shard 0: %d, session %q: %s", resp.StatusCode, id, body)
	}
	h["Mcp-Session-Id"] = id
	resp = frontRequest(ctx, t, http.MethodPost, addr, path, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	if body := readAll(t, resp); resp.StatusCode/100 != 2 {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}
	resp = frontRequest(ctx, t, http.MethodPost, addr, path, token, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"sessions_history"`) {
		t.Fatalf("tools/list through shard 0: %d %s", resp.StatusCode, body)
	}
}

// transcriptDirs lists the directories named ns under dir (a shard's volume).
func transcriptDirs(t *testing.T, dir, ns string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ns {
			found = append(found, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// twoShards upgrades the Helm release to shards: 2 (a StatefulSet, a volume and a Service
// per shard) and proves the shard front, a loop between shards stopped by the chain
// limits, and a shard's failover under the real kubelet.
func twoShards(ctx context.Context, t *testing.T) {
	dirs := shardPVs(ctx, t)
	helm(ctx, t, "upgrade", "agent-session-operator", filepath.Join(cl.RepoRoot, "dist", "chart"),
		"--namespace", operatorNS, "--reuse-values", "--set", "shards=2", "--wait", "--timeout", rolloutTimeout.String())
	kubectl(ctx, t, "-n", operatorNS, "rollout", "status", "statefulset/"+statefulSet, "--timeout="+rolloutTimeout.String())
	kubectl(ctx, t, "-n", operatorNS, "wait", "--for=delete", "deploy/"+deployment, "--timeout="+rolloutTimeout.String())
	waitWebhookService(ctx, t)

	ns0, ns1 := ownedBy(0), ownedBy(1)
	echoIn(ctx, t, ns0)
	echoIn(ctx, t, ns1)
	send(ctx, t, ns0, "first", "hello zero", 30)
	send(ctx, t, ns1, "first", "hello one", 30)
	waitReply(ctx, t, ns0, "first", "echo: hello zero")
	waitReply(ctx, t, ns1, "first", "echo: hello one")

	// Shard 1's session through shard 0's Service: history, /events, /mcp.
	reader := serviceAccountToken(ctx, t, "history-reader", "agent-session-operator-agent-sessions-view", historyAudience)
	front := kubectl(ctx, t, "-n", operatorNS, "get", "svc", "agent-session-operator-shard-0", "-o", "jsonpath={.spec.clusterIP}") + ":8090"
	if got := readHistoryIn(ctx, t, front, ns1, "agent:echo:main", reader).counts(); got["assistant: echo: hello one"] != 1 {
		t.Fatalf("history of %s through shard 0: %v", ns1, got)
	}
	// The stream ends with its context: a missing event fails the test, not hangs it.
	ectx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	var events *http.Response
	if err := harness.Poll(ctx, objectTimeout, "/events of "+ns1+" through shard 0", func() error {
		events = frontRequest(ectx, t, http.MethodGet, front, "/events?kinds=session.message&namespace="+ns1, reader, "", nil)
		if events.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %s", events.StatusCode, readAll(t, events))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	send(ctx, t, ns1, "second", "hello again", 30)
	er := sse.NewReader(events.Body)
	ev, err := er.Next() // the stream's id
	if err == nil {
		ev, err = er.Next()
	}
	_ = events.Body.Close()
	if err != nil || !strings.Contains(string(ev.Data), "hello again") {
		t.Fatalf("/events of %s through shard 0: %v %s", ns1, err, ev.Data)
	}
	waitReply(ctx, t, ns1, "second", "echo: hello again")
	mcpThroughFront(ctx, t, front, ns1, reader)
	searchAndA2AThroughFront(ctx, t, front, ns0, ns1, reader)
	// Two Agents on different shards calling each other's /a2a stop at the in-cluster limits.
	shardLoop(ctx, t, ns0, ns1)

	// Shard 1's Pod deleted while a send in its namespace runs.
	pod1 := statefulSet + "-1"
	uid := kubectl(ctx, t, "-n", operatorNS, "get", "pod", pod1, "-o", "jsonpath={.metadata.uid}")
	send(ctx, t, ns1, "slow", "slow please", 0)
	waitRunning(ctx, t, ns1, "slow")
	kubectl(ctx, t, "-n", operatorNS, "delete", "pod", pod1, "--wait=false")
	start := time.Now()
	send(ctx, t, ns0, "during", "while one is down", 30)
	waitReply(ctx, t, ns0, "during", "echo: while one is down")
	t.Logf("shard 0's send finished %s after shard 1's Pod was deleted; shard 1: %s", time.Since(start).Round(time.Second),
		kubectl(ctx, t, "-n", operatorNS, "get", "pod", pod1, "--ignore-not-found", "-o", "jsonpath={.metadata.uid} {.status.containerStatuses[*].ready}"))

	if err := harness.Poll(ctx, rolloutTimeout, "shard 1's new Pod ready", func() error {
		out, err := cl.Kubectl(ctx, "-n", operatorNS, "get", "pod", pod1, "-o", "jsonpath={.metadata.uid}|{.status.containerStatuses[*].ready}")
		if err != nil || strings.HasPrefix(out, uid) || !strings.HasSuffix(out, "|true true") {
			return fmt.Errorf("%s %v", out, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitReply(ctx, t, ns1, "slow", "done slowly")
	counts := readHistoryIn(ctx, t, front, ns1, "agent:echo:main", reader).counts()
	for _, want := range []string{"user: hello one", "assistant: echo: hello one", "user: hello again", "assistant: echo: hello again", "user: slow please", "assistant: done slowly"} {
		if counts[want] != 1 {
			t.Errorf("%q appears %d times in %s's transcript, want once: %v", want, counts[want], ns1, counts)
		}
	}
	// Each namespace's transcripts are on its shard's volume and only there.
	for i, ns := range []string{ns0, ns1} {
		if own, other := transcriptDirs(t, dirs[i], ns), transcriptDirs(t, dirs[1-i], ns); len(own) == 0 || len(other) != 0 {
			t.Errorf("%s (shard %d): on its volume %v, on the other's %v", ns, i, own, other)
		}
	}
	t.Logf("%s on shard 0, %s on shard 1; Pod %s (%s) deleted mid-send, its successor finished it: %v", ns0, ns1, pod1, uid, counts)
}

// searchAndA2AThroughFront asks shard 0's Service for what only shard 1 holds: a search of
// ns1's transcripts (routed by ?namespace=), and the card of ns1's Agent echo with a query
// that names ns0 (routed by the path the A2A door acts in, whatever the query says).
func searchAndA2AThroughFront(ctx context.Context, t *testing.T, front, ns0, ns1, token string) {
	t.Helper()
	if err := harness.Poll(ctx, objectTimeout, "/search of "+ns1+" through shard 0", func() error {
		resp := frontRequest(ctx, t, http.MethodGet, front, "/search?q=again&namespace="+ns1, token, "", nil)
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "hello again") {
			return fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	resp := frontRequest(ctx, t, http.MethodGet, front, "/a2a/"+ns1+"/echo/.well-known/agent-card.json?namespace="+ns0, token, "", nil)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"echo"`) {
		t.Fatalf("the A2A card of %s's echo through shard 0: %d %s", ns1, resp.StatusCode, body)
	}
}
