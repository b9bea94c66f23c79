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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// refusal answers field errors by their cause (policy.FieldRefusal): a 403 listing only a
// policy's reasons, else a 422 that names the fields to fix.
func refusal(resource, kind, name string, errs field.ErrorList) error {
	if r := policy.FieldRefusal(errs); r != nil {
		return answer(resource, kind, name, r)
	}
	return invalid(kind, name)
}

// answer is the API server's answer to what admission's judge refused: a 422 that names the
// fields (r.Invalid), else a 403 carrying the policy's reason.
func answer(resource, kind, name string, r *policy.Refusal) error {
	if len(r.Invalid) > 0 {
		return invalid(kind, name, r.Invalid...)
	}
	return forbidden(resource, name, r.Forbidden)
}
