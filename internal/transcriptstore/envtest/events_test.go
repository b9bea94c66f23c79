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
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

var _ = Describe("/events against a real API server", Ordered, func() {
	const evNS = "team-events"
	// seen exists before the stream opens: a namespace stream opens only for a caller who
	// may read some session of the namespace.
	const mine, theirs, seen = "agent:e:mine", "agent:e:theirs", "agent:e:seen"
	var (
		srv   *httptest.Server
		token string
		k8s   client.Client
		st    *store.FileStore
	)
	ctx, cancel := context.WithCancel(context.Background())

	BeforeAll(func() {
		DeferCleanup(cancel)
		var err error
		k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		token = grant(ctx, evNS, readTranscripts(mine, seen), "watcher")[0]

		hub := events.NewHub(0, "t")
		st, err = store.OpenFileStore(GinkgoT().TempDir(), transcriptstore.PublishCommits(hub))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		objects, err := transcriptstore.WatchObjects(ctx, cfg, hub, shard.Shard{}, GinkgoLogr)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(seen), Namespace: evNS},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: seen, AgentID: "e"}})).To(Succeed())
		authz, err := transcriptstore.NewKubeAuthorizer(cfg)
		Expect(err).NotTo(HaveOccurred())
		srv = httptest.NewServer(transcriptstore.NewEventsHandler(hub, authz, st, objects, evNS, GinkgoLogr))
		DeferCleanup(srv.Close)
	})

	It("shows created, message and archived in order for the sessions the caller may read, and nothing of others", func() {
		resp := openStream(ctx, srv.URL+"/events?namespace="+evNS, token)
		DeferCleanup(resp.Body.Close)
		r := sse.NewReader(resp.Body)
		type seen struct{ kind, phase, key string }
		next := make(chan seen, 64)
		go func() {
			defer GinkgoRecover()
			for {
				ev, err := r.Next()
				if err != nil {
					close(next)
					return
				}
				var c events.SessionChange
				_ = json.Unmarshal(ev.Data, &c)
				if c.Phase == events.PhaseUpdated || ev.Event == events.KindStream {
					continue // status writes in between are fine
				}
				next <- seen{ev.Event, c.Phase, c.SessionKey}
			}
		}()
		expect := func(want seen) {
			var got seen
			Eventually(next, timeout).Should(Receive(&got))
			ExpectWithOffset(1, got).To(Equal(want))
		}

		sessions := map[string]*sessionsv1alpha1.AgentSession{}
		for _, key := range []string{theirs, mine} {
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: evNS},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "e"}}
			Expect(k8s.Create(ctx, s)).To(Succeed())
			sessions[key] = s
		}
		expect(seen{events.KindSessionsChanged, events.PhaseCreated, mine})

		for _, key := range []string{theirs, mine} {
			_, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: evNS, SessionID: sessionkey.ObjectName(key), SessionKey: key})
			Expect(err).NotTo(HaveOccurred())
			_, err = st.Append(ctx, evNS, sessionkey.ObjectName(key), transcript.AppendRequest{Message: transcript.Message{
				Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hello " + key}},
			}})
			Expect(err).NotTo(HaveOccurred())
		}
		expect(seen{events.KindSessionMessage, "", mine})
		expect(seen{events.KindSessionsChanged, events.PhaseMessage, mine})

		for _, key := range []string{theirs, mine} {
			s := sessions[key]
			s.Status.Phase = sessionsv1alpha1.SessionArchived
			Expect(k8s.Status().Update(ctx, s)).To(Succeed())
		}
		expect(seen{events.KindSessionsChanged, events.PhaseArchived, mine})
		Consistently(next, "1s").ShouldNot(Receive())
	})
})
