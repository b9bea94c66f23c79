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
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The transcript-store's per-user bounds, through sidecar.Run with its real doors: tokens
// judged by TokenReview, access by SubjectAccessReview, tool calls by impersonation.
var _ = Describe("per-user limits of the transcript-store", Ordered, func() {
	const limNS = "team-limits"
	const key = "agent:l:main"
	const burst = 30
	var (
		base              string
		alice, bob, carol string
		clk               = clocktesting.NewFakeClock(time.Now())
		https             = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the store's self-signed test certificate
	)
	ctx, cancel := context.WithCancel(context.Background())

	BeforeAll(func() {
		DeferCleanup(cancel)
		tokens := grant(ctx, limNS, []rbacv1.PolicyRule{{
			APIGroups: []string{transcriptstore.AuthGroup}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{transcriptstore.AuthResource, transcriptstore.AuthResource + "/" + transcriptstore.AuthSubresource},
		}}, "alice", "bob", "carol")
		alice, bob, carol = tokens[0], tokens[1], tokens[2]

		dir := GinkgoT().TempDir()
		internal, public := runStore(ctx, transcriptstore.SidecarConfig{
			DataDir: filepath.Join(dir, "data"), Socket: filepath.Join(dir, "s.sock"), Listen: "127.0.0.1:0",
			DefaultNamespace: limNS, Kubeconfig: storeKubeconfig(dir),
			MaxStreamsPerUser: 2, MaxMCPSessionsPerUser: 2, MCPSessionIdleTimeout: 10 * time.Minute,
			APIQPSPerUser: 0.001, APIBurstPerUser: burst, Clock: clk,
		})
		base = "https://" + public
		_, err := client.NewClient(internal).CreateSession(ctx, transcript.SessionHeader{
			Namespace: limNS, SessionID: "s1", SessionKey: key, CreatedAt: time.Now()})
		Expect(err).NotTo(HaveOccurred())
	})

	type answer struct {
		code    int
		session string
		body    string
		stream  io.ReadCloser
	}
	do := func(ctx context.Context, method, path, token string, header map[string]string, body string) answer {
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := https.Do(req)
		Expect(err).NotTo(HaveOccurred())
		a := answer{code: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id")}
		if method == http.MethodGet && resp.StatusCode == http.StatusOK {
			a.stream = resp.Body // an open stream
			return a
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		a.body = string(b)
		return a
	}
	mcpHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	initialize := func(token string) answer {
		return do(ctx, http.MethodPost, "/mcp?namespace="+limNS, token, mcpHeaders,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	}
	mcpGet := func(ctx context.Context, token, session string) answer {
		return do(ctx, http.MethodGet, "/mcp?namespace="+limNS, token, map[string]string{
			"Accept": "text/event-stream", "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}, "")
	}
	var aliceSession string

	It("refuses a user's MCP session over the cap while another user gets in", func() {
		// RBAC reaches the API server's authorizer through an informer.
		var first answer
		Eventually(func() int { first = initialize(alice); return first.code }, timeout, interval).Should(Equal(http.StatusOK))
		aliceSession = first.session
		Expect(initialize(alice).code).To(Equal(http.StatusOK))
		over := initialize(alice)
		Expect(over.code).To(Equal(http.StatusTooManyRequests))
		Expect(over.body).To(ContainSubstring("--max-mcp-sessions-per-user"))
		Eventually(func() int { return initialize(bob).code }, timeout, interval).Should(Equal(http.StatusOK))
	})

	It("closes idle sessions and frees their slots", func() {
		clk.Step(10 * time.Minute)
		Eventually(func() int { return initialize(alice).code }, timeout, interval).Should(Equal(http.StatusOK))
		Expect(mcpGet(ctx, alice, aliceSession).code).To(Equal(http.StatusNotFound), "the expired session")
	})

	It("counts MCP GET streams with /events and history streams", func() {
		s := initialize(alice) // her second session beside the one the last spec opened
		Expect(s.code).To(Equal(http.StatusOK))
		events := do(ctx, http.MethodGet, "/events?namespace="+limNS, alice, nil, "")
		Expect(events.code).To(Equal(http.StatusOK))
		DeferCleanup(events.stream.Close)
		gctx, endGet := context.WithCancel(ctx)
		get := mcpGet(gctx, alice, s.session)
		Expect(get.code).To(Equal(http.StatusOK))

		follow := "/sessions/" + url.PathEscape(key) + "/history?follow=1&namespace=" + limNS
		over := do(ctx, http.MethodGet, follow, alice, nil, "")
		Expect(over.code).To(Equal(http.StatusTooManyRequests))
		Expect(over.body).To(ContainSubstring("--max-streams-per-user"))
		Expect(do(ctx, http.MethodGet, "/events?namespace="+limNS, alice, nil, "").code).To(Equal(http.StatusTooManyRequests))
		theirs := do(ctx, http.MethodGet, follow, bob, nil, "")
		Expect(theirs.code).To(Equal(http.StatusOK), theirs.body)
		_ = theirs.stream.Close()

		endGet()
		_ = get.stream.Close()
		Eventually(func() int {
			a := do(ctx, http.MethodGet, follow, alice, nil, "")
			if a.stream != nil {
				_ = a.stream.Close()
			}
			return a.code
		}, timeout, interval).Should(Equal(http.StatusOK))
	})

	It("holds one token's initialize flood to the cap", func() {
		const flood, workers = 8000, 8
		heap := func() float64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return float64(m.HeapInuse) / (1 << 20)
		}
		before := heap()
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				defer GinkgoRecover()
				for range flood / workers {
					c := initialize(carol).code
					mu.Lock()
					codes[c]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		// A figure for the record (docs/operations/security.md, Limits), not asserted.
		fmt.Fprintf(GinkgoWriter, "initialize flood through sidecar.Run: %d calls, answers %v, heap in use %.1f MiB before, %.1f MiB after\n",
			flood, codes, before, heap())
		Expect(codes[http.StatusOK]).To(Equal(2))
	})

	It("refuses a user over their API rate with 429, and not another user", func() {
		// Each new session name costs alice a SubjectAccessReview; her bucket never refills
		// (the clock stands still).
		code := 0
		for i := 0; i <= burst && code != http.StatusTooManyRequests; i++ {
			a := do(ctx, http.MethodGet, fmt.Sprintf("/sessions/agent:l:probe-%d/history?namespace=%s", i, limNS), alice, nil, "")
			code = a.code
			if code == http.StatusTooManyRequests {
				Expect(a.body).To(ContainSubstring("--api-qps-per-user"))
			}
		}
		Expect(code).To(Equal(http.StatusTooManyRequests))
		Expect(initialize(alice).code).To(Equal(http.StatusTooManyRequests), "alice's MCP initialize")
		Expect(do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(key)+"/history?namespace="+limNS, bob, nil, "").code).
			To(Equal(http.StatusOK), "bob's history")
		Expect(initialize(bob).code).To(Equal(http.StatusOK), "bob's MCP initialize")
	})
})
