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

package sandbox

import (
	"maps"

	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// KeepTemplate makes have, the Agent's SandboxTemplate as the API server has it, say what
// want (Template) says in the fields the Agent owns: its spec and our labels. Labels others
// put on it stay: agent-sandbox's template controller labels every template with its ref
// hash, and taking that label away on each Agent reconcile made the two controllers undo
// each other at the client's rate limit (each of those writes also woke the warm pool's
// reconcile). Applied again to its own result it changes nothing, so CreateOrUpdate writes
// only when the Agent changed.
func KeepTemplate(have, want *sandboxextv1beta1.SandboxTemplate) {
	have.Labels = withLabels(have.Labels, want.Labels)
	have.Spec = want.Spec
}

// KeepWarmPool is KeepTemplate for the Agent's SandboxWarmPool (WarmPool): its spec and
// our labels; agent-sandbox writes only the pool's status, which this leaves alone.
func KeepWarmPool(have, want *sandboxextv1beta1.SandboxWarmPool) {
	have.Labels = withLabels(have.Labels, want.Labels)
	have.Spec = want.Spec
}

// withLabels is labels with ours set over it; the others stay.
func withLabels(labels, ours map[string]string) map[string]string {
	if labels == nil && len(ours) > 0 {
		labels = make(map[string]string, len(ours))
	}
	maps.Copy(labels, ours)
	return labels
}
