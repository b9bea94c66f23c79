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

package cacheindex

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// maxInterned bounds the interner: the strings it keeps are the few values many objects
// repeat (a namespace, a phase, a condition's reason). Past the bound a string stays the
// decoder's copy, so a namespace user making unique values cannot grow it.
const maxInterned = 4096

// interner holds one copy of each repeated string, by value, and one map of each
// one-label set.
type interner struct {
	mu     sync.Mutex
	m      map[string]string
	labels map[[2]string]map[string]string
}

var strs = &interner{m: map[string]string{}, labels: map[[2]string]map[string]string{}}

func (i *interner) get(s string) string {
	if s == "" {
		return s
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if v, ok := i.m[s]; ok {
		return v
	}
	if len(i.m) < maxInterned {
		i.m[s] = s
	}
	return s
}

func in[S ~string](p *S) { *p = S(strs.get(string(*p))) }

// labelSet is the shared map of a one-label set (a shard's objects all carry
// shard.Label=<shard> alone): a map of one entry is about 300 bytes per object, so at
// 50,000 sessions a shard would hold 15 MB of identical maps. Cached objects are read, never
// written (the cache's reads deep-copy; its unsafe reads only look), so sharing is safe.
// Larger sets, and sets past the bound, stay the object's own.
func (i *interner) labelSet(m map[string]string) map[string]string {
	if len(m) != 1 {
		return m
	}
	var k [2]string
	for name, value := range m { // the one entry
		k = [2]string{name, value}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if shared, ok := i.labels[k]; ok {
		return shared
	}
	if len(i.labels) < maxLabelSets {
		i.labels[k] = m
	}
	return m
}

// maxLabelSets bounds the shared one-label sets as maxInterned bounds the strings.
const maxLabelSets = 1024

// Intern makes a cached AgentSession, SessionSend or SubagentRun share one copy of the
// strings objects repeat: the decoder allocates each string of each object anew, and at
// 100,000 sessions the namespace, agent, channel, phase and condition strings alone are
// tens of megabytes.
func Intern(obj any) (any, error) {
	switch o := obj.(type) {
	case *sessionsv1alpha1.AgentSession:
		internMeta(&o.ObjectMeta)
		shareTranscriptPath(o)
		if o.Status.SessionID == string(o.UID) { // the sessionId is the UID: one copy
			o.Status.SessionID = string(o.UID)
		}
		in(&o.Spec.AgentID)
		in(&o.Spec.Channel)
		in(&o.Spec.ChatType)
		in(&o.Spec.LastChannel)
		in(&o.Spec.Model)
		in(&o.Status.Kind)
		in(&o.Status.Channel)
		in(&o.Status.Phase)
		internConditions(o.Status.Conditions)
	case *sessionsv1alpha1.SessionSend:
		internMeta(&o.ObjectMeta)
		in(&o.Status.Phase)
		in(&o.Status.Status)
		if o.Status.TargetSessionKey == o.Spec.SessionKey {
			o.Status.TargetSessionKey = o.Spec.SessionKey
		}
		internConditions(o.Status.Conditions)
	case *sessionsv1alpha1.SubagentRun:
		internMeta(&o.ObjectMeta)
		in(&o.Spec.AgentID)
		in(&o.Status.Phase)
		in(&o.Status.Status)
		internConditions(o.Status.Conditions)
	}
	return obj, nil
}

func internMeta(m *metav1.ObjectMeta) {
	in(&m.Namespace)
	m.Labels = strs.labelSet(m.Labels)
	for i := range m.Finalizers {
		in(&m.Finalizers[i])
	}
	for i := range m.OwnerReferences {
		in(&m.OwnerReferences[i].APIVersion)
		in(&m.OwnerReferences[i].Kind)
	}
}

func internConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		in(&c.Type)
		in(&c.Status)
		in(&c.Reason)
		in(&c.Message)
	}
}

// transcriptSuffix ends a transcript's file name, <sessionId>.jsonl.
const transcriptSuffix = ".jsonl"

// shareTranscriptPath makes the sessionId (and the UID, which it usually is) the part of the
// transcript path that names the file: one copy of the three instead of three.
func shareTranscriptPath(s *sessionsv1alpha1.AgentSession) {
	p, id := s.Status.TranscriptPath, s.Status.SessionID
	end := len(p) - len(transcriptSuffix)
	start := end - len(id)
	if id == "" || start < 1 || p[start-1] != '/' || p[end:] != transcriptSuffix || p[start:end] != id {
		return
	}
	if string(s.UID) == id {
		s.UID = types.UID(p[start:end])
	}
	s.Status.SessionID = p[start:end]
}
