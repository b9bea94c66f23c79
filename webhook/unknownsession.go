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
	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// unknownSession is policy.UnknownSession with the Agent key names read.
func unknownSession(ctx context.Context, r client.Reader, path *field.Path, ns, ref, key string) (*field.Error, error) {
	var a *sessionsv1alpha1.Agent
	if id := sessionkey.AgentOf(key); id != "" {
		var err error
		if a, err = getAgent(ctx, r, nil, ns, id); err != nil {
			return nil, err
		}
	}
	return policy.UnknownSession(path, ns, ref, key, a != nil), nil
}
