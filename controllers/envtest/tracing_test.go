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
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
)

// span is one exported span, as a receiver sees it.
type span struct {
	name, trace, id, parent string
	links                   []string // span ids
	attrs                   map[string]string
}

// otlpReceiver is a real OTLP/HTTP trace endpoint (protobuf, as the SDK's exporter sends).
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
}

func newOTLPReceiver() *otlpReceiver {
	o := &otlpReceiver{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := span{name: s.Name, trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId),
						parent: hex.EncodeToString(s.ParentSpanId), attrs: map[string]string{}}
					for _, l := range s.Links {
						sp.links = append(sp.links, hex.EncodeToString(l.SpanId))
					}
					for _, a := range s.Attributes {
						sp.attrs[a.Key] = a.Value.GetStringValue()
					}
					o.spans = append(o.spans, sp)
				}
			}
		}
		o.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	return o
}

func (o *otlpReceiver) all() []span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]span(nil), o.spans...)
}

// children are the spans whose parent is id.
func children(spans []span, id string) []span {
	var out []span
	for _, s := range spans {
		if s.parent == id {
			out = append(out, s)
		}
	}
	return out
}

// startTracing turns tracing on for one spec, exporting to a new receiver.
func startTracing() *otlpReceiver {
	recv := newOTLPReceiver()
	DeferCleanup(recv.Close)
	GinkgoT().Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.URL+"/v1/traces")
	shutdown, err := tracing.Setup(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = shutdown(context.Background()) })
	return recv
}

var _ = Describe("GenAI traces over OTLP", func() {
	It("traces a send with reply-back and a spawn made by a tool call, linked to that call", func() {
		recv := startTracing()

		ns := newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](1)}})
		spawnArgs, _ := json.Marshal(map[string]any{"task": "look around", "agentId": "bob"})
		createAgent(ns, "alice", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip), rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip),
			sessionsv1alpha1.ScriptRule{Match: "^delegate", Reply: "{{toolResults}}",
				ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "sessions_spawn", Arguments: &runtime.RawExtension{Raw: spawnArgs}}}})
		createAgent(ns, "bob", rule("^look", "found it"), rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip))
		createSession(ns, "agent:alice:main", "alice")
		createSession(ns, "agent:bob:main", "bob")

		chat := waitSend(createSend(ns, "agent:bob:main", "chat", 30, "agent:alice:main"), completed)
		delegate := waitSend(createSend(ns, "agent:alice:main", "delegate the looking", 30, ""), completed)
		var runs sessionsv1alpha1.SubagentRunList
		Eventually(func(g Gomega) {
			g.Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
			g.Expect(runs.Items).To(HaveLen(1))
			g.Expect(sessionsv1alpha1.Finished(runs.Items[0].Status.Conditions)).To(BeTrue())
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		// A root span is exported right after the status write that finished its object, so
		// a reader can see the object finished a moment before: wait for the three roots.
		run := &runs.Items[0]
		find := func(o metav1.Object) (span, bool) {
			sc := tracing.Parse(o.GetAnnotations()[tracing.Annotation])
			for _, s := range recv.all() {
				if sc.IsValid() && s.id == sc.SpanID().String() && s.trace == sc.TraceID().String() {
					return s, true
				}
			}
			return span{}, false
		}
		Eventually(func(g Gomega) {
			g.Expect(tracing.Flush(ctx)).To(Succeed())
			for _, o := range []metav1.Object{chat, delegate, run} {
				_, ok := find(o)
				g.Expect(ok).To(BeTrue(), "no root span exported for %s", o.GetName())
			}
			// The send's last turn (its announce step) may end after the roots were exported.
			s, _ := find(chat)
			g.Expect(children(recv.all(), s.id)).To(HaveLen(3), "the send's three turns exported")
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		rootOf := func(o metav1.Object) span { s, _ := find(o); return s }
		spans := recv.all()

		// The send: a root, one invoke_agent per turn (round 1, reply-back, announce), each
		// with its chat span.
		root := rootOf(chat)
		Expect(root.name).To(Equal("sessions_send"))
		turns := children(spans, root.id)
		Expect(turns).To(HaveLen(3))
		for _, turn := range turns {
			Expect(turn.name).To(HavePrefix("invoke_agent "))
			Expect(turn.trace).To(Equal(root.trace))
			Expect(turn.attrs).To(HaveKeyWithValue("gen_ai.operation.name", "invoke_agent"))
			Expect(turn.attrs).To(HaveKey("gen_ai.conversation.id"))
			calls := children(spans, turn.id)
			Expect(calls).NotTo(BeEmpty())
			Expect(calls[0].name).To(HavePrefix("chat "))
			Expect(calls[0].attrs).To(HaveKeyWithValue("gen_ai.operation.name", "chat"))
		}

		// The spawn its round 1 made: its own trace, linked to the tool call's span.
		runRoot := rootOf(run)
		Expect(runRoot.name).To(Equal("sessions_spawn"))
		var tool span
		for _, s := range spans {
			if s.name == "execute_tool sessions_spawn" {
				tool = s
			}
		}
		Expect(tool.id).NotTo(BeEmpty(), "no execute_tool span")
		Expect(tool.trace).To(Equal(rootOf(delegate).trace), "the tool call belongs to the delegating send's trace")
		Expect(runRoot.links).To(ContainElement(tool.id))
		names := []string{}
		for _, s := range children(spans, runRoot.id) {
			names = append(names, s.name)
		}
		Expect(strings.Join(names, ",")).To(ContainSubstring("invoke_agent bob"), "the task turn hangs under the run's root")
	})

	It("hangs a send made for a caller's span (an MCP _meta traceparent) under that span, its turns in the caller's trace", func() {
		recv := startTracing()

		ns := newNamespace()
		createAgent(ns, "bob", rule("^traced", "traced back"))
		createSession(ns, "agent:bob:main", "bob")
		const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		root := tracing.NewChild(caller)
		send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns,
			Annotations: map[string]string{tracing.Annotation: root, tracing.ParentAnnotation: caller}},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:bob:main", Message: "traced call", TimeoutSeconds: ptr.To[int32](30)}}
		Expect(k8s.Create(ctx, send)).To(Succeed())
		waitSend(send, completed)
		rootSC, callerSC := tracing.Parse(root), tracing.Parse(caller)
		Eventually(func(g Gomega) {
			g.Expect(tracing.Flush(ctx)).To(Succeed())
			var got span
			for _, s := range recv.all() {
				if s.id == rootSC.SpanID().String() {
					got = s
				}
			}
			g.Expect(got.name).To(Equal("sessions_send"), "the send's root span exported")
			g.Expect([]string{got.trace, got.parent}).To(Equal([]string{callerSC.TraceID().String(), callerSC.SpanID().String()}))
			turns := children(recv.all(), got.id)
			g.Expect(turns).NotTo(BeEmpty())
			g.Expect(turns[0].trace).To(Equal(callerSC.TraceID().String()))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("continues a send's trace after a manager restart", func() {
		recv := startTracing()

		ns := newNamespace()
		createAgent(ns, "bob", rule("^Agent-to-agent announce step", sessionsv1alpha1.AnnounceSkip),
			sessionsv1alpha1.ScriptRule{Match: "^restart", Reply: "survived", Delay: &metav1.Duration{Duration: 5 * time.Minute}})
		bob := createSession(ns, "agent:bob:main", "bob")
		send := createSend(ns, "agent:bob:main", "restart please", 30, "")
		Eventually(func() int { return len(messages(ns, bob)) }, testenv.Timeout, testenv.Interval).Should(Equal(1))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(send), send)).To(Succeed())
		before := tracing.Parse(send.Annotations[tracing.Annotation])
		Expect(before.IsValid()).To(BeTrue(), "the send got its trace before the restart")

		stopManager()
		startManager()
		Eventually(fakeClock.Waiters, testenv.Timeout, testenv.Interval).Should(BeNumerically(">=", 2))
		fakeClock.Step(6 * time.Minute)
		waitSend(send, completed)
		Expect(send.Annotations[tracing.Annotation]).To(Equal(tracing.Format(before)), "the trace is kept, not replaced")

		// Both runs of round 1 (the one the restart cut and the one after it) and the root hang
		// in the same trace, the turns under the root.
		Eventually(func(g Gomega) {
			g.Expect(tracing.Flush(ctx)).To(Succeed())
			var root bool
			turns := 0
			for _, s := range recv.all() {
				if s.trace != before.TraceID().String() {
					continue
				}
				root = root || s.id == before.SpanID().String()
				if s.parent == before.SpanID().String() && strings.HasPrefix(s.name, "invoke_agent") {
					turns++
				}
			}
			g.Expect(root).To(BeTrue(), "no root span")
			g.Expect(turns).To(BeNumerically(">=", 2), "round 1 before and after the restart, and the announce")
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})
