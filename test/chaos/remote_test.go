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

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// endlessRemote is an Agent's remote A2A agents answering without end: one a message/send
// whose JSON never closes, one a message/stream of events that never ends. Each call fails
// with the error that names the A2A read limit, the manager's peak memory stays near where
// it was, and the manager goes on to answer the next send.
func (e *env) endlessRemote(t *testing.T) {
	ns := e.namespace(t, "endless-remote")
	flood, stream := endlessA2A(t, false), endlessA2A(t, true)
	call := func(match, tool string) sessionsv1alpha1.ScriptRule {
		return sessionsv1alpha1.ScriptRule{Match: match, Reply: "{{toolResults}}",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: tool, Arguments: &runtime.RawExtension{Raw: []byte(`{"message":"hi"}`)}}}}
	}
	const key = "agent:taker:main"
	e.mustCreate(t, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taker"}, Spec: sessionsv1alpha1.AgentSpec{
		Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			call("^flood", "a2a__flood"), call("^stream", "a2a__stream"), {Match: "^ping", Reply: "pong"}}},
		Tools: sessionsv1alpha1.ToolsSpec{A2AAgents: []sessionsv1alpha1.A2AAgent{{Name: "flood", URL: flood.URL}, {Name: "stream", URL: stream.URL}}},
	}})
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "taker", ChatType: sessionsv1alpha1.ChatTypeDirect}}
	e.createSessions(t, s)
	peakBefore := peakRSS(t, e.cluster.ManagerPID())

	send := func(name, message string) {
		e.mustCreate(t, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: message, TimeoutSeconds: ptr.To[int32](300)}})
	}
	send("flood", "flood")
	e.waitTerminal(t, ns, 1, 0)
	send("stream", "stream")
	e.waitTerminal(t, ns, 2, 0)
	send("ping", "ping")
	sends, _ := e.waitTerminal(t, ns, 3, 0)
	for _, sd := range sends {
		if sd.Name == "ping" && (sd.Status.Status != sessionsv1alpha1.SendOK || sd.Status.Reply != "pong") {
			t.Errorf("after the endless remotes, ping ended %s %q: want ok pong", sd.Status.Status, sd.Status.Reply)
		}
	}
	if err := e.k8s.Get(context.Background(), client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, r := range e.messages(t, s) {
		if r.Message.Role == transcript.RoleToolResult {
			results = append(results, text(r.Message))
		}
	}
	if len(results) != 2 {
		t.Fatalf("tool results %q, want the two calls'", results)
	}
	for _, res := range results {
		if !strings.Contains(res, "read limit of 8 MiB (--a2a-read-limit)") {
			t.Errorf("tool result %.300q, want the error naming the A2A read limit", res)
		}
	}
	peakAfter := peakRSS(t, e.cluster.ManagerPID())
	t.Logf("manager peak RSS: %d MiB before the endless remotes, %d MiB after", peakBefore>>20, peakAfter>>20)
	// The limit is 8 MiB a call: the decoders hold a few times that at most.
	if grown := peakAfter - peakBefore; grown > 128<<20 {
		t.Errorf("the manager's peak RSS grew by %d MiB over the endless answers, want under 128 MiB", grown>>20)
	}
}

// endlessA2A is a remote A2A agent whose card is valid and whose every answer has no end.
func endlessA2A(t *testing.T, streaming bool) *httptest.Server {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card, _ := json.Marshal(map[string]any{"name": "endless", "description": "never stops", "url": srv.URL + "/rpc",
		"preferredTransport": "JSONRPC", "protocolVersion": "0.3.0", "version": "1",
		"capabilities": map[string]any{"streaming": streaming}, "defaultInputModes": []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"}, "skills": []any{}})
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(card)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
		chunk := strings.Repeat("x", 64<<10)
		if streaming {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; r.Context().Err() == nil; i++ {
				if _, err := fmt.Fprintf(w, `data: {"jsonrpc":"2.0","id":%s,"result":{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a%d","parts":[{"kind":"text","text":"%s"}]}}}`+"\n\n",
					req.ID, i, chunk[:4000]); err != nil {
					return
				}
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"`, req.ID)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	})
	return srv
}

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the manager (pid %d) is gone: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
