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

package policy

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestHops(t *testing.T) {
	limit3 := &sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{MaxHops: ptr.To[int32](3)}}
	cases := map[string]struct {
		ann      map[string]string
		p        *sessionsv1alpha1.SessionPolicySpec
		wantNext int
		wantDeny bool
	}{
		"a person's object starts a chain": {ann: nil, wantNext: 1},
		"hop 7 makes hop 8, the default":   {ann: map[string]string{sessionsv1alpha1.HopsAnnotation: "7"}, wantNext: 8},
		"hop 8 makes hop 9, over":          {ann: map[string]string{sessionsv1alpha1.HopsAnnotation: "8"}, wantNext: 9, wantDeny: true},
		"the policy's limit":               {ann: map[string]string{sessionsv1alpha1.HopsAnnotation: "3"}, p: limit3, wantNext: 4, wantDeny: true},
		"a malformed count is over":        {ann: map[string]string{sessionsv1alpha1.HopsAnnotation: "-1"}, wantNext: DefaultMaxHops + 1, wantDeny: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next := NextHops(tc.ann)
			if next != tc.wantNext {
				t.Errorf("NextHops = %d, want %d", next, tc.wantNext)
			}
			deny := CheckHops(next, tc.p)
			if (deny != "") != tc.wantDeny || tc.wantDeny && !strings.Contains(deny, "spec.limits.maxHops") {
				t.Errorf("CheckHops(%d) = %q, want denial %v", next, deny, tc.wantDeny)
			}
		})
	}
	if _, err := HopsOf(map[string]string{sessionsv1alpha1.HopsAnnotation: "x"}); err == nil {
		t.Error("HopsOf accepted a non-number")
	}
	if got := ToolCreatesPerMinute(&sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{ToolCreatesPerMinute: ptr.To[int32](7)}}, 60); got != 7 {
		t.Errorf("the policy's rate wins: %d", got)
	}
	if got := ToolCreatesPerMinute(nil, 60); got != 60 {
		t.Errorf("the operator's default applies: %d", got)
	}
}
