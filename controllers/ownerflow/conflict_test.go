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
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRequeueConflicts(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "sessions.agents.dev", Resource: "agentsessions"}, "main-main",
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	boom := errors.New("boom")
	cases := map[string]struct {
		res     ctrl.Result
		err     error
		want    ctrl.Result
		wantErr error
	}{
		"a conflict is a requeue, not an error": {err: conflict, want: ctrl.Result{RequeueAfter: conflictRequeue}},
		"a wrapped conflict too":                {err: fmt.Errorf("step roundOne: %w", conflict), want: ctrl.Result{RequeueAfter: conflictRequeue}},
		"another error stays an error":          {err: boom, wantErr: boom},
		"a result passes through":               {res: ctrl.Result{RequeueAfter: 7}, want: ctrl.Result{RequeueAfter: 7}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := RequeueConflicts(reconcile.Func(func(context.Context, ctrl.Request) (ctrl.Result, error) { return c.res, c.err }))
			got, err := r.Reconcile(context.Background(), ctrl.Request{})
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Errorf("error = %v, want %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
