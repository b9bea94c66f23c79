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
	"crypto/sha256"
	"encoding/hex"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// maxClaimName keeps a claim's name, which a cold-started Sandbox and its Pod take too, a
// valid hostname label.
const maxClaimName = 63

// ClaimName is the name of a session's SandboxClaim: the session's object name, shortened
// with a hash of it when too long. One session, one claim: a second claim by a restarted
// manager finds the first (AlreadyExists) instead of leaking a sandbox.
func ClaimName(session *sessionsv1alpha1.AgentSession) string {
	name := session.Name
	if len(name) <= maxClaimName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:10]
	return name[:maxClaimName-len(h)-1] + "-" + h
}

// Claim is the SandboxClaim a session makes on its Agent's warm pool (a warm sandbox when one
// waits, else a new one from the template). The session controls it, so deleting the
// session deletes the claim and the claim its Sandbox.
func Claim(session *sessionsv1alpha1.AgentSession, agent *sessionsv1alpha1.Agent) *sandboxextv1beta1.SandboxClaim {
	return &sandboxextv1beta1.SandboxClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: ClaimName(session), Namespace: session.Namespace,
			Labels: map[string]string{AgentLabel: agent.Name, SessionLabel: session.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(session,
				sessionsv1alpha1.GroupVersion.WithKind("AgentSession"))},
		},
		Spec: sandboxextv1beta1.SandboxClaimSpec{WarmPoolRef: sandboxextv1beta1.SandboxWarmPoolRef{Name: Name(agent)}},
	}
}

// RuntimeClass resolves the RuntimeClass an Agent's sandboxes run with: the one the Agent
// names, else gvisor when the cluster has it, else "" (the node's default runtime).
func RuntimeClass(agent *sessionsv1alpha1.Agent, gvisorExists bool) string {
	if rc := agent.Spec.Sandbox.RuntimeClassName; rc != nil {
		return *rc
	}
	if gvisorExists {
		return GVisor
	}
	return ""
}

// failedReasons are the Ready=False reasons of a claim or Sandbox that waiting will not
// mend; every other reason (SandboxCreatePending, SandboxNotReady, DependenciesNotReady, a
// transient ReconcilerError) means the sandbox is still on its way.
var failedReasons = map[string]bool{
	"TemplateNotFound": true, "WarmPoolNotFound": true, "InvalidMetadata": true, "EnvVarsInjectionRejected": true,
	"VolumeClaimTemplatesError": true, sandboxextv1beta1.ClaimExpiredReason: true,
	sandboxv1beta1.SandboxReasonExpired: true, sandboxv1beta1.SandboxReasonMultiplePods: true,
}

// Phase says where a claimed sandbox is, from the claim and its Sandbox (nil while the
// claim is not bound), with a message when it failed.
func Phase(claim *sandboxextv1beta1.SandboxClaim, sb *sandboxv1beta1.Sandbox) (sessionsv1alpha1.SandboxPhase, string) {
	conds := claim.Status.Conditions
	if sb != nil {
		if sb.Spec.OperatingMode == sandboxv1beta1.SandboxOperatingModeSuspended {
			return sessionsv1alpha1.SandboxSuspended, ""
		}
		if f := meta.FindStatusCondition(sb.Status.Conditions, string(sandboxv1beta1.SandboxConditionFinished)); f != nil && f.Status == metav1.ConditionTrue {
			return sessionsv1alpha1.SandboxFailed, f.Reason + ": " + f.Message
		}
		conds = sb.Status.Conditions
	}
	ready := meta.FindStatusCondition(conds, string(sandboxv1beta1.SandboxConditionReady))
	switch {
	case ready == nil:
		return sessionsv1alpha1.SandboxClaimed, ""
	case ready.Status == metav1.ConditionTrue && sb != nil:
		return sessionsv1alpha1.SandboxReady, ""
	case ready.Status == metav1.ConditionFalse && failedReasons[ready.Reason]:
		return sessionsv1alpha1.SandboxFailed, ready.Reason + ": " + ready.Message
	}
	return sessionsv1alpha1.SandboxClaimed, ""
}

// IdleDue says whether a sandbox last used at lastUsed is due to be suspended at now, and
// if not, how long until it is.
func IdleDue(lastUsed, now time.Time, idleSeconds int32) (bool, time.Duration) {
	left := lastUsed.Add(time.Duration(idleSeconds) * time.Second).Sub(now)
	if left <= 0 {
		return true, 0
	}
	return false, left
}
