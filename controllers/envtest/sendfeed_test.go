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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The manager hands the transcript-store every change of its SessionSends (controllers.
// SendFeed), so that the store's /events needs no watch of sends of its own: the suite's
// manager hands them to sendChanges.
var _ = Describe("The manager's feed of SessionSends to the store", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		createAgent(ns, "bob", announceSkip, rule("^ping", "pong"),
			sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}})
		createSession(ns, "agent:bob:main", "bob")
	})

	It("hands over a send's creation and its finish, and no delete as it leaves the cache", func() {
		send := waitSend(createSend(ns, "agent:bob:main", "ping", 30, ""), completed)
		Eventually(func() []string { return sendChanges.of(send.UID) }, testenv.Timeout, testenv.Interval).Should(
			SatisfyAll(ContainElement(transcript.ChangeAdded+" "), ContainElement(transcript.ChangeModified+" Completed")))
		// The finished send left the manager's cache (a delete to its informer) the moment it
		// finished; past finishWait that delete is still not handed over.
		fakeClock.Step(6 * time.Second)
		Consistently(func() []string { return sendChanges.of(send.UID) }, 2*time.Second, testenv.Interval).ShouldNot(
			ContainElement(HavePrefix(transcript.ChangeDeleted)))
	})

	It("hands over a send deleted before it finished as deleted", func() {
		send := createSend(ns, "agent:bob:main", "slow", 0, "")
		Eventually(func() []string { return sendChanges.of(send.UID) }, testenv.Timeout, testenv.Interval).Should(
			ContainElement(transcript.ChangeModified + " Running"))
		Expect(k8s.Delete(ctx, send)).To(Succeed())
		Eventually(func() []string {
			fakeClock.Step(time.Second) // the feed holds a delete for finishWait
			return sendChanges.of(send.UID)
		}, testenv.Timeout, testenv.Interval).Should(ContainElement(HavePrefix(transcript.ChangeDeleted)))
	})
})

// feedRecorder is the suite's controllers.SendFeed: it keeps every change handed over.
type feedRecorder struct {
	mu  sync.Mutex
	got []transcript.SendChange
}

func (r *feedRecorder) PublishSendChange(c transcript.SendChange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
}

// of lists the changes of the send with uid, in order, each as its type and the send's phase.
func (r *feedRecorder) of(uid types.UID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.got {
		var s sessionsv1alpha1.SessionSend
		if json.Unmarshal(c.Object, &s) == nil && s.UID == uid {
			out = append(out, c.Type+" "+string(s.Status.Phase))
		}
	}
	return out
}
