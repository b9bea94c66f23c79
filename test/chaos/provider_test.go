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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// providerFaults points an Agent at an OpenAI-compatible server that misbehaves the way
// providers do, one fault per send. A fault that goes away ends ok after retries; one that
// stays ends in error with a message that names it; none hangs.
func (e *env) providerFaults(t *testing.T) {
	ns := e.namespace(t, "provider-faults")
	srv := newFaultyProvider(t)
	e.mustCreate(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm",
			// No webhook in this suite vouches for it: it opts in.
			Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}}, StringData: map[string]string{"key": "sk-test"}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "carol"}, Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{
			Provider: sessionsv1alpha1.ProviderOpenAI, Name: "fake-model", BaseURL: srv.URL + "/v1",
			APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "llm"}, Key: "key"},
		}}},
	)
	cases := map[string]struct {
		wantStatus sessionsv1alpha1.SendStatus
		wantError  string
		notError   string
	}{
		"ok":            {wantStatus: sessionsv1alpha1.SendOK},
		"rate-limited":  {wantStatus: sessionsv1alpha1.SendOK},
		"server-errors": {wantStatus: sessionsv1alpha1.SendOK},
		"reset":         {wantStatus: sessionsv1alpha1.SendOK},
		"hang-once":     {wantStatus: sessionsv1alpha1.SendOK},
		"malformed":     {wantStatus: sessionsv1alpha1.SendError, wantError: "malformed"},
		"hang":          {wantStatus: sessionsv1alpha1.SendError, wantError: "no complete answer within the attempt timeout of " + attemptTimeout},
		// A status and the provider's error code reach the send, never the body's text.
		"unauthorized":   {wantStatus: sessionsv1alpha1.SendError, wantError: "auth (HTTP 401): test", notError: "invalid api key"},
		"bad-request":    {wantStatus: sessionsv1alpha1.SendError, wantError: `bad_request (HTTP 400) for model "fake-model": test`, notError: "context too long"},
		"always-failing": {wantStatus: sessionsv1alpha1.SendError, wantError: "server (HTTP 502): test", notError: "upstream exploded"},
	}
	// One session per fault: a hung provider holds only its own session's lane.
	var sessions []*sessionsv1alpha1.AgentSession
	var sends []client.Object
	for fault := range cases {
		key := "agent:carol:webchat:group:" + fault
		sessions = append(sessions, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "carol", ChatType: sessionsv1alpha1.ChatTypeGroup}})
		sends = append(sends, &sessionsv1alpha1.SessionSend{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fault},
			Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "fault=" + fault, TimeoutSeconds: ptr.To[int32](120)},
		})
	}
	e.createSessions(t, sessions...)
	e.mustCreate(t, sends...)
	ended, _ := e.waitTerminal(t, ns, len(cases), 0)
	for _, s := range ended {
		tc := cases[s.Name]
		st := s.Status
		if st.Status != tc.wantStatus {
			t.Errorf("send %s: status %s (error %q), want %s", s.Name, st.Status, st.Error, tc.wantStatus)
			continue
		}
		if tc.wantStatus == sessionsv1alpha1.SendOK && st.Reply != "reply to fault="+s.Name {
			t.Errorf("send %s: reply %q", s.Name, st.Reply)
		}
		if tc.wantError != "" && !strings.Contains(st.Error, tc.wantError) {
			t.Errorf("send %s: error %q does not say %q", s.Name, st.Error, tc.wantError)
		}
		if tc.notError != "" && strings.Contains(st.Error, tc.notError) {
			t.Errorf("send %s: error %q copies the provider's body %q", s.Name, st.Error, tc.notError)
		}
	}
	t.Logf("provider saw %d requests for %d sends", srv.total(), len(cases))
}

// faultyProvider answers chat completions; the fault is named in the user's message and
// counted per message, so "once" faults heal on the retry.
type faultyProvider struct {
	*httptest.Server
	mu       sync.Mutex
	attempts map[string]int
}

func newFaultyProvider(t *testing.T) *faultyProvider {
	p := &faultyProvider{attempts: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *faultyProvider) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.attempts {
		n += a
	}
	return n
}

func (p *faultyProvider) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	input := req.Messages[len(req.Messages)-1].Content
	if strings.HasPrefix(input, "Agent-to-agent announce step") {
		answer(w, sessionsv1alpha1.AnnounceSkip)
		return
	}
	_, fault, _ := strings.Cut(input, "fault=")
	if f := strings.Fields(fault); len(f) > 0 {
		fault = f[0]
	}
	p.mu.Lock()
	p.attempts[input]++
	attempt := p.attempts[input]
	p.mu.Unlock()

	switch {
	case fault == "rate-limited" && attempt == 1:
		w.Header().Set("Retry-After", "1")
		apiError(w, http.StatusTooManyRequests, "rate limit reached")
	case fault == "server-errors" && attempt <= 2:
		apiError(w, http.StatusInternalServerError, "internal error")
	case fault == "reset" && attempt == 1, fault == "hang-once" && attempt == 1, fault == "hang":
		if fault == "reset" {
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		<-r.Context().Done() // until the client gives up
	case fault == "malformed":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": [`)
	case fault == "unauthorized":
		apiError(w, http.StatusUnauthorized, "invalid api key")
	case fault == "bad-request":
		apiError(w, http.StatusBadRequest, "context too long")
	case fault == "always-failing":
		apiError(w, http.StatusBadGateway, "upstream exploded")
	default:
		answer(w, "reply to fault="+fault)
	}
}

func answer(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 3},
	})
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"test"}}`, msg)
}
