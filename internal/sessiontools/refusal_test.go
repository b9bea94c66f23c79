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

package sessiontools

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRefusal(t *testing.T) {
	runs := schema.GroupResource{Group: "sessions.agents.dev", Resource: "subagentruns"}
	kind := schema.GroupKind{Group: "sessions.agents.dev", Kind: "SubagentRun"}
	cases := map[string]struct {
		err  error
		want string // "" = no refusal: the call fails
	}{
		"RBAC or a policy (403)": {err: apierrors.NewForbidden(runs, "r", errors.New("send denied")), want: StatusForbidden},
		"a model not allowed (422)": {err: apierrors.NewInvalid(kind, "r", field.ErrorList{
			field.NotSupported(field.NewPath("spec", "model"), "big", []string{"small"})}), want: StatusError},
		"mode session without thread (422)": {err: apierrors.NewInvalid(kind, "r", field.ErrorList{
			field.Invalid(field.NewPath("spec", "mode"), "session", "mode session requires thread: true")}), want: StatusError},
		"a malformed object (400)": {err: apierrors.NewBadRequest("bad"), want: StatusError},
		"too large (413)":          {err: apierrors.NewRequestEntityTooLargeError("limit"), want: StatusError},
		"the API server down":      {err: apierrors.NewServiceUnavailable("down")},
		"a timeout":                {err: context.DeadlineExceeded},
		"not found":                {err: apierrors.NewNotFound(runs, "r")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if r := Refusal(tc.err); r != nil {
				got = r.Status
				if r.Error != tc.err.Error() {
					t.Errorf("error = %q, want the API server's message %q", r.Error, tc.err.Error())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	cases := map[string]struct {
		out  any
		want bool
	}{
		"forbidden":          {out: &StatusResult{Status: StatusForbidden}, want: true},
		"bad arguments":      {out: &StatusResult{Status: StatusError}, want: true},
		"a failed run":       {out: StatusResult{Status: StatusError}, want: true},
		"ok":                 {out: StatusResult{Status: StatusOK}},
		"timeout":            {out: StatusResult{Status: StatusTimeout}},
		"accepted spawn":     {out: SpawnResult{Status: StatusAccepted}},
		"a nil result":       {out: (*StatusResult)(nil)},
		"another tool's map": {out: map[string]any{"status": "error"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Refused(tc.out); got != tc.want {
				t.Errorf("Refused(%#v) = %v, want %v", tc.out, got, tc.want)
			}
		})
	}
}

// A failed call's result: every refusal (visibility, a guard, RBAC, the access layer) is
// forbidden; anything else, the arguments included, is error.
func TestErrorResult(t *testing.T) {
	runs := schema.GroupResource{Group: "sessions.agents.dev", Resource: "agentsessions"}
	cases := map[string]struct {
		err  error
		want string
	}{
		"visibility":                {err: ForbiddenError{Why: "outside the tree"}, want: `{"status":"forbidden","error":"outside the tree"}`},
		"visibility, wrapped":       {err: fmt.Errorf("history: %w", ForbiddenError{Why: "no"}), want: `{"status":"forbidden","error":"history: no"}`},
		"the access layer or RBAC":  {err: apierrors.NewForbidden(runs, "s", errors.New("no")), want: `{"status":"forbidden","error":"agentsessions.sessions.agents.dev \"s\" is forbidden: no"}`},
		"an argument":               {err: errors.New("sessionKey is required"), want: `{"status":"error","error":"sessionKey is required"}`},
		"the API server is unready": {err: apierrors.NewServiceUnavailable("down"), want: `{"status":"error","error":"down"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ErrorResult(tc.err); got != tc.want {
				t.Errorf("ErrorResult = %s, want %s", got, tc.want)
			}
		})
	}
	if code := (ForbiddenError{}).Status().Code; code != 403 {
		t.Errorf("a ForbiddenError is HTTP %d to the doors, want 403", code)
	}
}
