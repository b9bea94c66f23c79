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
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"github.com/agent-sessions/agent-session-operator/controllers/announce"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

func createRun(ns string, spec sessionsv1alpha1.SubagentRunSpec) *sessionsv1alpha1.SubagentRun {
	r := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Namespace: ns}, Spec: spec}
	Expect(k8s.Create(ctx, r)).To(Succeed())
	return r
}

func waitRun(r *sessionsv1alpha1.SubagentRun, cond func(g Gomega, r *sessionsv1alpha1.SubagentRun)) *sessionsv1alpha1.SubagentRun {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(r), r)).To(Succeed())
		cond(g, r)
	}, testenv.Timeout, testenv.Interval).Should(Succeed())
	return r
}

// runCompleted waits for a run to finish: Completed, Failed or Cancelled.
func runCompleted(g Gomega, r *sessionsv1alpha1.SubagentRun) {
	g.Expect(sessionsv1alpha1.Finished(r.Status.Conditions)).To(BeTrue())
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

var _ = Describe("SubagentRun", func() {
	var ns string
	var main *sessionsv1alpha1.AgentSession
	BeforeEach(func() {
		ns = newNamespace()
		createAgent(ns, "main", rule("^Sub-agent announce step", sessionsv1alpha1.AnnounceSkip))
		createAgent(ns, "research", rule("^look", "found it"),
			sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}})
		main = createSession(ns, "agent:main:main", "main")
	})

	It("runs the task in a child session, with attachments and receipts, and announces in the requester", func() {
		bin := []byte{0, 1, 2, 250}
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{
			Task: "look up llamas", AgentID: "research", RequesterSessionKey: "agent:main:main",
			Attachments: []sessionsv1alpha1.Attachment{
				{Name: "notes.txt", Content: "llamas hum"},
				{Name: "data.bin", Content: base64.StdEncoding.EncodeToString(bin), Encoding: sessionsv1alpha1.EncodingBase64, MimeType: "application/octet-stream"},
			},
		}), runCompleted)

		st := run.Status
		Expect(st.Status).To(Equal(sessionsv1alpha1.SpawnAccepted))
		Expect(st.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		Expect(st.Result).To(Equal("found it"))
		Expect(st.ChildSessionKey).To(Equal("agent:research:subagent:" + string(run.UID)))
		Expect(st.Attachments).To(Equal([]sessionsv1alpha1.AttachmentReceipt{
			{Name: "notes.txt", Bytes: 10, SHA256: sha([]byte("llamas hum"))},
			{Name: "data.bin", Bytes: 4, SHA256: sha(bin)},
		}))
		Expect(st.AttachmentsDir).To(HaveSuffix(filepath.Join(".agents", "attachments", string(run.UID))))
		got, err := os.ReadFile(filepath.Join(st.AttachmentsDir, "data.bin"))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(bin))
		Expect(filepath.Join(st.AttachmentsDir, "manifest.json")).To(BeAnExistingFile())
		Expect(st.Stats.SessionKey).To(Equal(st.ChildSessionKey))
		Expect(st.Stats.OutputTokens).To(BeNumerically(">", 0))
		Expect(st.Announce.Status).To(Equal(sessionsv1alpha1.AnnounceSkipped))
		Expect(st.ArchiveAt).NotTo(BeNil())

		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, st.ChildSessionKey), &child)).To(Succeed())
		Expect(child.Spec.SpawnedBy).To(Equal("agent:main:main"))
		Expect(metav1.IsControlledBy(&child, run)).To(BeTrue())

		recs := messages(ns, main)
		Expect(recs).To(HaveLen(2))
		Expect(recs[0].Message.Provenance.Kind).To(Equal(transcript.ProvenanceSubagentAnnounce))
		text := recs[0].Message.Content[0].Text
		Expect(text).To(HavePrefix(announce.SubagentAnnounceOpening + "\nStatus: succeeded\nResult: found it\nNotes: none\nStats: runtime "))
	})

	It("fails clearly for an agent that does not exist", func() {
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "ghost", RequesterSessionKey: "agent:main:main"}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunFailed))
		Expect(meta.IsStatusConditionTrue(run.Status.Conditions, sessionsv1alpha1.ConditionFailed)).To(BeTrue())
		Expect(meta.FindStatusCondition(run.Status.Conditions, sessionsv1alpha1.ConditionCompleted)).To(BeNil(), "Completed is for success only")
		Expect(run.Status.Notes).To(ContainSubstring(`agent "ghost" not found`))
	})

	It("aborts the run at its timeout and announces Status from the runtime, not the model", func() {
		run := createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "slow task", AgentID: "research", RequesterSessionKey: "agent:main:main", RunTimeoutSeconds: ptr.To[int32](2)})
		waitRun(run, func(g Gomega, r *sessionsv1alpha1.SubagentRun) {
			g.Expect(r.Status.Phase).To(Equal(sessionsv1alpha1.RunRunning))
		})
		// Three timers: the run timeout, the turn's timeout and the scripted delay.
		Eventually(fakeClock.Waiters, testenv.Timeout, testenv.Interval).Should(BeNumerically(">=", 3))
		fakeClock.Step(time.Minute)
		waitRun(run, runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunTimedOut))
		Expect(run.Status.Notes).To(ContainSubstring("aborted after the run timeout of 2s"))
		Expect(messages(ns, main)[0].Message.Content[0].Text).To(ContainSubstring("\nStatus: timed out\n"))
		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &child)).To(Succeed())
		Eventually(func() bool {
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(&child), &child)
			return child.Status.AbortedLastRun
		}, testenv.Timeout, testenv.Interval).Should(BeTrue())
	})

	It("deletes the child after the announce with cleanup delete, archiving its transcript and removing its workspace", func() {
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look", AgentID: "research", RequesterSessionKey: "agent:main:main", Cleanup: sessionsv1alpha1.CleanupDelete,
			Attachments: []sessionsv1alpha1.Attachment{{Name: "notes.txt", Content: "hello"}}}), runCompleted)
		Expect(run.Status.Phase).To(Equal(sessionsv1alpha1.RunSucceeded))
		Expect(run.Status.AttachmentsDir).To(HavePrefix(workspaceOf(ns, run.Status.Stats.SessionID)))
		sessionID := run.Status.Stats.SessionID
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &sessionsv1alpha1.AgentSession{}))
		}, testenv.Timeout, testenv.Interval).Should(BeTrue())
		// The delete's cleanup archives it once the object is gone (no finalizer holds it).
		Eventually(func(g Gomega) {
			_, err := store.Stats(ctx, ns, sessionID)
			g.Expect(err).To(MatchError(transcript.ErrNotFound), "transcript still live")
			g.Expect(workspaceOf(ns, sessionID)).NotTo(BeADirectory(), "the deleted child's workspace is still on the volume")
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		archived, _ := filepath.Glob(filepath.Join(dataDir, "transcripts", ns, sessionID+".jsonl.deleted.*"))
		Expect(archived).To(HaveLen(1))
	})

	It("keeps the child until archiveAfterMinutes, then archives it", func() {
		createPolicy(ns, sessionsv1alpha1.SessionPolicySpec{ArchiveAfterMinutes: ptr.To[int32](30)})
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "look", AgentID: "research", RequesterSessionKey: "agent:main:main",
			Attachments: []sessionsv1alpha1.Attachment{{Name: "notes.txt", Content: "hello"}}}), runCompleted)
		Expect(run.Status.ArchiveAt.Sub(run.Status.CompletedAt.Time)).To(Equal(30 * time.Minute))
		Expect(filepath.Join(run.Status.AttachmentsDir, "notes.txt")).To(BeAnExistingFile())
		var child sessionsv1alpha1.AgentSession
		Expect(k8s.Get(ctx, keyOf(ns, run.Status.ChildSessionKey), &child)).To(Succeed())
		Expect(child.Status.Phase).To(Equal(sessionsv1alpha1.SessionActive))

		Expect(child.Annotations).To(HaveKey(sessionsv1alpha1.ArchiveAtAnnotation), "the run asks the child to archive itself")
		fakeClock.Step(31 * time.Minute)
		touch(&child)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&child), &child)).To(Succeed())
			g.Expect(child.Status.Phase).To(Equal(sessionsv1alpha1.SessionArchived))
			_, err := store.Stats(ctx, ns, child.Status.SessionID)
			g.Expect(errors.Is(err, transcript.ErrNotFound)).To(BeTrue())
			g.Expect(workspaceOf(ns, child.Status.SessionID)).NotTo(BeADirectory(), "the archived child's workspace is still on the volume")
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("gives the child the full tool set minus the session tools", func() {
		createAgent(ns, "spawner", sessionsv1alpha1.ScriptRule{Match: "^try", ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "sessions_spawn"}}, Reply: "tools: {{toolResults}}"})
		run := waitRun(createRun(ns, sessionsv1alpha1.SubagentRunSpec{Task: "try to spawn", AgentID: "spawner"}), runCompleted)
		Expect(run.Status.Result).To(ContainSubstring(`unknown tool \"sessions_spawn\"`), "run status: %+v", run.Status)
		Expect(strings.Contains(run.Status.Announce.Reason, "no requester")).To(BeTrue())
	})
})

// workspaceOf is the workspace directory of a session in the suite's workspace root.
func workspaceOf(ns, sessionID string) string {
	return turns.WorkspaceDir(filepath.Join(dataDir, "workspaces"), ns, sessionID)
}
