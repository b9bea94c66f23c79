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

package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// What a caller over MCP gets when the API server refuses what a tool creates: status
// error for arguments it refuses (422), forbidden for a policy or RBAC refusal (403), and
// either way a result flagged isError.
func TestRefusedCreatesAreErrorResults(t *testing.T) {
	runs := sessionsv1alpha1.GroupVersion.WithResource("subagentruns").GroupResource()
	spec := field.NewPath("spec")
	crossed := policy.JudgeCarried(&policy.CarriedChain{ID: "x", Hops: 9, Sends: 9}, nil, time.Now())
	cases := map[string]struct {
		refuse     error
		wantStatus string
		// wantLimit is the chain limit the result's _meta marks refused ("" for none).
		wantLimit string
	}{
		"a chain that crossed the wire, marked for the caller": {refuse: apierrors.NewForbidden(runs, "r",
			errors.New(`admission webhook "vsubagentrun.kb.io" denied the request: `+crossed.Message)), wantStatus: "forbidden", wantLimit: policy.LimitMaxHops},
		"a model not allowed": {refuse: apierrors.NewInvalid(sessionsv1alpha1.GroupVersion.WithKind("SubagentRun").GroupKind(), "r",
			field.ErrorList{field.NotSupported(spec.Child("model"), "big", []string{"small"})}), wantStatus: "error"},
		"mode session without thread": {refuse: apierrors.NewInvalid(sessionsv1alpha1.GroupVersion.WithKind("SubagentRun").GroupKind(), "r",
			field.ErrorList{field.Invalid(spec.Child("mode"), "session", "mode session requires thread: true")}), wantStatus: "error"},
		"a policy denial": {refuse: apierrors.NewForbidden(runs, "r", errors.New("agent main may not spawn under agent ops")), wantStatus: "forbidden"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, fc := mcpservertest.Options()
			refusing := interceptor.NewClient(fc, interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return tc.refuse
			}})
			o.ClientFor = func(user.Info) (client.WithWatch, error) { return refusing, nil }
			srv := httptest.NewServer(mcpserver.Handler(o))
			t.Cleanup(srv.Close)
			cs, err := connect(t, srv.URL+"/mcp?namespace="+ns)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sessions_spawn",
				Arguments: map[string]any{"task": "look it up", "agentId": "main", "model": "big"}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			var got struct{ Status, Error string }
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("result %s: %v", text, err)
			}
			if diff := cmp.Diff(tc.wantStatus, got.Status); diff != "" {
				t.Errorf("status of %s (-want +got):\n%s", text, diff)
			}
			if got.Error != tc.refuse.Error() {
				t.Errorf("error %q, want the API server's message %q", got.Error, tc.refuse.Error())
			}
			if !res.IsError {
				t.Errorf("result %s is not flagged isError", text)
			}
			if got := policy.RefusedLimit(res.Meta[policy.ChainMetaKey]); got != tc.wantLimit {
				t.Errorf("the result's _meta marks %q refused, want %q (meta %v)", got, tc.wantLimit, res.Meta)
			}
		})
	}
}
