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
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// cancelPatch sets spec.cancel, which SessionSends and SubagentRuns both have (false to
// true only, by CEL).
var cancelPatch, _ = json.Marshal(map[string]any{"spec": map[string]any{"cancel": true}})

// Cancel asks the controller to cancel a SessionSend or SubagentRun, as whoever c acts for:
// RBAC (patch) and the admission webhook judge it.
func Cancel(ctx context.Context, c client.Client, obj client.Object) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, cancelPatch))
}

// Cancellable is the object KIND/NAME names (sessionsend or subagentrun, with kubectl's
// plural and short names), to give Cancel.
func Cancellable(kind, name string) (client.Object, error) {
	if name == "" {
		return nil, fmt.Errorf("%s/%s: want sessionsend/NAME or subagentrun/NAME", kind, name)
	}
	var obj client.Object
	switch strings.ToLower(kind) {
	case "sessionsend", "sessionsends", "ssend", "send", "sessionsends.sessions.agents.dev":
		obj = &sessionsv1alpha1.SessionSend{}
	case "subagentrun", "subagentruns", "sar", "run", "subagentruns.sessions.agents.dev":
		obj = &sessionsv1alpha1.SubagentRun{}
	default:
		return nil, fmt.Errorf("%s/%s: only sessionsends and subagentruns can be cancelled", kind, name)
	}
	obj.SetName(name)
	return obj, nil
}
