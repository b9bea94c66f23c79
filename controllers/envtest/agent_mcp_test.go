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
	"fmt"
	"github.com/agent-sessions/agent-session-operator/controllers/agent"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// MCP servers of these specs listen on mcpHost, which the suite's egress policy allows.
var _ = Describe("Agent MCP servers", func() {
	mcpAgent := func(ns, name string, srv sessionsv1alpha1.MCPServer) {
		a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}
		a.Spec.Tools.MCPServers = []sessionsv1alpha1.MCPServer{srv}
		Expect(k8s.Create(ctx, a)).To(Succeed())
	}
	get := func(ns, name string) func(g Gomega) *sessionsv1alpha1.Agent {
		return func(g Gomega) *sessionsv1alpha1.Agent {
			a := &sessionsv1alpha1.Agent{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, a)).To(Succeed())
			return a
		}
	}
	ready := func(ns, name string) func(g Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			c := meta.FindStatusCondition(get(ns, name)(g).Status.Conditions, sessionsv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			return c
		}
	}

	It("talks only to the configured server's origin, Secret headers included", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mcp-token", Labels: map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}},
			StringData: map[string]string{"header": "Bearer s3cret"}})).To(Succeed())
		header := []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "mcp-token"}, Key: "header"}}}}

		// The second origin: it records every request that reaches it.
		var mu sync.Mutex
		var leaked []string
		other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			leaked = append(leaked, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization"))
			mu.Unlock()
			http.NotFound(w, r)
		}))
		other.Listener = listen()
		other.Start()
		DeferCleanup(other.Close)

		// An HTTP+SSE server whose endpoint event names the other origin.
		sse := mcptest.NewAt(true, mcpHost+":0")
		DeferCleanup(sse.Close)
		sse.AnnounceEndpointAt(other.URL)
		mcpAgent(ns, "endpoint", sessionsv1alpha1.MCPServer{Name: "tools", URL: sse.URL, Headers: header})
		// A server that redirects there.
		redirector := httptest.NewUnstartedServer(http.RedirectHandler(other.URL+"/mcp", http.StatusTemporaryRedirect))
		redirector.Listener = listen()
		redirector.Start()
		DeferCleanup(redirector.Close)
		mcpAgent(ns, "redirect", sessionsv1alpha1.MCPServer{Name: "tools", URL: redirector.URL + "/mcp", Headers: header})

		for name, says := range map[string]string{"endpoint": "the server named an endpoint on " + other.URL, "redirect": "the server redirected to " + other.URL} {
			Eventually(ready(ns, name), testenv.Timeout, testenv.Interval).Should(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", mcptools.ReasonOriginRefused),
				HaveField("Message", ContainSubstring("MCP server tools: "+says)),
			), name)
		}
		Expect(sse.SawHeader("Authorization", "Bearer s3cret")).To(BeTrue(), "the configured server gets its header")
		mu.Lock()
		defer mu.Unlock()
		Expect(leaked).To(BeEmpty(), "requests that reached the other origin")
	})

	It("does not hold one namespace's Agents behind another's hanging servers", func() {
		// Namespace A: more Agents than it has probe slots, each with a server that accepts
		// and never answers, and a call timeout of ten minutes. The suite's probe timeout is
		// longer than this spec's Eventually window, so B cannot be Ready by waiting them out.
		hang := mcptest.Hang(mcpHost + ":0")
		DeferCleanup(hang.Close)
		nsA := newNamespace()
		hung := agent.DefaultMCPProbesPerNamespace + 1
		for i := range hung {
			mcpAgent(nsA, fmt.Sprintf("hung-%d", i), sessionsv1alpha1.MCPServer{Name: "h", URL: hang.URL, TimeoutSeconds: ptr.To(int32(600))})
		}
		// A's probes hold every slot A has.
		Eventually(hang.Accepted, testenv.Timeout, testenv.Interval).Should(BeNumerically(">=", agent.DefaultMCPProbesPerNamespace))

		nsB := newNamespace()
		srv := mcptest.NewAt(false, mcpHost+":0")
		DeferCleanup(srv.Close)
		mcpAgent(nsB, "b", sessionsv1alpha1.MCPServer{Name: "everything", URL: srv.URL})
		Eventually(ready(nsB, "b"), testenv.Timeout, testenv.Interval).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", ContainSubstring("MCP servers: everything 5 tools")),
		))

		// B was Ready while A's probes still ran: not served after them. A's Agents say so.
		for i := range hung {
			a := get(nsA, fmt.Sprintf("hung-%d", i))(Default)
			Expect(a.Status.MCPServers).To(ConsistOf(HaveField("Reason", "Probing")), a.Name)
			Expect(meta.FindStatusCondition(a.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(And(
				HaveField("Status", metav1.ConditionUnknown), HaveField("Reason", "Probing")), a.Name)
		}
	})
})

// listen is a listener on mcpHost, for servers the suite's egress policy lets MCP reach.
func listen() net.Listener {
	ln, err := net.Listen("tcp", mcpHost+":0")
	Expect(err).NotTo(HaveOccurred())
	return ln
}
