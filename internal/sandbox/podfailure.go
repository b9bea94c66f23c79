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
	"fmt"

	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// imagePullReasons are the kubelet's waiting reasons of a container whose image will not
// come without a change to the image or its registry.
var imagePullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
}

// PodsVerdict judges an Agent's sandbox Pods (warm pool and claimed), read at one moment:
// Reason and Message say why its sandboxes cannot start (the image of the current template
// cannot be pulled), and Pending that a Pod is still starting, so the Agent is looked at
// again (the manager keeps no informer on Pods).
type PodsVerdict struct {
	Reason, Message string
	Pending         bool
}

// JudgePods judges pods, whose sandbox container should run image: a Pod of an older
// template (another image) is on its way out and says nothing.
func JudgePods(pods []corev1.Pod, image string) PodsVerdict {
	var v PodsVerdict
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if !podReady(p) {
			v.Pending = true
		}
		if v.Reason != "" {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			w := cs.State.Waiting
			if cs.Name != ContainerName || w == nil || !imagePullReasons[w.Reason] || specImage(p) != image {
				continue
			}
			v.Reason = sessionsv1alpha1.ReasonSandboxImagePullFailed
			v.Message = fmt.Sprintf("sandbox Pod %s cannot pull image %s: %s: %s", p.Name, image, w.Reason, w.Message)
		}
	}
	return v
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func specImage(p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if c.Name == ContainerName {
			return c.Image
		}
	}
	return ""
}
