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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestTTLLeft(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(epoch.Add(d)); return &m }
	now := epoch.Add(time.Minute)
	cases := map[string]struct {
		spec      *int32
		def       time.Duration
		finished  *metav1.Time
		notBefore *metav1.Time
		wantLeft  time.Duration
		wantKeep  bool
	}{
		"spec wins over the default":             {spec: ptr.To[int32](120), def: time.Hour, finished: at(0), wantLeft: time.Minute},
		"the default applies when spec is unset": {def: 2 * time.Minute, finished: at(0), wantLeft: time.Minute},
		"no default keeps it":                    {finished: at(0), wantKeep: true},
		"spec 0 deletes at once":                 {spec: ptr.To[int32](0), finished: at(0)},
		"not before the child's archive":         {spec: ptr.To[int32](0), finished: at(0), notBefore: at(time.Hour), wantLeft: 59 * time.Minute},
		"not finished":                           {spec: ptr.To[int32](0), wantKeep: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			left, keep := TTLLeft(tc.spec, tc.def, tc.finished, tc.notBefore, now)
			if left != tc.wantLeft || keep != tc.wantKeep {
				t.Errorf("ttlLeft = %s, %v; want %s, %v", left, keep, tc.wantLeft, tc.wantKeep)
			}
		})
	}
}
