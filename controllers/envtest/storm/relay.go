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

package storm

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// StrippingRelay is an A2A peer in front of the doors that forwards everything but the
// chain extension (the header asking for it, the value in a message's metadata), as a
// third-party agent server that knows nothing of it would. It serves with serving (nil:
// httptest's own certificate) and reaches the doors through toDoors; it stops when the
// spec ends.
func (c *Cluster) StrippingRelay(serving *tls.Config, toDoors http.RoundTripper) string {
	u, err := url.Parse(c.Doors)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = toDoors
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(a2a.SvcParamExtensions)
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = withoutMetadata(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	if serving != nil {
		srv.TLS = serving
	}
	srv.StartTLS()
	ginkgo.DeferCleanup(srv.Close)
	return srv.URL
}

// withoutMetadata is a JSON-RPC request without its message's metadata.
func withoutMetadata(body []byte) []byte {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	if p, ok := req["params"].(map[string]any); ok {
		if m, ok := p["message"].(map[string]any); ok {
			delete(m, "metadata")
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

// ExpectStoppedAtBackstop checks a finished storm of a pair calling each other through a
// StrippingRelay: no send carried a chain, more went round than the pair limit allows (the
// chain was stripped), and the doors' per-caller limit stopped it: the seed, then every
// door-made send the caller (both agents' token) may make in a window.
func ExpectStoppedAtBackstop(name string, sends []sessionsv1alpha1.SessionSend) {
	bound := policy.DefaultDoorSendsPerCaller + 1
	ginkgo.GinkgoWriter.Printf("%s: %d SessionSends when it stopped (limit %d)\n", name, len(sends), bound)
	ginkgo.AddReportEntry(name, fmt.Sprintf("%d SessionSends", len(sends)))
	gomega.Expect(len(sends)).To(gomega.BeNumerically("<=", bound))
	gomega.Expect(len(sends)).To(gomega.BeNumerically(">", 5), "the relay did not strip the chain: the pair limit stopped it")
	for _, s := range sends {
		gomega.Expect(s.Annotations).NotTo(gomega.HaveKey(sessionsv1alpha1.CarriedChainAnnotation), "send %s", s.Name)
	}
	gomega.Expect(Replies(sends)).To(gomega.ContainSubstring("door limit reached"))
	gomega.Expect(Replies(sends)).To(gomega.ContainSubstring("spec.limits.doorSendsPerCaller"))
}
