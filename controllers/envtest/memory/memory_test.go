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

package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

const (
	fact     = "the deploy password rotates on Fridays"
	question = "when does the deploy secret change?"
)

// remembering is a scripted Agent with memory (the offline embedder): a message about
// rotation is written down with memory_write, a question is recalled with memory_search
// and answered with what it found.
func remembering(ns, name string) *sessionsv1alpha1.Agent {
	raw := func(v any) *runtime.RawExtension {
		b, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		return &runtime.RawExtension{Raw: b}
	}
	return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.AgentSpec{
			Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
				{Match: "rotates", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: sessiontools.MemoryWriteTool,
					Arguments: raw(map[string]any{"text": "{{input}}", "tags": []string{"ops"}})}}, Reply: "noted"},
				{Match: "^when", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: sessiontools.MemorySearchTool,
					Arguments: raw(map[string]any{"query": "{{input}}", "limit": 1})}}, Reply: "recalled: {{toolResults}}"},
			}},
			Memory: sessionsv1alpha1.MemorySpec{Enabled: true,
				Embeddings: &sessionsv1alpha1.EmbeddingsSpec{Provider: sessionsv1alpha1.EmbeddingsScripted}},
		}}
}

// world is a namespace whose sessions see only themselves, with two Agents that remember.
func world() string {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "memory-"}}
	Expect(k8s.Create(ctx, n)).To(Succeed())
	ns := n.Name
	Expect(k8s.Create(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilitySelf}})).To(Succeed())
	for _, a := range []string{"ops", "web"} {
		Expect(k8s.Create(ctx, remembering(ns, a))).To(Succeed())
	}
	return ns
}

// session creates the session of key and waits for its transcript.
func session(ns, key string) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: ns},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: sessionkey.AgentOf(key)}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.SessionID).NotTo(BeEmpty())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s
}

// send sends message to key and returns the reply once the send has finished.
func send(ns, name, key, message string) string {
	s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: message, TimeoutSeconds: ptr.To[int32](60)}}
	Expect(k8s.Create(ctx, s)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(sessionsv1alpha1.Finished(s.Status.Conditions)).To(BeTrue())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return s.Status.Reply
}

// indexed waits until the memory index holds everything committed so far.
func indexed() {
	Expect(suite.Manager.Memory.Sync(ctx)).To(Succeed())
	Expect(suite.Manager.Words.Sync(ctx)).To(Succeed())
}

// asPerson recalls agent's memory as a person whose access layer lets it read only the
// transcripts of the sessions named readable.
func asPerson(ns, agent string, readable ...string) string {
	m := suite.Manager
	env := &sessiontools.Env{Client: m.GetClient(), Reader: m.GetAPIReader(), APIReader: m.GetAPIReader(),
		Store: transcriptstore.Indexed{FileStore: m.Store, Words: m.Words, Memory: m.Memory},
		Access: func(_ context.Context, r caller.Right, name string) error {
			if r == caller.ReadTranscript {
				for _, n := range readable {
					if n == name {
						return nil
					}
				}
				return apierrors.NewForbidden(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions/transcript"},
					name, errors.New("no read"))
			}
			return nil
		}}
	var tool sessiontools.Tool
	for _, t := range sessiontools.All() {
		if t.Name == sessiontools.MemorySearchTool {
			tool = t
		}
	}
	args, err := json.Marshal(map[string]any{"agent": agent, "query": question})
	Expect(err).NotTo(HaveOccurred())
	out, err := tool.Run(ctx, &sessiontools.Call{Env: env, Namespace: ns, ID: "person"}, args)
	Expect(err).NotTo(HaveOccurred())
	b, err := json.Marshal(out)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("an Agent's long-term memory", Ordered, func() {
	var ns string
	var written *sessionsv1alpha1.AgentSession

	BeforeAll(func() {
		ns = world()
		written = session(ns, "agent:ops:main")
		session(ns, "agent:ops:later")
		session(ns, "agent:web:main")
		Expect(send(ns, "write", "agent:ops:main", fact)).To(Equal("noted"))
		indexed()
	})

	It("recalls a note in a later session of the same Agent by a paraphrase", func() {
		reply := send(ns, "recall", "agent:ops:later", question)
		Expect(reply).To(ContainSubstring(fact))
		Expect(reply).To(ContainSubstring(`"kind":"note"`))
	})

	It("recalls nothing of it in a session of another Agent that sees only itself", func() {
		reply := send(ns, "other", "agent:web:main", question)
		Expect(reply).To(HavePrefix("recalled: "), "the turn called memory_search")
		Expect(reply).NotTo(ContainSubstring("Fridays"))
	})

	It("recalls it for a person who may read its transcript, and not for one who may not", func() {
		Expect(asPerson(ns, "ops", written.Name)).To(ContainSubstring(fact))
		Expect(asPerson(ns, "ops", sessionkey.ObjectName("agent:web:main"))).To(ContainSubstring(`"count":0`))
		Expect(asPerson(ns, "ops")).To(ContainSubstring(`"status":"forbidden"`))
	})

	It("loses no chunk when the store is killed while indexing, and recalls after", func() {
		suite.StopManager()
		// A kill during the write of the note's batch leaves the log torn inside it, and
		// every batch after it unwritten: cut into the first line of the noting session.
		path := filepath.Join(suite.DataDir, "transcripts", ".memory", "chunks.log")
		b, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		at := bytes.Index(b, []byte(`"sid":"`+written.Status.SessionID+`"`))
		Expect(at).To(BeNumerically(">", 0))
		Expect(os.WriteFile(path, b[:at+10], 0o640)).To(Succeed())
		suite.StartManager()
		indexed()
		session(ns, "agent:ops:after-restart")
		Expect(send(ns, "after", "agent:ops:after-restart", question)).To(ContainSubstring(fact))
	})
})
