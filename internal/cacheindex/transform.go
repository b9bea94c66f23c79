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
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// CacheOptions keep the manager's cache small: managed fields go from every object, finished
// SessionSends are not cached at all (UnfinishedSends), a finished SubagentRun keeps only
// what identifies it and says how it finished (TrimFinishedRun), and repeated strings are
// shared (Intern). A finished object read from the cache is therefore
// partial: nothing in the manager reads more of one (the reconcilers stop at completedAt;
// the send tool and kubectl read through the API server), and with thousands of them cached
// the messages, replies, attachments and conditions would dominate its memory.
func CacheOptions() cache.Options {
	strip := cache.TransformStripManagedFields()
	return cache.Options{
		DefaultTransform: strip,
		ByObject: map[client.Object]cache.ByObject{
			&sessionsv1alpha1.AgentSession{}: {Transform: chain(strip, Intern)},
			&sessionsv1alpha1.SessionSend{}:  {Field: UnfinishedSends(), Transform: chain(strip, TrimFinishedSend, Intern)},
			&sessionsv1alpha1.SubagentRun{}:  {Transform: chain(strip, TrimFinishedRun, Intern)},
		},
	}
}

// ReaderCacheOptions are the transcript-store's: it caches AgentSessions only, trimmed to
// what it serves (TrimReaderSession), repeated strings shared; a shard's store, only its
// own namespaces' (shard.Label), as the manager's.
// Sends and runs are read from the API server by selectable fields and followed by a watch
// that keeps nothing (events.Hub.Watch); ReaderFailOnMissingInformer keeps a stray read of
// another kind from starting an informer that would cache it whole.
func ReaderCacheOptions(s shard.Shard) cache.Options {
	strip := cache.TransformStripManagedFields()
	return cache.Options{
		DefaultTransform:            strip,
		ReaderFailOnMissingInformer: true,
		ByObject: map[client.Object]cache.ByObject{
			&sessionsv1alpha1.AgentSession{}: {Label: s.Selector(), Transform: chain(strip, TrimReaderSession, Intern)},
		},
	}
}

// TrimReaderSession leaves out of a session what the transcript-store never serves:
// annotations (kubectl's last-applied-configuration alone is a copy of the whole spec),
// labels, finalizers, owner references and conditions. sessions_list's rows, visibility
// (spec.spawnedBy), the console and /events' summaries read the rest.
func TrimReaderSession(obj any) (any, error) {
	if s, ok := obj.(*sessionsv1alpha1.AgentSession); ok {
		s.Annotations, s.Labels, s.Finalizers, s.OwnerReferences = nil, nil, nil, nil
		s.Status.Conditions = nil
	}
	return obj, nil
}

// SendPhaseField is the SessionSend CRD's selectable field status.phase.
const SendPhaseField = "status.phase"

// UnfinishedSends selects the SessionSends not yet Completed, Failed or Cancelled: the only
// ones the manager reads from its cache. A send that finishes leaves the cache (its informer
// sees a delete); its TTL runs from the send controller's own schedule. At 100,000 finished
// sends this is most of the manager's memory.
func UnfinishedSends() fields.Selector {
	return fields.AndSelectors(
		fields.OneTermNotEqualSelector(SendPhaseField, string(sessionsv1alpha1.SendCompleted)),
		fields.OneTermNotEqualSelector(SendPhaseField, string(sessionsv1alpha1.SendFailed)),
		fields.OneTermNotEqualSelector(SendPhaseField, string(sessionsv1alpha1.SendCancelled)))
}

func chain(fs ...toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		var err error
		for _, f := range fs {
			if obj, err = f(obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
}

// TrimFinishedSend drops the payload of a Completed, Failed or Cancelled SessionSend: its
// message, replies, turns, announce text, conditions, run id, usage and start. Phase,
// status, target and completion stay.
func TrimFinishedSend(obj any) (any, error) {
	s, ok := obj.(*sessionsv1alpha1.SessionSend)
	if !ok || (s.Status.Phase != sessionsv1alpha1.SendCompleted && s.Status.Phase != sessionsv1alpha1.SendFailed && s.Status.Phase != sessionsv1alpha1.SendCancelled) {
		return obj, nil
	}
	s.Spec.Message = ""
	// The target stays readable without the run id (TargetKey reads it): the key itself
	// shares spec.sessionKey's string, so it costs no memory.
	s.Status.TargetSessionKey = s.TargetKey()
	s.Status.Reply, s.Status.Error, s.Status.Turns, s.Status.Conditions = "", "", nil, nil
	s.Status.RunID, s.Status.Usage, s.Status.StartedAt = "", nil, nil
	if s.Status.Announce != nil {
		s.Status.Announce = &sessionsv1alpha1.Announce{Status: s.Status.Announce.Status}
	}
	s.Annotations = nil
	return s, nil
}

// TrimFinishedRun keeps of a finished SubagentRun (status.completedAt set) what the
// controllers and the webhook read: its identity, phase, conditions, child and times.
// The task, the attachments, the result and the announce text are dropped; read the object
// from the API server for them.
func TrimFinishedRun(obj any) (any, error) {
	r, ok := obj.(*sessionsv1alpha1.SubagentRun)
	if !ok || r.Status.CompletedAt == nil {
		return obj, nil
	}
	r.Spec.Task, r.Spec.Attachments = "", nil
	r.Status.Result, r.Status.Notes, r.Status.Stats, r.Status.Attachments = "", "", nil, nil
	if r.Status.Announce != nil {
		// The thread binding stays: the announces of sends into the child reuse it.
		r.Status.Announce = &sessionsv1alpha1.Announce{Status: r.Status.Announce.Status, Thread: r.Status.Announce.Thread}
	}
	return r, nil
}
