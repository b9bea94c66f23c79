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
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() { register("starters", benchStarters) }

const (
	startersNS = "bench-starters"
	// startersSchedules is how many SessionSchedules tick every minute.
	startersSchedules = 10000
	// startersDeliveries is how many signed POSTs are timed, one after another.
	startersDeliveries = 200
	// startersShared is the session every schedule sends into: its sendPolicy deny has the
	// webhook refuse each tick's send, so 10,000 ticks a minute cost the manager its
	// schedules' work (a reconcile, an admission call, a status write) and no agent turns.
	startersShared = "cron:bench-shared"
)

var startersKey = []byte("the bench hook's signing key, 32")

// benchStarters runs a manager (devcluster: real processes, the webhooks) and times signed
// hook deliveries from the POST to the 202 (the store reads the hook and its Secret,
// creates the session and the send); then reads the manager's RSS with 10,000
// SessionSchedules on a one-minute cadence against the same manager before they existed.
func benchStarters() ([]Figure, error) {
	ctx := context.Background()
	c, _, cl, _, stop, err := clusterClients(ctx, "bench-starters.log", nil, 500)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := startersFixtures(ctx, cl); err != nil {
		return nil, err
	}
	accept, err := hookAccepts(ctx, cl, c.HistoryURL()+"/hooks/"+startersNS+"/bench", c.HistoryCAFile)
	if err != nil {
		return nil, err
	}
	time.Sleep(rssSettle)
	idle := processRSSMiB(c.ManagerPID())

	start := time.Now()
	g := make(chan error, startersSchedules)
	sem := make(chan struct{}, 32)
	for i := range startersSchedules {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			g <- cl.Create(ctx, &sessionsv1alpha1.SessionSchedule{ObjectMeta: metav1.ObjectMeta{Name: "tick-" + strconv.Itoa(i), Namespace: startersNS},
				Spec: sessionsv1alpha1.SessionScheduleSpec{Schedule: "* * * * *", AgentID: "bot", Message: "tick", SessionKey: startersShared}})
		}()
	}
	for range startersSchedules {
		if err := <-g; err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "bench: starters: %d schedules created in %s\n", startersSchedules, time.Since(start).Round(time.Second))
	ticked, err := waitTicks(ctx, cl, 2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: starters: %d of %d schedules ticked twice after %s\n", ticked, startersSchedules, time.Since(start).Round(time.Second))
	time.Sleep(rssSettle)
	loaded := processRSSMiB(c.ManagerPID())
	return []Figure{
		{Name: "hook_accept_ms", Value: quantileMS(accept, 0.5), Unit: "ms",
			Target: "signed POST /hooks/{ns}/{name} to its 202 (verified, session and send created), p50"},
		{Name: "hook_accept_ms_p99", Value: quantileMS(accept, 0.99), Unit: "ms", Target: "the same, p99"},
		Compare("schedules_10k_rss_mib", loaded, idle, "MiB",
			"manager RSS with 10,000 SessionSchedules ticking every minute against none"),
	}, nil
}

// startersFixtures: an Agent, the shared session that refuses sends, and a hook whose rate
// lets the timed deliveries through.
func startersFixtures(ctx context.Context, cl client.Client) error {
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: startersNS}}); err != nil {
		return err
	}
	if err := cl.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bot", Namespace: startersNS},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: ".*", Reply: "ok"}}}}}); err != nil {
		return err
	}
	if err := cl.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(startersShared), Namespace: startersNS},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: startersShared, AgentID: "bot", SendPolicy: sessionsv1alpha1.ActionDeny}}); err != nil {
		return err
	}
	if err := cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bench-hook", Namespace: startersNS},
		StringData: map[string]string{"secret": "whsec_" + base64.StdEncoding.EncodeToString(startersKey)}}); err != nil {
		return err
	}
	hook := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: startersNS}, Spec: sessionsv1alpha1.SessionHookSpec{
		AgentID: "bot", Message: "ping", RatePerMinute: 6000, TimeoutSeconds: new(int32),
		SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "bench-hook"}, Key: "secret"}}}
	if err := cl.Create(ctx, hook); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(hook), hook); err != nil {
			return err
		}
		if meta.IsStatusConditionTrue(hook.Status.Conditions, sessionsv1alpha1.ConditionReady) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hook not ready: %v", hook.Status.Conditions)
		}
	}
}

// hookAccepts posts startersDeliveries signed deliveries one after another and returns
// each one's time to its 202.
func hookAccepts(ctx context.Context, cl client.Client, url, caFile string) ([]time.Duration, error) {
	hc, err := benchfig.HistoryClient("", caFile)
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := range startersDeliveries {
		body := []byte(`{"event":"bench","n":` + strconv.Itoa(i) + `}`)
		id, ts := "bench_"+strconv.Itoa(i), strconv.FormatInt(time.Now().Unix(), 10)
		m := hmac.New(sha256.New, startersKey)
		m.Write([]byte(id + "." + ts + "." + string(body)))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return nil, fmt.Errorf("delivery %d: %d %s", i, resp.StatusCode, b)
		}
		out = append(out, time.Since(start))
	}
	var list sessionsv1alpha1.SessionSendList
	if err := cl.List(ctx, &list, client.InNamespace(startersNS), client.MatchingLabels{sessionsv1alpha1.HookLabel: "bench"}); err != nil {
		return nil, err
	}
	if len(list.Items) != startersDeliveries {
		return nil, fmt.Errorf("%d sends for %d deliveries", len(list.Items), startersDeliveries)
	}
	return out, nil
}

// waitTicks waits until most schedules have recorded n ticks since they were created
// (status.lastScheduleTime at least n-1 minutes after their first tick), and returns how many did.
func waitTicks(ctx context.Context, cl client.Client, n int) (int, error) {
	first := time.Now().Truncate(time.Minute).Add(time.Minute)
	want := first.Add(time.Duration(n-1) * time.Minute)
	for deadline := want.Add(5 * time.Minute); ; time.Sleep(5 * time.Second) {
		var list sessionsv1alpha1.SessionScheduleList
		if err := cl.List(ctx, &list, client.InNamespace(startersNS)); err != nil {
			return 0, err
		}
		ticked := 0
		for _, s := range list.Items {
			if t := s.Status.LastScheduleTime; t != nil && !t.Time.Before(want) {
				ticked++
			}
		}
		if ticked >= startersSchedules*99/100 || time.Now().After(deadline) {
			if ticked == 0 {
				return 0, fmt.Errorf("no schedule ticked by %s", want.Format(time.RFC3339))
			}
			return ticked, nil
		}
	}
}
