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

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/webhook"
)

func init() {
	register("webhook", benchWebhook)
	register("list", benchList)
}

// benchWebhook measures the SessionSend validating handler per request, as SetupWithManager
// serves it: decode the AdmissionReview, gather inputs from an in-memory reader that copies
// like the manager's cache, decide, encode the answer.
func benchWebhook() ([]Figure, error) {
	objs := []client.Object{
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: "b"}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: "b"}},
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "b"}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Visibility:   sessionsv1alpha1.VisibilityAll,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}},
			SendPolicy:   sessionsv1alpha1.SendPolicySpec{Rules: []sessionsv1alpha1.SendRule{{Match: sessionsv1alpha1.SendRuleMatch{Channel: "discord", ChatType: sessionsv1alpha1.ChatTypeGroup}, Action: sessionsv1alpha1.ActionDeny}}},
		}},
	}
	for _, key := range []string{"agent:main:main", "agent:research:main"} {
		objs = append(objs, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: "b"},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: sessionkey.AgentOf(key)}})
	}
	reader := newCacheReader(objs...)
	// The manager's own send (a session tool's): the path every agent-made send takes.
	const manager = "system:serviceaccount:agent-sessions:manager"
	handler := webhook.NewSessionSendWebhook(webhook.NewSessionSendValidator(reader, nil, webhook.Options{ManagerUsername: manager}))
	send, _ := json.Marshal(&sessionsv1alpha1.SessionSend{
		TypeMeta:   metav1.TypeMeta{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SessionSend"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "b"},
		Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:research:main", Message: "ping", FromSessionKey: "agent:main:main"},
	})
	review, _ := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Namespace: "b", Name: "s",
			Kind:   metav1.GroupVersionKind{Group: sessionsv1alpha1.GroupVersion.Group, Version: "v1alpha1", Kind: "SessionSend"},
			Object: runtime.RawExtension{Raw: send}, UserInfo: authenticationv1.UserInfo{Username: manager}},
	})
	var failed bool
	ops := 0
	cpu0 := processCPUSeconds(os.Getpid())
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ops++
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(review))
			r.Header.Set("Content-Type", "application/json")
			handler.ServeHTTP(w, r)
			if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"allowed":true`)) {
				failed = true
			}
		}
	})
	cpu := (processCPUSeconds(os.Getpid()) - cpu0) / float64(ops) * 1e6
	if failed {
		return nil, errors.New("the validating handler did not allow the benchmark's send")
	}
	return []Figure{
		{Name: "webhook_validate_us", Value: float64(res.NsPerOp()) / 1e3, Unit: "us", Target: "< 50 (wall, one request after another: decode, judge, encode)"},
		{Name: "webhook_validate_cpu_us", Value: cpu, Unit: "cpu-µs", Target: "CPU of the bench process per request (every goroutine, GC included)"},
		{Name: "webhook_validate_allocs", Value: float64(res.AllocsPerOp()), Unit: "allocs/op", Target: "<= 80 (the same on any machine; 96 through controller-runtime's decoding)"},
	}, nil
}

// benchList measures the sessions_list rows over 10,000 sessions with a kinds filter, as
// the tool computes them from the cache.
func benchList() ([]Figure, error) {
	const n = 10000
	sessions := make([]sessionsv1alpha1.AgentSession, n)
	now := time.Now()
	for i := range sessions {
		kind, key := sessionsv1alpha1.SessionKind("group"), "agent:main:webchat:group:g"+strconv.Itoa(i)
		if i%10 == 0 {
			kind, key = "main", "agent:a"+strconv.Itoa(i)+":main"
		}
		t := metav1.NewTime(now.Add(-time.Duration(i) * time.Second))
		sessions[i] = sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"},
			Status: sessionsv1alpha1.AgentSessionStatus{Kind: kind, UpdatedAt: &t, Channel: "webchat", SessionID: strconv.Itoa(i)}}
	}
	p, _ := sessionrows.NewListParams([]string{"main"}, sessionrows.DefaultListLimit, 0, 0) // no messages: always in range
	ptrs := sessionrows.Pointers(sessions)
	res := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			if rows := sessionrows.ListRows(ptrs, p, now, nil); len(rows) != sessionrows.DefaultListLimit {
				b.Fatalf("%d rows", len(rows))
			}
		}
	})
	return []Figure{{Name: "sessions_list_ms", Value: float64(res.NsPerOp()) / 1e6, Unit: "ms", Target: "10,000 sessions, kinds filter"}}, nil
}
