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

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestPrintSchedules(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 30, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	items := []sessionsv1alpha1.SessionSchedule{
		{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "team"},
			Spec:   sessionsv1alpha1.SessionScheduleSpec{Schedule: "0 2 * * *", TimeZone: ptr.To("Europe/Berlin"), SessionKey: "agent:bot:main"},
			Status: sessionsv1alpha1.SessionScheduleStatus{LastScheduleTime: at(-7 * time.Hour), NextScheduleTime: at(17 * time.Hour)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "digest", Namespace: "team"},
			Spec:   sessionsv1alpha1.SessionScheduleSpec{Schedule: "* * * * *"},
			Status: sessionsv1alpha1.SessionScheduleStatus{Active: make([]sessionsv1alpha1.ActiveSend, 2), NextScheduleTime: at(30 * time.Second)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: "team"},
			Spec:   sessionsv1alpha1.SessionScheduleSpec{Schedule: "@hourly", Suspend: ptr.To(true)},
			Status: sessionsv1alpha1.SessionScheduleStatus{NextScheduleTime: at(time.Hour)}},
	}
	var b strings.Builder
	if err := printSchedules(&b, items, false, now); err != nil {
		t.Fatal(err)
	}
	want := `NAME     SCHEDULE   TIMEZONE       SUSPEND  ACTIVE  LAST     NEXT    SESSION
digest   * * * * *  UTC            false    2       <never>  in 30s  cron:digest
nightly  0 2 * * *  Europe/Berlin  false    0       7h ago   in 17h  agent:bot:main
paused   @hourly    UTC            true     0       <never>  <none>  cron:paused
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPrintHooks(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 30, 0, time.UTC)
	items := []sessionsv1alpha1.SessionHook{
		{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "team"}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "bot"},
			Status: sessionsv1alpha1.SessionHookStatus{URL: "https://sessions.example:8443/hooks/team/ci", Deliveries: 12,
				LastDeliveryTime: &metav1.Time{Time: now.Add(-2 * time.Minute)},
				Conditions:       []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "gh", Namespace: "ops"}, Spec: sessionsv1alpha1.SessionHookSpec{AgentID: "bot", Signature: sessionsv1alpha1.HookSignatureGitHub},
			Status: sessionsv1alpha1.SessionHookStatus{Conditions: []metav1.Condition{{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "SecretNotFound"}}}},
	}
	var b strings.Builder
	if err := printHooks(&b, items, true, now); err != nil {
		t.Fatal(err)
	}
	want := `NAMESPACE  NAME  AGENT  SIGNATURE  READY                   DELIVERIES  LAST DELIVERY  URL
ops        gh    bot    github     False (SecretNotFound)  0           <never>        /hooks/ops/gh
team       ci    bot    standard   True                    12          2m ago         https://sessions.example:8443/hooks/team/ci
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
