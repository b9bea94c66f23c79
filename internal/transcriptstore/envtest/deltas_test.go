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

package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// A reply streamed slowly by a real model server reaches /events as session.delta events
// before its message record, through the manager's client, the internal socket and the hub;
// a caller who may not read the session sees none of it.
var _ = Describe("live replies on /events", Ordered, func() {
	const ns = "team-deltas"
	const mine, other = "agent:d:mine", "agent:d:other"
	var (
		eventsURL        string
		reader, outsider string
		tc               *transcriptclient.Client
	)
	ctx, cancel := context.WithCancel(context.Background())

	BeforeAll(func() {
		DeferCleanup(cancel)
		k8s, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		reader = grant(ctx, ns, readTranscripts(mine), "reader")[0]
		outsider = grantAnother(ctx, ns, "outsider", readTranscripts(other))

		hub := events.NewHub(0, "t")
		st, err := store.OpenFileStore(GinkgoT().TempDir(), transcriptstore.PublishCommits(hub))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		objects, err := transcriptstore.WatchObjects(ctx, cfg, hub, shard.Shard{}, GinkgoLogr)
		Expect(err).NotTo(HaveOccurred())
		authz, err := transcriptstore.NewKubeAuthorizer(cfg)
		Expect(err).NotTo(HaveOccurred())
		srv := httptest.NewServer(transcriptstore.NewEventsHandler(hub, authz, st, objects, ns, GinkgoLogr))
		DeferCleanup(srv.Close)
		eventsURL = srv.URL + "/events?namespace=" + ns

		sock := filepath.Join(GinkgoT().TempDir(), "t.sock")
		ln, err := net.Listen("unix", sock)
		Expect(err).NotTo(HaveOccurred())
		api := &http.Server{Handler: transcriptstore.NewAPIHandler(st, nil, hub)}
		go func() { _ = api.Serve(ln) }()
		DeferCleanup(api.Close)
		tc = transcriptclient.NewClient(sock)

		for _, key := range []string{mine, other} {
			Expect(k8s.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "d"}})).To(Succeed())
			_, err = tc.CreateSession(ctx, transcript.SessionHeader{Namespace: ns, SessionID: sessionkey.ObjectName(key), SessionKey: key})
			Expect(err).NotTo(HaveOccurred())
		}
	})

	// watch opens a stream as token (once RBAC has reached the authorizer) and hands on
	// its events.
	watch := func(token, query string) <-chan sse.Event {
		resp := openStream(ctx, eventsURL+query, token)
		DeferCleanup(resp.Body.Close)
		out := make(chan sse.Event, 256)
		go func() {
			defer close(out)
			r := sse.NewReader(resp.Body)
			for {
				ev, err := r.Next()
				if err != nil {
					return
				}
				out <- ev
			}
		}()
		return out
	}

	It("streams the reply's pieces to its readers only, then its one record", func() {
		mineStream := watch(reader, "&session="+url.QueryEscape(mine))
		theirStream := watch(outsider, "")

		// The model writes its reply in five chunks, slower than the pieces are coalesced.
		chunks := []string{"Once ", "upon ", "a ", "time, ", "the end."}
		model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i, c := range chunks {
				finish := "null"
				if i == len(chunks)-1 {
					finish = `"stop"`
				}
				_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", c, finish)
				w.(http.Flusher).Flush()
				time.Sleep(3 * transcriptclient.DeltaInterval)
			}
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
		}))
		DeferCleanup(model.Close)
		p, err := provider.New(provider.Config{Provider: provider.OpenAI, Model: "m", BaseURL: model.URL, HTTPClient: model.Client(), Stream: true})
		Expect(err).NotTo(HaveOccurred())

		const runID = "uid-1/round-1"
		w := tc.LiveReply(ns, sessionkey.ObjectName(mine), runID, 1)
		resp, err := p.Complete(provider.WithTextDeltas(ctx, w.Write), provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "a story"}}})
		Expect(err).NotTo(HaveOccurred())
		w.Flush()
		Expect(resp.Text).To(Equal(strings.Join(chunks, "")))
		_, err = tc.Append(ctx, ns, sessionkey.ObjectName(mine), transcript.AppendRequest{Message: transcript.Message{
			Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: resp.Text}},
		}})
		Expect(err).NotTo(HaveOccurred())

		var pieces []events.SessionDelta
		var text string
		for done := false; !done; {
			var ev sse.Event
			Eventually(mineStream, timeout).Should(Receive(&ev))
			switch ev.Event {
			case events.KindSessionDelta:
				var d events.SessionDelta
				Expect(json.Unmarshal(ev.Data, &d)).To(Succeed())
				Expect(d.SessionKey).To(Equal(mine))
				Expect(d.RunID).To(Equal(runID))
				Expect(d.Seq).To(Equal(int64(len(pieces) + 1)))
				pieces = append(pieces, d)
				text += d.Text
			case events.KindSessionMessage:
				done = true
			}
		}
		Expect(len(pieces)).To(BeNumerically(">=", 2), "pieces before the record: %v", pieces)
		Expect(resp.Text).To(HavePrefix(text))

		// The outsider's stream is live (it sees its own session's message) and saw no piece.
		_, err = tc.Append(ctx, ns, sessionkey.ObjectName(other), transcript.AppendRequest{Message: transcript.Message{
			Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hi"}},
		}})
		Expect(err).NotTo(HaveOccurred())
		for {
			var ev sse.Event
			Eventually(theirStream, timeout).Should(Receive(&ev))
			Expect(ev.Event).NotTo(Equal(events.KindSessionDelta))
			Expect(string(ev.Data)).NotTo(ContainSubstring(mine))
			if ev.Event == events.KindSessionMessage {
				break
			}
		}
	})
})

// grantAnother adds the ServiceAccount sa to an existing namespace, bound to its own Role of
// rules, and returns its token.
func grantAnother(ctx context.Context, namespace, sa string, rules []rbacv1.PolicyRule) string {
	core, err := coreclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	rbac, err := rbacclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	_, err = rbac.Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = core.ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = rbac.RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: namespace}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return requestTokenIn(ctx, core, namespace, sa)
}

// openStream GETs url as token until the stream opens: RBAC reaches the API server's
// authorizer through an informer, so the caller is known only after a while.
func openStream(ctx context.Context, url, token string) *http.Response {
	var resp *http.Response
	EventuallyWithOffset(1, func() int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err = http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		if resp.StatusCode != http.StatusOK {
			_ = resp.Body.Close()
		}
		return resp.StatusCode
	}, timeout, interval).Should(Equal(http.StatusOK))
	return resp
}

// readTranscripts is the rule that lets a caller read the transcripts of the sessions keys.
func readTranscripts(keys ...string) []rbacv1.PolicyRule {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = sessionkey.ObjectName(k)
	}
	return []rbacv1.PolicyRule{{
		APIGroups: []string{transcriptstore.AuthGroup}, Verbs: []string{transcriptstore.AuthVerb},
		Resources:     []string{transcriptstore.AuthResource + "/" + transcriptstore.AuthSubresource},
		ResourceNames: names,
	}}
}
