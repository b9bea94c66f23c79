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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJudgePods(t *testing.T) {
	pod := func(name, image string, mut func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: image}}}}
		p.Status.Phase = corev1.PodPending
		if mut != nil {
			mut(&p)
		}
		return p
	}
	waiting := func(reason, msg string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ContainerName,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
		}
	}
	ready := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	cases := map[string]struct {
		pods  []corev1.Pod
		image string // default img:1
		want  PodsVerdict
	}{
		"no Pods":       {},
		"all ready":     {pods: []corev1.Pod{pod("a", "img:1", ready)}},
		"still pulling": {pods: []corev1.Pod{pod("a", "img:1", waiting("ContainerCreating", ""))}, want: PodsVerdict{Pending: true}},
		"pull back-off": {
			pods: []corev1.Pod{pod("a", "img:1", ready), pod("b", "img:1", waiting("ImagePullBackOff", `Back-off pulling image "img:1"`))},
			want: PodsVerdict{Reason: "SandboxImagePullFailed", Pending: true,
				Message: `sandbox Pod b cannot pull image img:1: ImagePullBackOff: Back-off pulling image "img:1"`}},
		"err image pull": {
			pods: []corev1.Pod{pod("a", "img:1", waiting("ErrImagePull", "not found"))},
			want: PodsVerdict{Reason: "SandboxImagePullFailed", Pending: true, Message: "sandbox Pod a cannot pull image img:1: ErrImagePull: not found"}},
		"invalid name": {
			pods: []corev1.Pod{pod("a", "IMG", waiting("InvalidImageName", "bad"))}, image: "IMG",
			want: PodsVerdict{Reason: "SandboxImagePullFailed", Pending: true, Message: "sandbox Pod a cannot pull image IMG: InvalidImageName: bad"}},
		"an older template's Pod": {pods: []corev1.Pod{pod("a", "img:0", waiting("ImagePullBackOff", ""))}, want: PodsVerdict{Pending: true}},
		"a Pod going away": {pods: []corev1.Pod{pod("a", "img:1", func(p *corev1.Pod) {
			waiting("ImagePullBackOff", "")(p)
			p.DeletionTimestamp = &metav1.Time{}
		})}},
		"another container": {pods: []corev1.Pod{pod("a", "img:1", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sidecar",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
		})}, want: PodsVerdict{Pending: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			image := tc.image
			if image == "" {
				image = "img:1"
			}
			if diff := cmp.Diff(tc.want, JudgePods(tc.pods, image)); diff != "" {
				t.Errorf("JudgePods (-want +got):\n%s", diff)
			}
		})
	}
}
