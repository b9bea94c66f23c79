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

// Package sandbox is what a sandboxed Agent's sandbox is, in kubernetes-sigs/agent-sandbox's
// own types: the SandboxTemplate and SandboxWarmPool an Agent owns, the SandboxClaim a
// session makes, and the rules a tool call in it obeys. Everything here is a pure function of
// its inputs; the controllers create what it builds and agent-sandbox's controller runs it.
package sandbox

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

const (
	// AgentLabel names the Agent on its SandboxTemplate, SandboxWarmPool, claims and Pods.
	AgentLabel = "sessions.agents.dev/agent"
	// SessionLabel names the AgentSession (object name) on its SandboxClaim; the sweep
	// finds a claim's owner by it after a restart.
	SessionLabel = "sessions.agents.dev/session"

	// ContainerName is the sandbox Pod's one container: sandboxd and what it runs.
	ContainerName = "sandbox"
	// Workspace is where the session's files live, on the workspace volume; sandboxd's
	// --root-dir, so every path it takes is confined to it.
	Workspace = "/workspace"
	// GRPCPort and RESTPort are sandboxd's listeners, bound to the Pod's loopback only.
	GRPCPort = 9090
	RESTPort = 8080

	// UID and GID the sandbox runs as: not root, and not any user the image may define.
	UID = 65532

	// GVisor is the RuntimeClass a sandbox gets by default when the cluster has it.
	GVisor = "gvisor"

	defaultIdleSeconds = 300
	workspaceVolume    = "workspace"
)

// DefaultWorkspaceSize is the workspace volume's request when the Agent sets none.
var DefaultWorkspaceSize = resource.MustParse("1Gi")

// Name is the name of an Agent's SandboxTemplate and SandboxWarmPool (two kinds, one name).
func Name(agent *sessionsv1alpha1.Agent) string { return agent.Name + "-sandbox" }

// IdleSeconds is how long a session's sandbox may idle before it is suspended.
func IdleSeconds(agent *sessionsv1alpha1.Agent) int32 {
	if s := agent.Spec.Sandbox.IdleSeconds; s != nil && *s > 0 {
		return *s
	}
	return defaultIdleSeconds
}

// Template is the SandboxTemplate of a sandboxed Agent. image is what the sandbox runs when
// the Agent names none; runtimeClass is the resolved RuntimeClass ("" = the node's default).
// Hostile by default: no service account token, not root, no privilege escalation, no
// capabilities, seccomp RuntimeDefault, no service links, and a NetworkPolicy that lets
// nothing in and nothing out but DNS and the Agent's egress rules. The manager reaches
// sandboxd through the API server's port-forward, which enters the Pod's network namespace
// through the kubelet, so no ingress rule is needed for it.
func Template(agent *sessionsv1alpha1.Agent, image, runtimeClass string) *sandboxextv1beta1.SandboxTemplate {
	spec := agent.Spec.Sandbox
	if spec.Image != "" {
		image = spec.Image
	}
	labels := map[string]string{AgentLabel: agent.Name}
	pod := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		RestartPolicy:                corev1.RestartPolicyAlways,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](UID),
			RunAsGroup:     ptr.To[int64](UID),
			FSGroup:        ptr.To[int64](UID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:       ContainerName,
			Image:      image,
			Args:       []string{"--root-dir=" + Workspace, fmt.Sprintf("--grpc-port=%d", GRPCPort), fmt.Sprintf("--rest-port=%d", RESTPort)},
			WorkingDir: Workspace,
			Env:        []corev1.EnvVar{{Name: "HOME", Value: Workspace}},
			Resources:  corev1.ResourceRequirements{Requests: spec.Resources.Requests, Limits: spec.Resources.Limits},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Privileged:               ptr.To(false),
				RunAsNonRoot:             ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: workspaceVolume, MountPath: Workspace}},
		}},
	}
	if runtimeClass != "" {
		pod.RuntimeClassName = ptr.To(runtimeClass)
	}
	return &sandboxextv1beta1.SandboxTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: Name(agent), Namespace: agent.Namespace, Labels: labels},
		Spec: sandboxextv1beta1.SandboxTemplateSpec{
			SandboxBlueprint: sandboxv1beta1.SandboxBlueprint{
				PodTemplate: sandboxv1beta1.PodTemplate{ObjectMeta: sandboxv1beta1.PodMetadata{Labels: labels}, Spec: pod},
				// The workspace outlives the Pod: a suspended sandbox keeps its files.
				VolumeClaimTemplates: []sandboxv1beta1.PersistentVolumeClaimTemplate{{
					EmbeddedObjectMetadata: sandboxv1beta1.EmbeddedObjectMetadata{Name: workspaceVolume},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: DefaultWorkspaceSize}},
					},
				}},
				Service: ptr.To(false),
			},
			NetworkPolicyManagement: sandboxextv1beta1.NetworkPolicyManagementManaged,
			NetworkPolicy:           networkPolicy(spec.Egress),
			// A claim cannot change what the Agent's owner decided.
			EnvVarsInjectionPolicy:     sandboxextv1beta1.EnvVarsInjectionPolicyDisallowed,
			VolumeClaimTemplatesPolicy: sandboxextv1beta1.VolumeClaimTemplatesPolicyDisallowed,
		},
	}
}

// networkPolicy: no ingress at all; egress to the cluster DNS and to each allowed network.
func networkPolicy(egress []sessionsv1alpha1.SandboxEgressRule) *sandboxextv1beta1.NetworkPolicySpec {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dns := intstr.FromInt32(53)
	rules := []networkingv1.NetworkPolicyEgressRule{{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}},
	}}
	for _, e := range egress {
		r := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: e.CIDR}}}}
		for _, p := range e.Ports {
			port := intstr.FromInt32(p)
			r.Ports = append(r.Ports, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &port})
		}
		rules = append(rules, r)
	}
	return &sandboxextv1beta1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{}, Egress: rules}
}

// WarmPool is the Agent's SandboxWarmPool: every claim names one, and spec.sandbox.warmPool
// sandboxes (default none) wait in it ready.
func WarmPool(agent *sessionsv1alpha1.Agent) *sandboxextv1beta1.SandboxWarmPool {
	return &sandboxextv1beta1.SandboxWarmPool{
		ObjectMeta: metav1.ObjectMeta{Name: Name(agent), Namespace: agent.Namespace, Labels: map[string]string{AgentLabel: agent.Name}},
		Spec: sandboxextv1beta1.SandboxWarmPoolSpec{
			Replicas:    ptr.To(ptr.Deref(agent.Spec.Sandbox.WarmPool, 0)),
			TemplateRef: sandboxextv1beta1.SandboxTemplateRef{Name: Name(agent)},
			// A changed template replaces the waiting sandboxes at once, so a claim never gets a
			// sandbox the Agent no longer describes (a looser image, another runtime).
			UpdateStrategy: &sandboxextv1beta1.SandboxWarmPoolUpdateStrategy{Type: sandboxextv1beta1.RecreateSandboxWarmPoolUpdateStrategyType},
		},
	}
}
