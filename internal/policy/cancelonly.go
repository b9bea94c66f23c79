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

package policy

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// CancelOnlySend judges an update of a SessionSend's spec; see cancelOnly.
func CancelOnlySend(old, cur sessionsv1alpha1.SessionSendSpec) *field.Error {
	return cancelOnly(old, cur, func(s *sessionsv1alpha1.SessionSendSpec) *bool { return &s.Cancel }, "SessionSend")
}

// CancelOnlyRun judges an update of a SubagentRun's spec; see cancelOnly.
func CancelOnlyRun(old, cur sessionsv1alpha1.SubagentRunSpec) *field.Error {
	return cancelOnly(old, cur, func(s *sessionsv1alpha1.SubagentRunSpec) *bool { return &s.Cancel }, "SubagentRun")
}

// cancelOnly refuses every change of a send's or run's spec but setting spec.cancel (from
// false to true only): that is all the agent-sessions-edit role's patch may do to work
// already admitted. The CRD's CEL rules say the same field by field; comparing whole specs
// here also covers a field added later and forgotten there. nil allows the update.
func cancelOnly[S any](old, cur S, cancel func(*S) *bool, kind string) *field.Error {
	if *cancel(&old) && !*cancel(&cur) {
		return field.Forbidden(field.NewPath("spec", "cancel"), "spec.cancel cannot go back to false")
	}
	// old and cur are copies: clearing cancel on them changes nothing of the caller's.
	*cancel(&old), *cancel(&cur) = false, false
	if !equality.Semantic.DeepEqual(old, cur) {
		return field.Forbidden(field.NewPath("spec"), "spec is immutable but for cancel; create a new "+kind)
	}
	return nil
}
