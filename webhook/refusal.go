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
)

// refusal answers field errors by their cause: a 403 when a policy refuses (the errors of
// type Forbidden: allowAgents, spawn depth, children, sandbox), so that a caller knows
// other arguments will not help; else a 422 that names the fields to fix (a model not
// allowed, mode session without thread, a bad attachment). The 403 lists only the policy's
// reasons, each with its field path.
func refusal(resource, kind, name string, errs field.ErrorList) error {
	denied := errs.Filter(func(e error) bool {
		fe, ok := e.(*field.Error)
		return !ok || fe.Type != field.ErrorTypeForbidden
	})
	if len(denied) > 0 {
		return forbidden(resource, name, denied.ToAggregate().Error())
	}
	return invalid(kind, name, errs...)
}
