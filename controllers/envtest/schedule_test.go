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
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Schedules tick on the fake clock: a spec moves it to a tick and touches the schedule, as
// the RequeueAfter to that tick would wake it.
var _ = Describe("SessionSchedule", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		createAgent(ns, "bot", rule("^tick", "tock"), sessionsv1alpha1.ScriptRule{Match: "^slow", Reply: "late", Delay: &metav1.Duration{Duration: 10 * time.Minute}})
	})

	newSchedule := func(name, message string, mut ...func(*sessionsv1alpha1.SessionScheduleSpec)) *sessionsv1alpha1.SessionSchedule {
		s := &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "* * * * *", AgentID: "bot", Message: message, TimeoutSeconds: ptr.To[int32](0)}}
		for _, m := range mut {
			m(&s.Spec)
		}
		Expect(k8s.Create(ctx, s)).To(Succeed())
		DeferCleanup(func() {
			sends := scheduleSends(s)
			for i := range sends {
				if !sends[i].Status.Finished() {
					cancel(&sends[i])
				}
			}
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, s))).To(Succeed())
		})
		return s
	}
	// nextMinute moves the fake clock (forward) to a second past the first whole minute
	// after now and a margin, and returns that minute.
	nextMinute := func() time.Time {
		now := fakeClock.Now()
		if t := time.Now(); t.After(now) {
			now = t
		}
		m := now.Add(5 * time.Second).Truncate(time.Minute).Add(time.Minute)
		fakeClock.SetTime(m.Add(time.Second))
		return m
	}
	// tickTo moves the fake clock to t and wakes the schedule.
	tickTo := func(s *sessionsv1alpha1.SessionSchedule, t time.Time) {
		fakeClock.SetTime(t)
		touch(s)
	}
	sendNamed := func(s *sessionsv1alpha1.SessionSchedule, tick time.Time) *sessionsv1alpha1.SessionSend {
		GinkgoHelper()
		send := &sessionsv1alpha1.SessionSend{}
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: policy.ScheduledSendName(s.Name, tick)}, send)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
		return send
	}
	waitSchedule := func(s *sessionsv1alpha1.SessionSchedule, cond func(g Gomega, s *sessionsv1alpha1.SessionSchedule)) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			cond(g, s)
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	}
	lastSchedule := func(t time.Time) func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
		return func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(s.Status.LastScheduleTime).NotTo(BeNil())
			g.Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", t))
		}
	}

	It("waits with Ready=False, AgentNotFound, for an Agent that does not exist, and ticks once it does", func() {
		s := newSchedule("orphan", "tick orphan", func(sp *sessionsv1alpha1.SessionScheduleSpec) { sp.AgentID = "later" })
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			ready := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect([]string{string(ready.Status), ready.Reason, ready.Message}).To(Equal([]string{"False", "AgentNotFound", policy.ScheduleAgentMissing("later", ns)}))
			g.Expect(s.Status.NextScheduleTime).To(BeNil())
		})
		tickTo(s, nextMinute().Add(5*time.Second))
		Consistently(func() []sessionsv1alpha1.SessionSend { return scheduleSends(s) }, "1s", testenv.Interval).Should(BeEmpty())
		createAgent(ns, "later", rule("^tick", "tock"))
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(s.Status.NextScheduleTime).NotTo(BeNil())
		})
	})

	It("ticks at the right times in Europe/Berlin across the spring DST change", func() {
		// 02:30 Berlin time: 01:30 UTC in winter, 00:30 UTC in summer; on 2027-03-28 the
		// clocks jump from 02:00 to 03:00, so that day has no 02:30.
		fakeClock.SetTime(time.Date(2027, 3, 27, 1, 0, 0, 0, time.UTC))
		s := newSchedule("berlin", "tick berlin", func(sp *sessionsv1alpha1.SessionScheduleSpec) {
			sp.Schedule, sp.TimeZone, sp.StartingDeadlineSeconds = "30 2 * * *", ptr.To("Europe/Berlin"), ptr.To[int64](3600)
			// The spec jumps two days and then counts both sends: the suite's 24 h TTL would
			// delete the first (as it should) within a second of the jump.
			sp.TTLSecondsAfterFinished = ptr.To[int32](7 * 24 * 3600)
		})
		winter := time.Date(2027, 3, 27, 1, 30, 0, 0, time.UTC)
		summer := time.Date(2027, 3, 29, 0, 30, 0, 0, time.UTC)
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(s.Status.NextScheduleTime).NotTo(BeNil())
			g.Expect(s.Status.NextScheduleTime.Time).To(BeTemporally("==", winter))
		})
		tickTo(s, winter.Add(5*time.Second))
		send := sendNamed(s, winter)
		Expect(send.Annotations).To(HaveKeyWithValue(sessionsv1alpha1.ScheduledTimeAnnotation, "2027-03-27T01:30:00Z"))
		Expect(send.Spec.SessionKey).To(Equal("cron:berlin"))
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			lastSchedule(winter)(g, s)
			g.Expect(s.Status.NextScheduleTime.Time).To(BeTemporally("==", summer), "no tick on the day without 02:30")
		})
		tickTo(s, summer.Add(-time.Minute))
		Consistently(func() []sessionsv1alpha1.SessionSend { return scheduleSends(s) }, "1s", testenv.Interval).Should(HaveLen(1))
		tickTo(s, summer.Add(5*time.Second))
		sendNamed(s, summer)
		waitSchedule(s, lastSchedule(summer))
		Expect(scheduleSends(s)).To(HaveLen(2))
	})

	It("sends into cron:<name> with provenance cron, and Allow sends while the last runs", func() {
		s := newSchedule("allow", "slow allow")
		first := nextMinute()
		touch(s)
		a := sendNamed(s, first)
		Expect(metav1.IsControlledBy(a, s)).To(BeTrue())
		Expect(a.Labels).To(HaveKeyWithValue(sessionsv1alpha1.ScheduleLabel, "allow"))
		waitSend(a, func(g Gomega, send *sessionsv1alpha1.SessionSend) {
			g.Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
		})
		tickTo(s, first.Add(time.Minute+time.Second))
		sendNamed(s, first.Add(time.Minute))
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) { g.Expect(s.Status.Active).To(HaveLen(2)) })
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		Expect(a.Spec.Cancel).To(BeFalse())

		session := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, keyOf(ns, "cron:allow"), session)).To(Succeed())
		Expect(session.Spec.AgentID).To(Equal("bot"))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, keyOf(ns, "cron:allow"), session)).To(Succeed())
			g.Expect(session.Status.SessionID).NotTo(BeEmpty())
			var prov []transcript.Provenance
			for _, r := range messages(ns, session) {
				if r.Message.Role == transcript.RoleUser && r.Message.Provenance != nil {
					prov = append(prov, *r.Message.Provenance)
				}
			}
			g.Expect(prov).To(ContainElement(transcript.Provenance{Kind: transcript.ProvenanceCron, Schedule: "allow"}))
		}, testenv.Timeout, testenv.Interval).Should(Succeed())
	})

	It("Forbid skips a tick while the last send runs", func() {
		s := newSchedule("forbid", "slow forbid", func(sp *sessionsv1alpha1.SessionScheduleSpec) {
			sp.ConcurrencyPolicy = sessionsv1alpha1.ForbidConcurrent
		})
		first := nextMinute()
		touch(s)
		a := sendNamed(s, first)
		waitSend(a, func(g Gomega, send *sessionsv1alpha1.SessionSend) {
			g.Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
		})
		tickTo(s, first.Add(time.Minute+time.Second))
		Eventually(func(g Gomega) {
			g.Expect(eventsOf(g, s)).To(ContainElement("sessionschedule-controller Normal/Skipped"))
		},
			testenv.Timeout, testenv.Interval).Should(Succeed())
		Expect(scheduleSends(s)).To(HaveLen(1))
		waitSchedule(s, lastSchedule(first))
	})

	It("takes a labelled send it does not control for an ordinary send, for provenance and Forbid", func() {
		s := newSchedule("forged", "slow forged", func(sp *sessionsv1alpha1.SessionScheduleSpec) {
			sp.ConcurrencyPolicy = sessionsv1alpha1.ForbidConcurrent
		})
		h := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: ns}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "bot",
			SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "signing"}, Key: "secret"}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		// Each send runs slow in a session of its own: a session runs one turn at a time.
		send := func(name string, labels map[string]string, owner client.Object) *sessionsv1alpha1.SessionSend {
			key := "agent:bot:webchat:direct:" + name
			createSession(ns, key, "bot")
			send := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
				Annotations: map[string]string{sessionsv1alpha1.DeliveryIDAnnotation: "msg_" + name}},
				Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "slow " + name, TimeoutSeconds: ptr.To[int32](0)}}
			if owner != nil {
				Expect(controllerutil.SetControllerReference(owner, send, k8s.Scheme())).To(Succeed())
			}
			Expect(k8s.Create(ctx, send)).To(Succeed())
			DeferCleanup(cancel, send)
			return send
		}
		external := transcript.Provenance{Kind: transcript.ProvenanceExternal, SourceTool: "sessions_send"}
		want := map[*sessionsv1alpha1.SessionSend]transcript.Provenance{
			send("fake-tick", map[string]string{sessionsv1alpha1.ScheduleLabel: s.Name}, nil): external,
			send("fake-delivery", map[string]string{sessionsv1alpha1.HookLabel: h.Name}, nil): external,
			send("other-owner", map[string]string{sessionsv1alpha1.ScheduleLabel: s.Name}, h): external,
			send("delivery", map[string]string{sessionsv1alpha1.HookLabel: h.Name}, h):        {Kind: transcript.ProvenanceHook, Hook: h.Name, DeliveryID: "msg_delivery"},
		}
		for sent, prov := range want {
			waitSend(sent, func(g Gomega, send *sessionsv1alpha1.SessionSend) {
				g.Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
			})
			Eventually(func(g Gomega) {
				session := &sessionsv1alpha1.AgentSession{}
				g.Expect(k8s.Get(ctx, keyOf(ns, sent.Spec.SessionKey), session)).To(Succeed())
				var got []transcript.Provenance
				for _, r := range messages(ns, session) {
					if r.Message.Role == transcript.RoleUser && r.Message.Provenance != nil {
						got = append(got, *r.Message.Provenance)
					}
				}
				g.Expect(got).To(Equal([]transcript.Provenance{prov}), sent.Name)
			}, testenv.Timeout, testenv.Interval).Should(Succeed())
		}
		By("Forbid sends the tick while the forged ticks run")
		first := nextMinute()
		touch(s)
		a := sendNamed(s, first)
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(s.Status.Active).To(ConsistOf(sessionsv1alpha1.ActiveSend{Name: a.Name, UID: a.UID}))
		})
	})

	It("Replace cancels the running send and sends the tick", func() {
		s := newSchedule("replace", "slow replace", func(sp *sessionsv1alpha1.SessionScheduleSpec) {
			sp.ConcurrencyPolicy = sessionsv1alpha1.ReplaceConcurrent
		})
		first := nextMinute()
		touch(s)
		a := sendNamed(s, first)
		waitSend(a, func(g Gomega, send *sessionsv1alpha1.SessionSend) {
			g.Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendRunning))
		})
		tickTo(s, first.Add(time.Minute+time.Second))
		b := sendNamed(s, first.Add(time.Minute))
		waitSend(a, func(g Gomega, send *sessionsv1alpha1.SessionSend) {
			g.Expect(send.Spec.Cancel).To(BeTrue())
			g.Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendCancelled))
		})
		Expect(b.Spec.Cancel).To(BeFalse())
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(s.Status.Active).To(HaveLen(1))
			g.Expect(s.Status.Active[0].Name).To(Equal(b.Name))
		})
	})

	It("suspend stops new ticks; resuming sends the most recent missed tick once", func() {
		s := newSchedule("suspended", "tick suspended", func(sp *sessionsv1alpha1.SessionScheduleSpec) { sp.Suspend = ptr.To(true) })
		first := nextMinute()
		touch(s)
		waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionReady)).To(HaveField("Reason", "Suspended"))
			g.Expect(s.Status.NextScheduleTime).To(BeNil())
		})
		tickTo(s, first.Add(3*time.Minute+time.Second))
		Consistently(func() []sessionsv1alpha1.SessionSend { return scheduleSends(s) }, "1s", testenv.Interval).Should(BeEmpty())
		Expect(k8s.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`)))).To(Succeed())
		sendNamed(s, first.Add(3*time.Minute))
		waitSchedule(s, lastSchedule(first.Add(3*time.Minute)))
		Expect(scheduleSends(s)).To(HaveLen(1))
	})

	It("after a downtime sends the most recent missed tick once, within startingDeadlineSeconds, and reports too many missed", func() {
		catchUp := newSchedule("catch-up", "tick catch-up")
		late := newSchedule("too-late", "tick too-late", func(sp *sessionsv1alpha1.SessionScheduleSpec) { sp.StartingDeadlineSeconds = ptr.To[int64](10) })
		first := nextMinute()
		touch(catchUp)
		touch(late)
		sendNamed(catchUp, first)
		sendNamed(late, first)
		// The first tick recorded before the downtime: a stop that cancels the status write
		// leaves the tick unrecorded, and past the deadline nothing records it after.
		waitSchedule(catchUp, lastSchedule(first))
		waitSchedule(late, lastSchedule(first))

		By("ten minutes and a half down: one catch-up; none past the deadline")
		stopManager()
		fakeClock.SetTime(first.Add(10*time.Minute + 30*time.Second))
		startManager()
		sendNamed(catchUp, first.Add(10*time.Minute))
		waitSchedule(catchUp, lastSchedule(first.Add(10*time.Minute)))
		// As CronJob: the ticks before now minus the deadline are not looked at.
		waitSchedule(late, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(s.Status.NextScheduleTime).NotTo(BeNil())
			g.Expect(s.Status.NextScheduleTime.Time).To(BeTemporally("==", first.Add(11*time.Minute)))
			lastSchedule(first)(g, s)
		})
		Expect(scheduleSends(catchUp)).To(HaveLen(2))
		Expect(scheduleSends(late)).To(HaveLen(1))

		By("three hours later: too many missed start times, and still one send")
		tickTo(catchUp, first.Add(190*time.Minute+time.Second))
		sendNamed(catchUp, first.Add(190*time.Minute))
		waitSchedule(catchUp, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) {
			g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, sessionsv1alpha1.ConditionMissedStartTimes)).To(BeTrue())
		})
		Expect(scheduleSends(catchUp)).To(HaveLen(3))
	})

	It("keeps successfulSendsHistoryLimit finished sends", func() {
		s := newSchedule("history", "tick history", func(sp *sessionsv1alpha1.SessionScheduleSpec) { sp.SuccessfulSendsHistoryLimit = ptr.To[int32](1) })
		first := nextMinute()
		var names []string
		for i := range 3 {
			tick := first.Add(time.Duration(i) * time.Minute)
			tickTo(s, tick.Add(time.Second))
			send := waitSend(sendNamed(s, tick), completed)
			Expect(send.Status.Phase).To(Equal(sessionsv1alpha1.SendCompleted))
			names = append(names, send.Name)
			waitSchedule(s, func(g Gomega, s *sessionsv1alpha1.SessionSchedule) { g.Expect(s.Status.Active).To(BeEmpty()) })
		}
		Eventually(func() []string {
			var got []string
			for _, send := range scheduleSends(s) {
				got = append(got, send.Name)
			}
			return got
		}, testenv.Timeout, testenv.Interval).Should(Equal(names[2:]))
		Expect(s.Status.LastSuccessfulTime).NotTo(BeNil())
	})

	It("sends a tick once when the manager restarts between the tick's send and its status", func() {
		createSession(ns, "cron:restart", "bot")
		stopManager()
		s := newSchedule("restart", "tick restart")
		first := nextMinute()
		// What a manager that stopped after its create and before its status write left.
		left := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: policy.ScheduledSendName(s.Name, first), Namespace: ns,
			Labels: map[string]string{sessionsv1alpha1.ScheduleLabel: s.Name}},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: "cron:restart", Message: "tick restart", TimeoutSeconds: ptr.To[int32](0)}}
		Expect(controllerutil.SetControllerReference(s, left, k8s.Scheme())).To(Succeed())
		Expect(k8s.Create(ctx, left)).To(Succeed())
		startManager()
		waitSchedule(s, lastSchedule(first))
		waitSend(left, completed)
		Consistently(func() []sessionsv1alpha1.SessionSend { return scheduleSends(s) }, "1s", testenv.Interval).Should(HaveLen(1))
		session := &sessionsv1alpha1.AgentSession{}
		Expect(k8s.Get(ctx, keyOf(ns, "cron:restart"), session)).To(Succeed())
		var ticks int
		for _, t := range texts(messages(ns, session)) {
			if t == "user: tick restart" {
				ticks++
			}
		}
		Expect(ticks).To(Equal(1))
	})
})

// scheduleSends are the schedule's sends, by name (the API server's, finished ones too).
func scheduleSends(s *sessionsv1alpha1.SessionSchedule) []sessionsv1alpha1.SessionSend {
	var list sessionsv1alpha1.SessionSendList
	Expect(k8s.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{sessionsv1alpha1.ScheduleLabel: s.Name})).To(Succeed())
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}
