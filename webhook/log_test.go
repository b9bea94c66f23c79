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

package webhook

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// An admission's logger carries the request's names only when the decisions are logged:
// building them costs every request, logged or not.
func TestRequestLogAddsTheRequestOnlyWhenDecisionsAreLogged(t *testing.T) {
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "req-1", Namespace: "ns", Name: "s"}}
	for name, tc := range map[string]struct {
		verbosity int
		want      bool
	}{
		"decisions off (V(2) disabled)": {verbosity: 0, want: false},
		"decisions on":                  {verbosity: 2, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			var lines []string
			base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: tc.verbosity})
			RequestLog(base, req).Info("line")
			if got := strings.Contains(strings.Join(lines, "\n"), "req-1"); got != tc.want {
				t.Errorf("request id in the line = %v, want %v: %q", got, tc.want, lines)
			}
		})
	}
	off := funcr.New(func(string, string) {}, funcr.Options{})
	if allocs := testing.AllocsPerRun(50, func() { _ = RequestLog(off, req) }); allocs != 0 {
		t.Errorf("a request's logger with V(2) off allocates %.0f times, want 0", allocs)
	}
	if got := RequestLog(logr.Discard(), nil); got != logr.Discard() {
		t.Errorf("no request: the base logger, got %v", got)
	}
}
