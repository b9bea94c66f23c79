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

package ownerflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// cond is a condition as a send's or run's controller sets it: without an observedGeneration
// of its own (status.observedGeneration carries it).
func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

var ignoreTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func TestSetProgress(t *testing.T) {
	cases := map[string]struct {
		in, want []metav1.Condition
	}{
		"working": {
			in:   []metav1.Condition{cond(sessionsv1alpha1.ConditionReplied, metav1.ConditionTrue, "Replied", "")},
			want: []metav1.Condition{cond(sessionsv1alpha1.ConditionReplied, metav1.ConditionTrue, "Replied", ""), cond(sessionsv1alpha1.ConditionReconciling, metav1.ConditionTrue, "ReplyBack", "in reply-back")},
		},
		"failed: Stalled says why, Reconciling goes": {
			in:   []metav1.Condition{cond(sessionsv1alpha1.ConditionReconciling, metav1.ConditionTrue, "Running", "x"), cond(sessionsv1alpha1.ConditionFailed, metav1.ConditionTrue, "RunFailed", "the run failed: boom")},
			want: []metav1.Condition{cond(sessionsv1alpha1.ConditionFailed, metav1.ConditionTrue, "RunFailed", "the run failed: boom"), cond(sessionsv1alpha1.ConditionStalled, metav1.ConditionTrue, "RunFailed", "the run failed: boom")},
		},
		"completed: neither": {
			in:   []metav1.Condition{cond(sessionsv1alpha1.ConditionReconciling, metav1.ConditionTrue, "Running", "x"), cond(sessionsv1alpha1.ConditionCompleted, metav1.ConditionTrue, "Completed", "")},
			want: []metav1.Condition{cond(sessionsv1alpha1.ConditionCompleted, metav1.ConditionTrue, "Completed", "")},
		},
		"cancelled: neither": {
			in:   []metav1.Condition{cond(sessionsv1alpha1.ConditionReconciling, metav1.ConditionTrue, "Running", "x"), cond(sessionsv1alpha1.ConditionCancelled, metav1.ConditionTrue, "Cancelled", "by spec.cancel")},
			want: []metav1.Condition{cond(sessionsv1alpha1.ConditionCancelled, metav1.ConditionTrue, "Cancelled", "by spec.cancel")},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := append([]metav1.Condition(nil), c.in...)
			SetProgress(&got, "ReplyBack", "in reply-back")
			if diff := cmp.Diff(c.want, got, ignoreTime); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetStalled(t *testing.T) {
	notReady := cond(sessionsv1alpha1.ConditionReady, metav1.ConditionFalse, "SecretNotFound", `API key Secret "k" not found`)
	stalled := cond(sessionsv1alpha1.ConditionStalled, metav1.ConditionTrue, "SecretNotFound", `API key Secret "k" not found`)
	ready := cond(sessionsv1alpha1.ConditionReady, metav1.ConditionTrue, "ProviderConfigured", "ok")
	cases := map[string]struct {
		in          []metav1.Condition
		ready       metav1.Condition
		want        []metav1.Condition
		wantChanged bool
	}{
		"not ready stalls":        {in: []metav1.Condition{notReady}, ready: notReady, want: []metav1.Condition{notReady, stalled}, wantChanged: true},
		"still not ready":         {in: []metav1.Condition{notReady, stalled}, ready: notReady, want: []metav1.Condition{notReady, stalled}},
		"ready again un-stalls":   {in: []metav1.Condition{ready, stalled}, ready: ready, want: []metav1.Condition{ready}, wantChanged: true},
		"ready has nothing to do": {in: []metav1.Condition{ready}, ready: ready, want: []metav1.Condition{ready}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := append([]metav1.Condition(nil), c.in...)
			if changed := SetStalled(&got, c.ready); changed != c.wantChanged {
				t.Errorf("changed = %v, want %v", changed, c.wantChanged)
			}
			if diff := cmp.Diff(c.want, got, ignoreTime); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
