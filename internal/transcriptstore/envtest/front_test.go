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
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecar"
)

// storeKubeconfig is a kubeconfig of the stores' own identity: an admin, as their
// ServiceAccount is for what they do.
func storeKubeconfig(dir string) string {
	u, err := testEnv.AddUser(envtest.User{Name: "transcript-store", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(path, kc, 0o600)).To(Succeed())
	return path
}

// runStore runs a transcript-store with c until the spec's cleanup and returns its internal
// and public addresses.
func runStore(ctx context.Context, c transcriptstore.SidecarConfig) (string, string) {
	ready, done := make(chan [2]string, 1), make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	c.Log = GinkgoLogr
	c.Ready = func(s, l string) { ready <- [2]string{s, l} }
	go func() { done <- sidecar.Run(sctx, c) }()
	DeferCleanup(func() { stop(); <-done })
	var a [2]string
	Eventually(ready, timeout).Should(Receive(&a))
	return a[0], a[1]
}

// Two real transcript-stores as shards 0 and 1 of 2: each answers for the other's
// namespaces by passing the request on with the caller's token, and the owner judges it.
var _ = Describe("the shard front", Ordered, func() {
	var (
		ns0, ns1 string // owned by shard 0 and shard 1
		alice    string // may read the transcripts of both namespaces
		stranger string // may read none
		front    string // shard 0's public address: https://host:port
		owner    string // shard 1's
		store1   *client.Client
		owners   [2]string                                                                                          // the stores' public addresses, by shard
		https    = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the stores' self-signed test certificates
	)
	const key = "agent:f:main"
	ctx, cancel := context.WithCancel(context.Background())

	BeforeAll(func() {
		DeferCleanup(cancel)
		ns0, ns1 = ownedBy(0), ownedBy(1)
		read := []rbacv1.PolicyRule{{APIGroups: []string{transcriptstore.AuthGroup}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{transcriptstore.AuthResource, transcriptstore.AuthResource + "/" + transcriptstore.AuthSubresource}}}
		alice = grant(ctx, ns1, read, "alice")[0]
		stranger = grant(ctx, ns0, read, "stranger")[0]
		dir := GinkgoT().TempDir()
		kubeconfig := storeKubeconfig(dir)

		// The fronts reach "shard-i.test" at the stores' loopback addresses.
		toOwner := &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the stores' self-signed test certificates
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var i int
				if _, err := fmt.Sscanf(addr, "shard-%d.test:443", &i); err != nil || i < 0 || i > 1 {
					return nil, fmt.Errorf("no shard at %s", addr)
				}
				return (&net.Dialer{}).DialContext(ctx, network, owners[i])
			},
		}
		var internal [2]string
		for i := range 2 {
			internal[i], owners[i] = runStore(ctx, transcriptstore.SidecarConfig{
				DataDir: filepath.Join(dir, fmt.Sprint("data", i)), Socket: filepath.Join(dir, fmt.Sprint("s", i, ".sock")),
				Listen: "127.0.0.1:0", DefaultNamespace: ns0, Kubeconfig: kubeconfig,
				Front: transcriptstore.FrontConfig{Shard: shard.Shard{Index: i, Count: 2}, URLTemplate: "https://shard-{i}.test", Transport: toOwner},
			})
		}
		front, owner = "https://"+owners[0], "https://"+owners[1]
		store1 = client.NewClient(internal[1])
		_, err := store1.CreateSession(ctx, transcript.SessionHeader{Namespace: ns1, SessionID: "s1", SessionKey: key, CreatedAt: time.Now()})
		Expect(err).NotTo(HaveOccurred())
		appendText(ctx, store1, ns1, "s1", "first")
	})

	get := func(ctx context.Context, base, path, token string, header map[string]string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		Expect(err).NotTo(HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := https.Do(req)
		Expect(err).NotTo(HaveOccurred())
		return resp
	}
	body := func(resp *http.Response) string {
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	history := "/sessions/" + url.PathEscape(key) + "/history?namespace="

	It("answers the history of shard 1's session through shard 0, as the owner judges the caller", func() {
		// RBAC reaches the API server's authorizer through an informer.
		Eventually(func() string { return body(get(ctx, front, history+ns1, alice, nil)) }, timeout, interval).
			Should(And(HavePrefix("200 "), ContainSubstring("first")))
		Expect(body(get(ctx, owner, history+ns1, alice, nil))).To(And(HavePrefix("200 "), ContainSubstring("first")))
		Expect(body(get(ctx, front, history+ns1, "", nil))).To(HavePrefix("401 "), "no token: the owner refuses")
		Expect(body(get(ctx, front, history+ns1, stranger, nil))).To(HavePrefix("403 "), "another namespace's reader: the owner refuses")
		Expect(body(get(ctx, front, history+ns1, alice, map[string]string{"X-Agent-Sessions-Shard-Hop": "1"}))).
			To(HavePrefix("502 "), "a request already passed on is not passed on again")
	})

	It("passes /events of shard 1's namespace through as a stream that resumes with Last-Event-ID", func() {
		open := func(lastID string) (*sse.Reader, func()) {
			sctx, stop := context.WithCancel(ctx)
			var resp *http.Response
			Eventually(func() int {
				resp = get(sctx, front, "/events?kinds=session.message&namespace="+ns1, alice, map[string]string{"Last-Event-ID": lastID})
				if resp.StatusCode != http.StatusOK {
					_ = resp.Body.Close()
				}
				return resp.StatusCode
			}, timeout, interval).Should(Equal(http.StatusOK))
			r := sse.NewReader(resp.Body)
			first, err := r.Next()
			Expect(err).NotTo(HaveOccurred())
			Expect(first.Event).To(Equal(events.KindStream), "a stream begins with its id")
			return r, func() { stop(); _ = resp.Body.Close() }
		}
		r, stop := open("")
		appendText(ctx, store1, ns1, "s1", "second")
		ev, err := r.Next()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ev.Data)).To(ContainSubstring("second"))
		stop()

		appendText(ctx, store1, ns1, "s1", "third") // while no one listens
		r, stop = open(ev.ID)
		defer stop()
		ev, err = r.Next()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ev.Data)).To(ContainSubstring("third"), "resumed after the last event seen through the front")
	})

	It("passes /mcp of shard 1's namespace to its owner", func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, front+"/mcp?namespace="+ns1, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := https.Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Header.Get("Mcp-Session-Id")).NotTo(BeEmpty(), body(resp))
		Expect(body(resp)).To(HavePrefix("200 "))
	})
})

// ownedBy is a namespace name shard i of 2 owns.
func ownedBy(i int) string {
	for n := 0; ; n++ {
		if ns := fmt.Sprint("front-", n); shard.Of(ns, 2) == i {
			return ns
		}
	}
}

func appendText(ctx context.Context, c *client.Client, ns, id, text string) {
	_, err := c.Append(ctx, ns, id, transcript.AppendRequest{Message: transcript.Message{
		Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}})
	Expect(err).NotTo(HaveOccurred())
}
