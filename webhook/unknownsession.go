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
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// unknownSession says why ref (resolved to key) names no session, so that a person can fix
// it: a key outside the grammar (and no sessionId either), the main session of an Agent
// that does not exist, or a well-formed key no session has.
func unknownSession(ctx context.Context, r client.Reader, path *field.Path, ns, ref, key string) (*field.Error, error) {
	if _, err := sessionkey.Parse(key); err != nil {
		why := err.Error()
		if ke := (*sessionkey.Error)(nil); errors.As(err, &ke) {
			why = ke.Reason
		}
		return field.Invalid(path, ref, fmt.Sprintf("not a valid session key (%s) and no session in namespace %s has it as sessionId", why, ns)), nil
	}
	if id := sessionkey.AgentOf(key); id != "" {
		a, err := getAgent(ctx, r, nil, ns, id)
		if err != nil {
			return nil, err
		}
		if a == nil {
			e := field.NotFound(path, ref)
			e.Detail = fmt.Sprintf("Agent %s does not exist in namespace %s; create the Agent first", id, ns)
			return e, nil
		}
	}
	e := field.NotFound(path, ref)
	e.Detail = fmt.Sprintf("no AgentSession in namespace %s has this key or sessionId", ns)
	return e, nil
}
