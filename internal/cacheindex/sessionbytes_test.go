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
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	toolscache "k8s.io/client-go/tools/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// reconciledSessionJSON is a session as the scale bench leaves it: made by the bench,
// stamped with a shard's label, initialized by the manager (transcript, Ready; no finalizer).
func reconciledSessionJSON(i int) []byte {
	key := "agent:bench:webchat:group:s" + strconv.Itoa(i)
	uid := fmt.Sprintf("0f1e2d3c-4b5a-4978-8695-%012x", i)
	return fmt.Appendf(nil, `{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"AgentSession",
"metadata":{"name":%q,"namespace":"bench-scale","uid":%q,"resourceVersion":"%d","generation":1,
"creationTimestamp":"2026-11-27T18:00:00Z",
"labels":{"sessions.agents.dev/shard":"0"}},
"spec":{"key":%q,"agentId":"bench","channel":"webchat","chatType":"group","displayName":"group %d"},
"status":{"observedGeneration":1,"sessionId":%q,"kind":"group","channel":"webchat","phase":"Active",
"updatedAt":"2026-11-27T18:00:01Z","transcriptPath":"bench-scale/%s.jsonl",
"conditions":[{"type":"Ready","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-27T18:00:01Z","reason":"TranscriptReady","message":"the transcript exists"},
{"type":"Stalled","status":"False","observedGeneration":1,"lastTransitionTime":"2026-11-27T18:00:01Z","reason":"TranscriptReady","message":"the transcript exists"}]}}`,
		sessionkey.ObjectName(key), uid, 100000+i, key, i, uid, uid)
}

// BenchmarkCachedSessionBytes is the live heap one reconciled session costs in the manager's
// informer: decoded, transformed as CacheOptions says, stored under its key with the
// namespace index and the session indexes.
func BenchmarkCachedSessionBytes(b *testing.B) {
	const n = 20_000
	raw := make([][]byte, n)
	for i := range raw {
		raw[i] = reconciledSessionJSON(i)
	}
	dec := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer()
	var transform toolscache.TransformFunc
	for obj, by := range CacheOptions().ByObject {
		if _, ok := obj.(*sessionsv1alpha1.AgentSession); ok {
			transform = by.Transform
		}
	}
	indexers := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	for b.Loop() {
		store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, indexers)
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		for i := range n {
			decoded, _, err := dec.Decode(raw[i], nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			obj, err := transform(decoded)
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Add(obj); err != nil {
				b.Fatal(err)
			}
		}
		goruntime.GC()
		goruntime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/session")
		goruntime.KeepAlive(store)
	}
}
