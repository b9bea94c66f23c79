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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func agent(mut func(*sessionsv1alpha1.SandboxSpec)) *sessionsv1alpha1.Agent {
	a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder", Namespace: "team"}}
	a.Spec.Sandbox.Enabled = true
	if mut != nil {
		mut(&a.Spec.Sandbox)
	}
	return a
}

// The Pod a sandbox runs is hostile by default, whatever the Agent sets.
func TestTemplateIsHostileByDefault(t *testing.T) {
	tpl := Template(agent(func(s *sessionsv1alpha1.SandboxSpec) { s.Image = "example/tools:1" }), "default/sandbox:1", "")
	pod := tpl.Spec.PodTemplate.Spec
	c := pod.Containers[0]
	got := map[string]any{
		"automountServiceAccountToken": ptr.Deref(pod.AutomountServiceAccountToken, true),
		"enableServiceLinks":           ptr.Deref(pod.EnableServiceLinks, true),
		"runAsNonRoot":                 ptr.Deref(pod.SecurityContext.RunAsNonRoot, false),
		"runAsUser":                    ptr.Deref(pod.SecurityContext.RunAsUser, 0),
		"seccomp":                      pod.SecurityContext.SeccompProfile.Type,
		"allowPrivilegeEscalation":     ptr.Deref(c.SecurityContext.AllowPrivilegeEscalation, true),
		"privileged":                   ptr.Deref(c.SecurityContext.Privileged, true),
		"drop":                         c.SecurityContext.Capabilities.Drop,
		"add":                          len(c.SecurityContext.Capabilities.Add),
		"image":                        c.Image,
		"runtimeClassName":             pod.RuntimeClassName,
		"envInjection":                 tpl.Spec.EnvVarsInjectionPolicy,
		"volumeInjection":              tpl.Spec.VolumeClaimTemplatesPolicy,
		"ingressRules":                 len(tpl.Spec.NetworkPolicy.Ingress),
		"egressRules":                  len(tpl.Spec.NetworkPolicy.Egress),
		"networkPolicyManagement":      tpl.Spec.NetworkPolicyManagement,
		"service":                      ptr.Deref(tpl.Spec.Service, true),
		"args":                         strings.Join(c.Args, " "),
	}
	want := map[string]any{
		"automountServiceAccountToken": false,
		"enableServiceLinks":           false,
		"runAsNonRoot":                 true,
		"runAsUser":                    int64(UID),
		"seccomp":                      corev1.SeccompProfileTypeRuntimeDefault,
		"allowPrivilegeEscalation":     false,
		"privileged":                   false,
		"drop":                         []corev1.Capability{"ALL"},
		"add":                          0,
		"image":                        "example/tools:1",
		"runtimeClassName":             (*string)(nil),
		"envInjection":                 sandboxextv1beta1.EnvVarsInjectionPolicyDisallowed,
		"volumeInjection":              sandboxextv1beta1.VolumeClaimTemplatesPolicyDisallowed,
		"ingressRules":                 0,
		"egressRules":                  1, // DNS only
		"networkPolicyManagement":      sandboxextv1beta1.NetworkPolicyManagementManaged,
		"service":                      false,
		"args":                         "--root-dir=/workspace --grpc-port=9090 --rest-port=8080",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
}

func TestTemplateRuntimeImageAndEgress(t *testing.T) {
	tpl := Template(agent(func(s *sessionsv1alpha1.SandboxSpec) {
		s.Egress = []sessionsv1alpha1.SandboxEgressRule{{CIDR: "203.0.113.7/32", Ports: []int32{443}}, {CIDR: "198.51.100.0/24"}}
	}), "default/sandbox:1", GVisor)
	pod := tpl.Spec.PodTemplate.Spec
	if got := ptr.Deref(pod.RuntimeClassName, ""); got != GVisor {
		t.Errorf("runtimeClassName = %q, want %q", got, GVisor)
	}
	if got := pod.Containers[0].Image; got != "default/sandbox:1" {
		t.Errorf("image = %q, want the manager's default", got)
	}
	eg := tpl.Spec.NetworkPolicy.Egress
	if len(eg) != 3 {
		t.Fatalf("egress rules = %d, want DNS + 2", len(eg))
	}
	if eg[1].To[0].IPBlock.CIDR != "203.0.113.7/32" || len(eg[1].Ports) != 1 || eg[1].Ports[0].Port.IntVal != 443 {
		t.Errorf("egress rule 1 = %+v", eg[1])
	}
	if eg[2].To[0].IPBlock.CIDR != "198.51.100.0/24" || len(eg[2].Ports) != 0 {
		t.Errorf("egress rule 2 = %+v", eg[2])
	}
	if tpl.Name != "coder-sandbox" || tpl.Namespace != "team" || tpl.Labels[AgentLabel] != "coder" {
		t.Errorf("template meta = %+v", tpl.ObjectMeta)
	}
}

func TestWarmPool(t *testing.T) {
	cases := map[string]struct {
		size *int32
		want int32
	}{"unset is none": {want: 0}, "three": {size: ptr.To[int32](3), want: 3}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := WarmPool(agent(func(s *sessionsv1alpha1.SandboxSpec) { s.WarmPool = tc.size }))
			if got := ptr.Deref(p.Spec.Replicas, -1); got != tc.want {
				t.Errorf("replicas = %d, want %d", got, tc.want)
			}
			if p.Spec.TemplateRef.Name != "coder-sandbox" {
				t.Errorf("templateRef = %q", p.Spec.TemplateRef.Name)
			}
		})
	}
}

func TestClaimName(t *testing.T) {
	short := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s-main"}}
	if got := ClaimName(short); got != "s-main" {
		t.Errorf("ClaimName = %q", got)
	}
	long1 := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 80) + "1"}}
	long2 := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 80) + "2"}}
	n1, n2 := ClaimName(long1), ClaimName(long2)
	if len(n1) != maxClaimName || n1 == n2 {
		t.Errorf("long names: %q (%d), %q: want %d bytes and distinct", n1, len(n1), n2, maxClaimName)
	}
}

func TestClaim(t *testing.T) {
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "team", UID: "u1"}}
	c := Claim(s, agent(nil))
	if c.Spec.WarmPoolRef.Name != "coder-sandbox" || c.Labels[SessionLabel] != "s1" || c.Labels[AgentLabel] != "coder" {
		t.Errorf("claim = %+v", c)
	}
	if ref := metav1.GetControllerOf(c); ref == nil || ref.UID != "u1" || ref.Kind != "AgentSession" {
		t.Errorf("controller = %+v, want the session", ref)
	}
	if len(c.Spec.Env) != 0 || len(c.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("a claim overrides nothing of the template: %+v", c.Spec)
	}
}

func TestRuntimeClass(t *testing.T) {
	cases := map[string]struct {
		named  *string
		gvisor bool
		want   string
	}{
		"gvisor when the cluster has it": {gvisor: true, want: GVisor},
		"default runtime otherwise":      {want: ""},
		"named wins":                     {named: ptr.To("kata"), gvisor: true, want: "kata"},
		"named empty is the default":     {named: ptr.To(""), gvisor: true, want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RuntimeClass(agent(func(s *sessionsv1alpha1.SandboxSpec) { s.RuntimeClassName = tc.named }), tc.gvisor); got != tc.want {
				t.Errorf("RuntimeClass = %q, want %q", got, tc.want)
			}
		})
	}
}

func cond(typ sandboxv1beta1.ConditionType, st metav1.ConditionStatus, reason string) []metav1.Condition {
	return []metav1.Condition{{Type: string(typ), Status: st, Reason: reason, Message: "m"}}
}

func TestPhase(t *testing.T) {
	ready := sandboxv1beta1.SandboxConditionReady
	cases := map[string]struct {
		claim sandboxextv1beta1.SandboxClaimStatus
		sb    *sandboxv1beta1.Sandbox
		want  sessionsv1alpha1.SandboxPhase
	}{
		"new claim":           {want: sessionsv1alpha1.SandboxClaimed},
		"creating":            {claim: sandboxextv1beta1.SandboxClaimStatus{Conditions: cond(ready, metav1.ConditionFalse, "SandboxCreatePending")}, want: sessionsv1alpha1.SandboxClaimed},
		"no warm pool":        {claim: sandboxextv1beta1.SandboxClaimStatus{Conditions: cond(ready, metav1.ConditionFalse, "WarmPoolNotFound")}, want: sessionsv1alpha1.SandboxFailed},
		"sandbox starting":    {sb: &sandboxv1beta1.Sandbox{Status: sandboxv1beta1.SandboxStatus{Conditions: cond(ready, metav1.ConditionFalse, sandboxv1beta1.SandboxReasonDependenciesNotReady)}}, want: sessionsv1alpha1.SandboxClaimed},
		"sandbox ready":       {sb: &sandboxv1beta1.Sandbox{Status: sandboxv1beta1.SandboxStatus{Conditions: cond(ready, metav1.ConditionTrue, sandboxv1beta1.SandboxReasonDependenciesReady)}}, want: sessionsv1alpha1.SandboxReady},
		"claim ready, no sb":  {claim: sandboxextv1beta1.SandboxClaimStatus{Conditions: cond(ready, metav1.ConditionTrue, "x")}, want: sessionsv1alpha1.SandboxClaimed},
		"suspended":           {sb: &sandboxv1beta1.Sandbox{Spec: sandboxv1beta1.SandboxSpec{OperatingMode: sandboxv1beta1.SandboxOperatingModeSuspended}}, want: sessionsv1alpha1.SandboxSuspended},
		"pod failed":          {sb: &sandboxv1beta1.Sandbox{Status: sandboxv1beta1.SandboxStatus{Conditions: cond(sandboxv1beta1.SandboxConditionFinished, metav1.ConditionTrue, sandboxv1beta1.SandboxReasonPodFailed)}}, want: sessionsv1alpha1.SandboxFailed},
		"expired":             {sb: &sandboxv1beta1.Sandbox{Status: sandboxv1beta1.SandboxStatus{Conditions: cond(ready, metav1.ConditionFalse, sandboxv1beta1.SandboxReasonExpired)}}, want: sessionsv1alpha1.SandboxFailed},
		"transient reconcile": {sb: &sandboxv1beta1.Sandbox{Status: sandboxv1beta1.SandboxStatus{Conditions: cond(ready, metav1.ConditionFalse, "ReconcilerError")}}, want: sessionsv1alpha1.SandboxClaimed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, msg := Phase(&sandboxextv1beta1.SandboxClaim{Status: tc.claim}, tc.sb)
			if got != tc.want {
				t.Errorf("Phase = %s (%q), want %s", got, msg, tc.want)
			}
			if (got == sessionsv1alpha1.SandboxFailed) != (msg != "") {
				t.Errorf("message %q: want one exactly when Failed", msg)
			}
		})
	}
}

func TestIdleDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		now  time.Time
		due  bool
		left time.Duration
	}{
		"fresh":   {now: t0.Add(10 * time.Second), left: 290 * time.Second},
		"at edge": {now: t0.Add(300 * time.Second), due: true},
		"past":    {now: t0.Add(time.Hour), due: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			due, left := IdleDue(t0, tc.now, 300)
			if due != tc.due || left != tc.left {
				t.Errorf("IdleDue = %v, %v; want %v, %v", due, left, tc.due, tc.left)
			}
		})
	}
	if got := IdleSeconds(agent(nil)); got != 300 {
		t.Errorf("IdleSeconds default = %d, want 300", got)
	}
}
