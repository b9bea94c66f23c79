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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// spentCompaction spends a namespace's budget window with one turn, then asks the session
// for a compaction (kubectl sessions compact's annotation): the built manager must not call
// the priced model for it, the window must not move, and the session must say why.
func (e *env) spentCompaction(t *testing.T) {
	ctx := context.Background()
	ns := e.namespace(t, "spent-compaction")
	model := newPricedModel(t)
	key := "agent:dana:main"
	sess := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "dana"}}
	e.mustCreate(t,
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Budgets: &sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 8760 * time.Hour}, MaxTokens: ptr.To[int64](1)}}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llm", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			StringData: map[string]string{"key": "sk-test"}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dana"}, Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "priced-model", BaseURL: model.URL + "/v1",
				APIKeySecretRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "llm"}, Key: "key"},
				Pricing:         &sessionsv1alpha1.Pricing{InputPerMillion: "3", OutputPerMillion: "15", Currency: "USD"}},
			Memory: sessionsv1alpha1.MemorySpec{Compaction: sessionsv1alpha1.CompactionSpec{KeepRecentMessages: ptr.To[int32](0)}},
		}},
	)
	e.createSessions(t, sess)
	e.mustCreate(t, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spend"},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "spend the window", TimeoutSeconds: ptr.To[int32](60)}})
	e.waitTerminal(t, ns, 1, 0)
	spent := func() (int64, error) {
		p := &sessionsv1alpha1.SessionPolicy{}
		if err := e.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, p); err != nil || p.Status.Spend == nil {
			return 0, err
		}
		return p.Status.Spend.Tokens, nil
	}
	e.poll(t, "the turn's 12 tokens in the window", func() (bool, error) {
		n, err := spent()
		return n == 12, err
	})

	base := sess.DeepCopy()
	sess.Annotations = map[string]string{sessionsv1alpha1.CompactRequestAnnotation: "under-a-spent-window"}
	if err := e.k8s.Patch(ctx, sess, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	e.poll(t, "the compaction's refusal", func() (bool, error) {
		if err := e.k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess); err != nil {
			return false, err
		}
		_, asked := sess.Annotations[sessionsv1alpha1.CompactRequestAnnotation]
		refused, err := e.hasEvent(ctx, sess, sessionsv1alpha1.ReasonBudgetExceeded)
		return !asked && refused, err
	}, func() string {
		return fmt.Sprintf("%d compaction calls reached the priced model", model.compactions.Load())
	})
	if n := model.compactions.Load(); n != 0 {
		t.Errorf("%d compaction calls reached the priced model under a spent window", n)
	}
	if n, err := spent(); err != nil || n != 12 {
		t.Errorf("the window holds %d tokens (%v) after the refused compaction, want the turn's 12", n, err)
	}
	for _, r := range e.messages(t, sess) {
		if r.Message.Role == transcript.RoleCompaction {
			t.Errorf("a compaction record was made under a spent window: %q", text(r.Message))
		}
	}
}

// hasEvent: an Event with reason is recorded on obj.
func (e *env) hasEvent(ctx context.Context, obj client.Object, reason string) (bool, error) {
	var list eventsv1.EventList
	if err := e.k8s.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return false, err
	}
	for _, ev := range list.Items {
		if ev.Regarding.UID == obj.GetUID() && ev.Reason == reason {
			return true, nil
		}
	}
	return false, nil
}

// pricedModel is an OpenAI-compatible model that answers every call with 10 prompt and 2
// completion tokens, and counts the compaction steps it is asked.
type pricedModel struct {
	*httptest.Server
	compactions atomic.Int64
}

func newPricedModel(t *testing.T) *pricedModel {
	m := &pricedModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
			return
		}
		if strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, turns.CompactionStepPrefix) {
			m.compactions.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, req.Model)
	}))
	t.Cleanup(m.Close)
	return m
}
