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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// compactionModel is an OpenAI-compatible server that records every request and answers a
// compaction step with "SUMMARY-<n>" and a turn with "ok". hangCompaction or hangTurns make
// the matching requests wait until the client gives up; arrived says a request came in.
type compactionModel struct {
	*httptest.Server
	mu             sync.Mutex
	reqs           []modelRequest
	summaries      int
	hangCompaction bool
	hangTurns      bool
	arrived        chan string
}

// modelRequest is one request: its system text, its messages as "role: content".
type modelRequest struct {
	model    string
	system   string
	messages []string
	bytes    int
}

func (r modelRequest) compaction() bool {
	return len(r.messages) > 0 && strings.HasPrefix(r.messages[len(r.messages)-1], "user: "+turns.CompactionStepPrefix)
}

func newCompactionModel() *compactionModel {
	m := &compactionModel{arrived: make(chan string, 64)}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"messages"`
		}
		raw := new(strings.Builder)
		if err := json.NewDecoder(teeReader(r, raw)).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := modelRequest{model: body.Model, bytes: raw.Len()}
		for _, msg := range body.Messages {
			content := ptr.Deref(msg.Content, "")
			if msg.Role == "system" {
				req.system = content
				continue
			}
			req.messages = append(req.messages, msg.Role+": "+content)
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		hang := (req.compaction() && m.hangCompaction) || (!req.compaction() && m.hangTurns)
		reply, prompt := "ok", 10
		if req.compaction() && !hang {
			m.summaries++
			reply, prompt = "SUMMARY-"+strconv.Itoa(m.summaries), 1000
		}
		m.mu.Unlock()
		kind := "turn"
		if req.compaction() {
			kind = "compaction"
		}
		m.arrived <- kind
		if hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop",`+
			`"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":%d,"completion_tokens":2,"total_tokens":%d}}`,
			body.Model, reply, prompt, prompt+2)
	}))
	return m
}

// teeReader copies what the request body yields into b.
func teeReader(r *http.Request, b *strings.Builder) *teeBody { return &teeBody{r: r, b: b} }

type teeBody struct {
	r *http.Request
	b *strings.Builder
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.r.Body.Read(p)
	t.b.Write(p[:n])
	return n, err
}

func (m *compactionModel) requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.reqs...)
}

func (m *compactionModel) set(f func(m *compactionModel)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

// waitFor waits until a request of kind (compaction or turn) arrives.
func (m *compactionModel) waitFor(kind string) {
	Eventually(m.arrived, testenv.Timeout).Should(Receive(Equal(kind)))
}

// summaryPreamble introduces the summary in the first message of a compacted session's turn.
const summaryPreamble = "Summary of the earlier conversation (older messages were compacted into it):\n"

// compactionWindow is the agents' context window here: small, so that a few seeded
// messages pass the trigger.
const compactionWindow = 4000

// seed appends n user/assistant messages of 200 bytes (50 tokens each) to a session's
// transcript, as earlier turns would have.
func seed(ns string, s *sessionsv1alpha1.AgentSession, tag string, n int) {
	reqs := make([]transcript.AppendRequest, n)
	for i := range reqs {
		role := transcript.RoleUser
		if i%2 == 1 {
			role = transcript.RoleAssistant
		}
		text := fmt.Sprintf("%s message %d ", tag, i)
		text += strings.Repeat(".", 200-len(text))
		reqs[i] = transcript.AppendRequest{IdempotencyKey: "seed/" + tag + "/" + strconv.Itoa(i),
			Message: transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}}
	}
	_, err := store.Append(ctx, ns, s.Status.SessionID, reqs...)
	Expect(err).NotTo(HaveOccurred())
}

// compactions are the compaction records of a session's transcript.
func compactions(ns string, s *sessionsv1alpha1.AgentSession) []transcript.Record {
	var out []transcript.Record
	for _, r := range allRecords(ns, s) {
		if r.Message.Role == transcript.RoleCompaction {
			out = append(out, r)
		}
	}
	return out
}

var _ = Describe("Compaction of a long session", func() {
	var ns string
	var model *compactionModel
	var sess *sessionsv1alpha1.AgentSession
	BeforeEach(func() {
		ns = newNamespace()
		model = newCompactionModel()
		DeferCleanup(model.Close)
		Expect(k8s.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "keeper", Namespace: ns}, Spec: sessionsv1alpha1.AgentSpec{
			SystemPrompt: "You are keeper.",
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderOpenAI, Name: "big-model", BaseURL: model.URL + "/v1",
				ContextTokens: ptr.To[int64](compactionWindow)},
			Memory: sessionsv1alpha1.MemorySpec{Compaction: sessionsv1alpha1.CompactionSpec{TriggerRatio: ptr.To(0.5), KeepRecentMessages: ptr.To[int32](4),
				Model: "small-model", TimeoutSeconds: ptr.To[int32](5)}},
		}})).To(Succeed())
		sess = createSession(ns, "agent:keeper:main", "keeper")
	})

	It("compacts once past the trigger, then sends the summary and the recent messages, and folds summaries", func() {
		seed(ns, sess, "old", 30) // 1,500 tokens: past half the window
		send := waitSend(createSend(ns, "agent:keeper:main", "what did we say?", 30, ""), completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))

		reqs := model.requests()
		Expect(reqs).To(HaveLen(2), "one compaction step, then the turn")
		Expect(reqs[0].compaction()).To(BeTrue())
		Expect(reqs[0].model).To(Equal("small-model"), "compaction.model is the request's model")
		Expect(reqs[0].messages[0]).To(ContainSubstring("old message 0 "), "the oldest messages are folded")
		Expect(reqs[0].messages[0]).NotTo(ContainSubstring("Previous summary"))
		turn := reqs[1]
		Expect(turn.model).To(Equal("big-model"))
		Expect(turn.system).To(ContainSubstring("You are keeper."))
		Expect(turn.system).NotTo(ContainSubstring("SUMMARY"), "model-written text never reaches the system prompt")
		Expect(turn.messages).To(HaveLen(6), "the summary, the 4 recent messages and the input")
		Expect(turn.messages[0]).To(Equal("user: " + summaryPreamble + "SUMMARY-1"))
		Expect(turn.messages[1]).To(HavePrefix("user: old message 26 "))
		Expect(turn.messages[5]).To(Equal("user: what did we say?"))
		Expect(turn.bytes/4).To(BeNumerically("<", compactionWindow-compactionWindow/8), "under the budget")

		recs := compactions(ns, sess)
		Expect(recs).To(HaveLen(1))
		c := recs[0].Message.Compaction
		Expect([]int64{c.FromSeq, c.ToSeq}).To(Equal([]int64{1, 26}), "all but the 4 recent seeded messages")
		Expect(c.TokensBefore).To(BeNumerically(">", compactionWindow/2))
		Expect(c.TokensAfter).To(BeNumerically("<", c.TokensBefore))
		Expect(recs[0].Message.Model).To(Equal("small-model"))
		Expect(texts(recs)).To(Equal([]string{"compaction: SUMMARY-1"}))
		// Its tokens count on the send that triggered it and on the session.
		Expect(send.Status.Usage).NotTo(BeNil())
		Expect(send.Status.Usage.InputTokens).To(Equal(int64(1010)))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
			g.Expect(sess.Status.Compactions).To(Equal(int64(1)))
			g.Expect(sess.Status.LastCompactedAt).NotTo(BeNil())
			g.Expect(sess.Status.InputTokens).To(Equal(int64(1010)))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		// Under the trigger: no step.
		waitSend(createSend(ns, "agent:keeper:main", "and now?", 30, ""), completed)
		Expect(model.requests()).To(HaveLen(3))

		// Past it again: the next step folds the first summary with the newer messages.
		seed(ns, sess, "new", 30)
		waitSend(createSend(ns, "agent:keeper:main", "and then?", 30, ""), completed)
		reqs = model.requests()
		Expect(reqs).To(HaveLen(5))
		Expect(reqs[3].compaction()).To(BeTrue())
		Expect(reqs[3].messages[0]).To(ContainSubstring("Previous summary:\nSUMMARY-1\n"))
		Expect(reqs[3].messages[0]).NotTo(ContainSubstring("old message 0 "), "folded messages are not read again")
		Expect(reqs[4].messages).To(HaveLen(6))
		Expect(reqs[4].messages[0]).To(Equal("user: " + summaryPreamble + "SUMMARY-2"))
		recs = compactions(ns, sess)
		Expect(texts(recs)).To(Equal([]string{"compaction: SUMMARY-1", "compaction: SUMMARY-2"}))
		Expect(recs[1].Message.Compaction.FromSeq).To(Equal(recs[0].Message.Compaction.ToSeq + 1))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
			g.Expect(sess.Status.Compactions).To(Equal(int64(2)))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("goes on truncated with a CompactionFailed Event when the step times out, and tries again next time", func() {
		seed(ns, sess, "old", 60) // 3,000 tokens: more than the window holds
		model.set(func(m *compactionModel) { m.hangCompaction = true })
		send := createSend(ns, "agent:keeper:main", "still there?", 30, "")
		model.waitFor("compaction")
		fakeClock.Step(5 * time.Second) // compaction.timeoutSeconds
		waitSend(send, completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))

		reqs := model.requests()
		Expect(reqs).To(HaveLen(2))
		turn := reqs[1]
		Expect(turn.messages[0]).NotTo(ContainSubstring("SUMMARY"))
		Expect(turn.messages[len(turn.messages)-1]).To(Equal("user: still there?"))
		Expect(turn.messages[0]).NotTo(ContainSubstring("old message 0 "), "history truncated to the budget")
		Expect(compactions(ns, sess)).To(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(eventsOf(g, sess)).To(ContainElement("agent-runtime Warning/CompactionFailed"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())

		model.set(func(m *compactionModel) { m.hangCompaction = false })
		waitSend(createSend(ns, "agent:keeper:main", "and now?", 30, ""), completed)
		Expect(compactions(ns, sess)).To(HaveLen(1), "the next turn over the trigger compacts")
	})

	It("leaves exactly one compaction record when the manager is killed during the step", func() {
		seed(ns, sess, "old", 30)
		model.set(func(m *compactionModel) { m.hangCompaction = true })
		send := createSend(ns, "agent:keeper:main", "survive this", 30, "")
		model.waitFor("compaction")
		stopManager()
		// After the restart the step runs again and lands; the turn's own call hangs, and the
		// manager is killed once more: the step is not run a third time.
		model.set(func(m *compactionModel) { m.hangCompaction, m.hangTurns = false, true })
		startManager()
		model.waitFor("compaction")
		model.waitFor("turn")
		Eventually(func() []transcript.Record { return compactions(ns, sess) }, testenv.Timeout, testenv.Interval).Should(HaveLen(1))
		stopManager()
		model.set(func(m *compactionModel) { m.hangTurns = false })
		startManager()
		waitSend(send, completed)
		Expect(send.Status.Status).To(Equal(sessionsv1alpha1.SendOK))

		var steps int
		for _, r := range model.requests() {
			if r.compaction() {
				steps++
			}
		}
		Expect(steps).To(Equal(2), "the killed step and the one that landed")
		recs := allRecords(ns, sess)
		expectNoDuplicates(recs)
		Expect(compactions(ns, sess)).To(HaveLen(1))
		Expect(model.requests()[len(model.requests())-1].messages[0]).To(HaveSuffix("SUMMARY-1"))
	})

	It("compacts now, under the trigger, when kubectl sessions compact asks through the annotation", func() {
		seed(ns, sess, "old", 10) // 500 tokens: under the trigger
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
		base := sess.DeepCopy()
		sess.Annotations = map[string]string{sessionsv1alpha1.CompactRequestAnnotation: "first"}
		Expect(k8s.Patch(ctx, sess, client.MergeFrom(base))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sess), sess)).To(Succeed())
			g.Expect(sess.Annotations).NotTo(HaveKey(sessionsv1alpha1.CompactRequestAnnotation))
			g.Expect(eventsOf(g, sess)).To(ContainElement("agentsession-controller Normal/Compacted"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		recs := compactions(ns, sess)
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Message.Compaction.ToSeq).To(Equal(int64(6)), "all but the 4 recent messages")
		reqs := model.requests()
		Expect(reqs).To(HaveLen(1))
		Expect(reqs[0].compaction()).To(BeTrue())

		// The next turn reads the summary.
		waitSend(createSend(ns, "agent:keeper:main", "hello again", 30, ""), completed)
		reqs = model.requests()
		Expect(reqs).To(HaveLen(2))
		Expect(reqs[1].messages).To(HaveLen(6))
		Expect(reqs[1].messages[0]).To(HaveSuffix("SUMMARY-1"))
	})
})
