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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

func init() {
	register("retention", benchRetention)
}

const retentionNS = "bench-retention"

// retentionSessions is how many archived sessions the retention suite retires: 2,000, or
// BENCH_RETENTION_SESSIONS.
func retentionSessions() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_RETENTION_SESSIONS")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// benchRetention times the SessionPolicy's retention alone: N sessions are created and
// archived under a policy that keeps them (a year, a million at most), then the policy's
// archivedSessionsSeconds drops to 0 and the clock runs until the API server holds none of
// them (each one's record written to the transcript store, its object deleted: sessions
// carry no finalizer). It counts the API server's requests in that window: the writes one
// retirement costs (the delete, any Event), reads and the bench's own polling beside them.
func benchRetention() ([]Figure, error) {
	ctx := context.Background()
	n := retentionSessions()
	_, cfg, cl, dyn, stop, err := clusterClientsWith(ctx, "bench-retention.log", scaleCluster(nil), 1000)
	if err != nil {
		return nil, err
	}
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: retentionNS}}); err != nil {
		return nil, err
	}
	pol := &sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: retentionNS},
		Spec: sessionsv1alpha1.SessionPolicySpec{Retention: &sessionsv1alpha1.RetentionSpec{
			ArchivedSessionsSeconds: ptr.To[int32](31536000), MaxArchivedSessions: ptr.To[int32](1000000)}}}
	if err := createRetrying(ctx, cl, pol); err != nil {
		return nil, err
	}
	archived, err := countWhere(ctx, dyn, sessionGVR, retentionNS, func(u *unstructured.Unstructured) bool {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return phase == string(sessionsv1alpha1.SessionArchived)
	})
	if err != nil {
		return nil, err
	}
	ready, err := countWhere(ctx, dyn, sessionGVR, retentionNS, statusSet("sessionId"))
	if err != nil {
		return nil, err
	}
	// Each session is created, initialized (a transcript: the retention retires only a
	// session with one), then archived by its controller as its archive-at annotation asks.
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "agent:bench:webchat:group:r" + strconv.Itoa(i)
	}
	if err := forEachParallel(ctx, keys, func(ctx context.Context, key string) error {
		return createRetrying(ctx, cl, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: retentionNS},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "bench", Channel: "webchat", ChatType: sessionsv1alpha1.ChatTypeGroup}})
	}); err != nil {
		return nil, err
	}
	if err := ready.wait(n, 10*time.Minute); err != nil {
		return nil, fmt.Errorf("sessions initialized: %w", err)
	}
	archive, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		sessionsv1alpha1.ArchiveAtAnnotation: time.Now().UTC().Format(time.RFC3339)}}})
	if err := forEachParallel(ctx, keys, func(ctx context.Context, key string) error {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: retentionNS}}
		return cl.Patch(ctx, s, client.RawPatch(types.MergePatchType, archive))
	}); err != nil {
		return nil, err
	}
	if err := archived.wait(n, 10*time.Minute); err != nil {
		return nil, fmt.Errorf("sessions archived: %w", err)
	}
	// The work queue's echoes of the archive writes settle before the clock starts.
	time.Sleep(5 * time.Second)
	fmt.Fprintf(os.Stderr, "bench: retention: %d sessions archived; retiring them\n", n)

	before, err := readRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	writesBefore, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"retention": map[string]any{"archivedSessionsSeconds": 0}}})
	if err := cl.Patch(ctx, pol, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, err
	}
	if err := waitSessions(ctx, dyn, retentionNS, 0, 10*time.Minute, 100*time.Millisecond); err != nil {
		return nil, err
	}
	took := time.Since(start)
	after, err := readRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	writesAfter, err := apiWrites(ctx, cfg)
	if err != nil {
		return nil, err
	}
	writes := 0.0
	for res, v := range writesAfter {
		if !strings.HasSuffix(res, "/conflicts") {
			writes += v - writesBefore[res]
		}
	}
	fmt.Fprintf(os.Stderr, "bench: retention: %d sessions retired in %s\n", n, took.Round(time.Millisecond))
	figs := []Figure{
		{Name: "retention_retired_per_s", Value: float64(n) / took.Seconds(), Unit: "sessions/s",
			Target: fmt.Sprintf("%d archived sessions, retention.archivedSessionsSeconds set to 0: from the policy's change until the API server holds none (record written, object deleted)", n)},
		{Name: "retention_api_writes_per_retired", Value: writes / float64(n), Unit: "requests",
			Target: "writes (POST, PUT, PATCH, DELETE) of this API's objects and Events the API server served per retired session in that window (apiserver_request_total)"},
	}
	return append(figs, requestFigures("retention_requests_", before, after, n)...), nil
}

// forEachParallel runs do for each key, 64 at a time, and returns the first error.
func forEachParallel(ctx context.Context, keys []string, do func(context.Context, string) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for _, key := range keys {
		g.Go(func() error { return do(gctx, key) })
	}
	return g.Wait()
}
