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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	sidecar "github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The SessionPolicy's retention on a real API server, on the suite's fake clock: an archived
// session past spec.retention.archivedSessionsSeconds loses its object (its record in the store
// first, the pass's SessionsRetired Event on the policy naming it), still lists as archived, its history reads, and restore recreates
// the object with its old transcript; a kept child of a finished run goes the same way, and
// its requester still sees it in its tree.
var _ = Describe("the SessionPolicy's retention", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{
			Retention: &sessionsv1alpha1.RetentionSpec{ArchivedSessionsSeconds: ptr.To[int32](3600)}})
	})

	// tool runs a session tool with call c and returns its result as JSON.
	tool := func(c *sessiontools.Call, name string, args map[string]any) map[string]any {
		raw, _ := json.Marshal(args)
		for _, t := range sessiontools.All() {
			if t.Name != name {
				continue
			}
			out, err := t.Run(ctx, c, raw)
			Expect(err).NotTo(HaveOccurred())
			b, _ := json.Marshal(out)
			var m map[string]any
			Expect(json.Unmarshal(b, &m)).To(Succeed())
			return m
		}
		Fail("no tool " + name)
		return nil
	}
	// rows are sessions_list's rows (archived or not) by key.
	rows := func(c *sessiontools.Call, archived bool) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, r := range tool(c, "sessions_list", map[string]any{"archived": archived})["sessions"].([]any) {
			row := r.(map[string]any)
			out[row["key"].(string)] = row
		}
		return out
	}
	env := func() *sessiontools.Env {
		return &sessiontools.Env{Client: k8s, Reader: k8s, Watcher: watcherClient(), Store: store,
			Retired: sidecar.RetiredRecords{Records: suite.Manager.Retired, Files: store}}
	}
	// archiveNow archives s (an archive-at on the fake clock) and waits for it.
	archiveNow := func(s *sessionsv1alpha1.AgentSession) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[sessionsv1alpha1.ArchiveAtAnnotation] = fakeClock.Now().UTC().Format(time.RFC3339)
		Expect(k8s.Update(ctx, s)).To(Succeed())
		waitArchived(s)
	}
	// retireAfter moves the fake clock past the retention, wakes the namespace's pass and
	// waits for s's object to go, named by the pass's Event on the policy.
	retireAfter := func(s *sessionsv1alpha1.AgentSession) {
		uid := s.UID
		fakeClock.Step(61 * time.Minute)
		touch(s)
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(s), &sessionsv1alpha1.AgentSession{}))
		}, testenv.Timeout, testenv.Interval).Should(BeTrue(), "the archived session past retention keeps its object")
		s.UID = uid
		Eventually(func(g Gomega) {
			var list eventsv1.EventList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range list.Items {
				if e.Regarding.Kind == "SessionPolicy" && e.Reason == sessionsv1alpha1.EventSessionsRetired {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring(s.Name)), "the pass's Event on the policy names it")
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(eventsOf(Default, s)).NotTo(ContainElement(ContainSubstring("sessionretention-controller")),
			"no Event of its own: it would go with the object")
	}
	record := func(sid string) (transcript.RetiredSession, bool) {
		recs, err := suite.Manager.Retired.RetiredSessions(ctx, ns, transcript.RetiredQuery{Ref: sid})
		Expect(err).NotTo(HaveOccurred())
		for _, r := range recs {
			if r.SessionID == sid {
				return r, true
			}
		}
		return transcript.RetiredSession{}, false
	}

	// A session's life in writes, as a watcher sees them (each one an object version in the
	// API server's watch cache and in etcd): created, one send, archived, retired. The
	// session carries no finalizer, so none is patched on, and the retirement is one write,
	// the delete: no deletionTimestamp version, no finalizer removal.
	It("costs a session's life no finalizer writes: its delete is one write", func() {
		createAgent(ns, "life", rule("^hello", "hi"))
		// From the namespace's list: every version after it, the create's too.
		wc, before := watcherClient(), &sessionsv1alpha1.AgentSessionList{}
		Expect(wc.List(ctx, before, client.InNamespace(ns))).To(Succeed())
		w, err := wc.Watch(ctx, &sessionsv1alpha1.AgentSessionList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: before.ResourceVersion}})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		s := createSession(ns, "agent:life:main", "life")
		waitSend(createSend(ns, "agent:life:main", "hello", 30, ""), completed)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.MessageCount).To(BeNumerically(">=", 2))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		archiveNow(s)
		managedFields := len(s.ManagedFields)
		retireAfter(s)

		var versions []*sessionsv1alpha1.AgentSession
		deleted := false
		for !deleted {
			select {
			case e := <-w.ResultChan():
				v, ok := e.Object.(*sessionsv1alpha1.AgentSession)
				Expect(ok).To(BeTrue(), "watch event %s of %T", e.Type, e.Object)
				versions, deleted = append(versions, v), e.Type == watch.Deleted
			case <-time.After(testenv.Timeout):
				Fail("no delete event of the retired session")
			}
		}
		// The test's own writes: the touches that wake the retention pass on the fake clock.
		touches := 0
		for i := 1; i < len(versions); i++ {
			if versions[i].Annotations["test/touched"] != versions[i-1].Annotations["test/touched"] {
				touches++
			}
		}
		writes := len(versions) - touches
		AddReportEntry("session life writes", fmt.Sprintf("%d writes (create, one send, archive, retire; %d test touches left out), %d managedFields entries when archived",
			writes, touches, managedFields))
		GinkgoWriter.Printf("session life: %d writes, %d managedFields entries\n", writes, managedFields)
		for _, v := range versions {
			Expect(v.Finalizers).To(BeEmpty(), "a version of the session with a finalizer")
			Expect(v.DeletionTimestamp).To(BeNil(), "a version of the session being deleted before its delete")
		}
	})

	It("retires an archived session past archivedSessionsSeconds and restores it with its old transcript", func() {
		createAgent(ns, "ret", rule("^hello", "hi"), rule("^again", "welcome back"))
		s := createSession(ns, "agent:ret:main", "ret")
		waitSend(createSend(ns, "agent:ret:main", "hello", 30, ""), completed)
		sid := s.Status.SessionID
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.MessageCount).To(BeNumerically(">=", 2))
		}, testenv.Timeout, testenv.Interval).Should(Succeed(), "the counters the record keeps")
		person := &sessiontools.Call{Env: env(), Namespace: ns, ID: "person"}

		By("an archived session within its retention keeps its object")
		archiveNow(s)
		fakeClock.Step(30 * time.Minute)
		touch(s)
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(s), &sessionsv1alpha1.AgentSession{}) },
			"1s", testenv.Interval).Should(Succeed())

		By("past it, the object goes and the store keeps its record")
		retireAfter(s)
		rec, ok := record(sid)
		Expect(ok).To(BeTrue(), "no record of the retired session")
		Expect(rec).To(And(HaveField("Key", "agent:ret:main"), HaveField("AgentID", "ret"), HaveField("Name", s.Name),
			HaveField("MessageCount", BeNumerically(">=", 2)), HaveField("Reason", "age")))

		By("it lists as archived (retired), not as active")
		Expect(rows(person, false)).NotTo(HaveKey("agent:ret:main"))
		archived := rows(person, true)
		Expect(archived).To(HaveKey("agent:ret:main"))
		Expect(archived["agent:ret:main"]).To(And(HaveKeyWithValue("sessionId", sid), HaveKeyWithValue("archived", true), HaveKeyWithValue("retired", true)))

		By("its history reads")
		hist := tool(person, "sessions_history", map[string]any{"sessionKey": "agent:ret:main"})
		Expect(hist).To(HaveKeyWithValue("sessionId", sid))
		Expect(hist["messages"]).To(HaveLen(2))

		By("restore recreates the object with its old transcript")
		Expect(tool(person, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:ret:main", "expectedSessionId": "not-" + sid})).
			To(HaveKeyWithValue("status", "forbidden"))
		Expect(tool(person, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:ret:main", "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "ok"), HaveKeyWithValue("sessionId", sid)))
		back := &sessionsv1alpha1.AgentSession{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, keyOf(ns, "agent:ret:main"), back)).To(Succeed())
			g.Expect(back.Status.SessionID).To(Equal(sid))
			g.Expect(back.Status.Phase).To(Equal(sessionsv1alpha1.SessionActive))
			g.Expect(meta.IsStatusConditionTrue(back.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(eventsOf(g, back)).To(ContainElement(ContainSubstring("Normal/Restored")))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(back.UID).NotTo(Equal(s.UID), "a new object")
		Expect(back.Status.MessageCount).To(BeNumerically(">=", 2))
		waitSend(createSend(ns, "agent:ret:main", "again", 30, ""), completed)
		Expect(texts(messages(ns, back))).To(Equal([]string{"user: hello", "assistant: hi", "user: again", "assistant: welcome back"}))
		Eventually(func() bool { _, ok := record(sid); return ok }, testenv.Timeout, testenv.Interval).Should(BeFalse(),
			"the record of a restored session is dropped")
		Expect(rows(person, true)).NotTo(HaveKey("agent:ret:main"))
		Expect(rows(person, false)).To(HaveKey("agent:ret:main"))

		By("a second restore finds nothing to restore")
		Expect(tool(person, "sessions", map[string]any{"action": "restore", "sessionKey": "agent:ret:main", "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "error"), HaveKeyWithValue("error", ContainSubstring("is not archived"))))
	})

	It("retires a kept child of a finished run the same way, in its requester's tree", func() {
		Expect(k8s.Patch(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"archiveAfterMinutes":30,"visibility":"tree"}}`)))).To(Succeed())
		mainAgent := createAgent(ns, "main", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		createAgent(ns, "research", rule("^look", "found it"))
		main := createSession(ns, "agent:main:main", "main")
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look", AgentID: "research", RequesterSessionKey: "agent:main:main"}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		child := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), child)).To(Succeed())
		sid := child.Status.SessionID

		By("archived after archiveAfterMinutes, then retired after the retention")
		fakeClock.Step(31 * time.Minute)
		touch(child)
		waitArchived(child)
		retireAfter(child)
		rec, ok := record(sid)
		Expect(ok).To(BeTrue())
		Expect(rec.SpawnedBy).To(Equal("agent:main:main"))

		By("its requester lists it as archived and reads its history")
		requester := &sessiontools.Call{Env: env(), Namespace: ns, ID: "requester", Session: main, Agent: mainAgent}
		Expect(rows(requester, true)).To(HaveKeyWithValue(run.Status.ChildSessionKey, HaveKeyWithValue("retired", true)))
		hist := tool(requester, "sessions_history", map[string]any{"sessionKey": run.Status.ChildSessionKey})
		Expect(hist).To(HaveKeyWithValue("sessionId", sid))
		Expect(hist["messages"]).To(HaveLen(2))

		By("another agent's session does not see it")
		createAgent(ns, "other")
		other := createSession(ns, "agent:other:main", "other")
		stranger := &sessiontools.Call{Env: env(), Namespace: ns, ID: "stranger", Session: other,
			Agent: &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}}
		Expect(rows(stranger, true)).NotTo(HaveKey(run.Status.ChildSessionKey))
		_, err := sessiontoolsRun(stranger, "sessions_history", map[string]any{"sessionKey": run.Status.ChildSessionKey})
		Expect(err).To(HaveOccurred(), "a retired session outside the caller's tree")

		By("its requester restores it, spawnedBy and all")
		Expect(tool(requester, "sessions", map[string]any{"action": "restore", "sessionKey": run.Status.ChildSessionKey, "expectedSessionId": sid})).
			To(And(HaveKeyWithValue("status", "ok"), HaveKeyWithValue("sessionId", sid)))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), child)).To(Succeed())
			g.Expect(child.Status.SessionID).To(Equal(sid))
			g.Expect(child.Status.Phase).To(Equal(sessionsv1alpha1.SessionActive))
			g.Expect(child.Spec.SpawnedBy).To(Equal("agent:main:main"))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(texts(messages(ns, child))).To(ContainElement("assistant: found it"))
	})

	It("retires the longest archived past maxArchivedSessions and says so on the policy", func() {
		Expect(k8s.Patch(ctx, &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"retention":{"maxArchivedSessions":1}}}`)))).To(Succeed())
		createAgent(ns, "cnt")
		first := createSession(ns, "agent:cnt:first", "cnt")
		second := createSession(ns, "agent:cnt:second", "cnt")
		archiveNow(first)
		fakeClock.Step(time.Minute)
		archiveNow(second)
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(first), &sessionsv1alpha1.AgentSession{}))
		}, testenv.Timeout, testenv.Interval).Should(BeTrue(), "the longest archived of two over a bound of one")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		rec, ok := record(first.Status.SessionID)
		Expect(ok).To(BeTrue())
		Expect(rec.Reason).To(Equal("count"))
		pol := &sessionsv1alpha1.SessionPolicy{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pol)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventsOf(g, pol)).To(ContainElement("sessionretention-controller Normal/" + sessionsv1alpha1.EventSessionsRetired))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})

// waitArchived waits until s is Archived with its Archived condition.
func waitArchived(s *sessionsv1alpha1.AgentSession) {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionArchived)).To(BeTrue())
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
}

// watcherClient is a client that watches, for a restore's wait.
func watcherClient() client.WithWatch {
	w, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return w
}

// sessiontoolsRun runs a session tool and returns its raw result and error.
func sessiontoolsRun(c *sessiontools.Call, name string, args map[string]any) (any, error) {
	raw, _ := json.Marshal(args)
	for _, t := range sessiontools.All() {
		if t.Name == name {
			return t.Run(ctx, c, raw)
		}
	}
	Fail("no tool " + name)
	return nil, nil
}
