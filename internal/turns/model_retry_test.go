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

package turns

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

func TestRetryCondition(t *testing.T) {
	hung := errors.New("openai: timeout: no data from the server for 1m30s")
	cases := map[string]struct {
		retry provider.Retry
		want  metav1.Condition
	}{
		"retrying a silent endpoint": {
			retry: provider.Retry{Attempt: 2, Class: provider.ErrTimeout, Wait: 1500 * time.Millisecond, Err: hung},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: "Timeout",
				Message: "turn t1: model call attempt 2 in 1.5s after timeout: openai: timeout: no data from the server for 1m30s"},
		},
		"retrying a rate limit": {
			retry: provider.Retry{Attempt: 3, Class: provider.ErrRateLimited, StatusCode: 429, Wait: time.Second, Err: errors.New("429")},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: "RateLimited",
				Message: "turn t1: model call attempt 3 in 1s after rate_limited (HTTP 429): 429"},
		},
		"recovered": {
			retry: provider.Retry{Attempt: 2, Done: true},
			want:  metav1.Condition{Status: metav1.ConditionFalse, Reason: "Recovered", Message: "turn t1: model call succeeded on attempt 2"},
		},
		"gave up": {
			retry: provider.Retry{Attempt: 5, Done: true, Err: hung},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: "RetriesExhausted",
				Message: "turn t1: model call failed on attempt 5: openai: timeout: no data from the server for 1m30s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.want.Type, tc.want.ObservedGeneration = sessionsv1alpha1.ConditionModelRetrying, 7
			if diff := cmp.Diff(tc.want, retryCondition(tc.retry, "t1", 7)); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}
