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
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

func init() {
	register("send", benchSend)
}

const (
	c1Sends       = 100
	saturateConc  = 20
	saturateFor   = 30 * time.Second
	sendSessions  = saturateConc
	messageTarget = "one message into a session through each system's usual entry, instant model"
)

var sendGVR = sessionsv1alpha1.GroupVersion.WithResource("sessionsends")

// benchSend: a message into a session through each system's usual entry: ours a SessionSend
// with timeoutSeconds > 0 until its status is ok, theirs POST /v1/chat/completions with
// x-openclaw-session-key until the reply. Concurrency 1 gives the latency, then 20 workers
// (each on its own session: both run one turn at a time per session) for 30 s the rate.
// The saturated phase also yields appends/s of recorded messages and bytes on disk per
// message, each system's transcript files measured before and after.
func benchSend(ctx context.Context, p *peers) ([]benchfig.Figure, error) {
	if err := ensureOurSessions(ctx, p.cl, sendSessions); err != nil {
		return nil, err
	}
	ours := func(worker int) error { return p.ourSend(ctx, ourKey(worker), 30) }
	theirs := func(worker int) error { return p.theirSend(ctx, theirKey(worker)) }
	var figs []benchfig.Figure
	var errs []error
	// Warm both: first turns create OpenClaw's sessions and fill our caches.
	for w := range sendSessions {
		if err := ours(w); err != nil {
			return nil, fmt.Errorf("ours, warm-up: %w", err)
		}
		if err := theirs(w); err != nil {
			return nil, fmt.Errorf("openclaw, warm-up: %w", err)
		}
	}
	ourLat, err1 := sequential(c1Sends, ours)
	theirLat, err2 := sequential(c1Sends, theirs)
	if err1 == nil && err2 == nil {
		figs = append(figs,
			benchfig.Compare("peer_send_p50_c1_ms", quantileMS(ourLat, 0.5), quantileMS(theirLat, 0.5), "ms", messageTarget+", concurrency 1"),
			benchfig.Compare("peer_send_p99_c1_ms", quantileMS(ourLat, 0.99), quantileMS(theirLat, 0.99), "ms", "concurrency 1"))
	} else {
		errs = append(errs, fmt.Errorf("c1: ours %v, openclaw %v", err1, err2))
	}

	ourBytes0, theirBytes0 := dirBytes(p.ours.TranscriptDir()), dirBytes(p.theirs.StateDir)
	ourMsgs0, err := p.ourMessages(ctx, sendSessions)
	if err != nil {
		return figs, err
	}
	theirMsgs0, err := p.theirMessages(ctx, sendSessions)
	if err != nil {
		return figs, err
	}
	ourN, ourT, err1 := saturate(saturateConc, saturateFor, ours)
	theirN, theirT, err2 := saturate(saturateConc, saturateFor, theirs)
	if err1 != nil || err2 != nil {
		return figs, append(errs, fmt.Errorf("saturation: ours %v, openclaw %v", err1, err2))[0]
	}
	figs = append(figs, benchfig.CompareRate("peer_sends_per_s", float64(ourN)/ourT.Seconds(), float64(theirN)/theirT.Seconds(), "sends/s",
		fmt.Sprintf("%d workers for %s, each on its own session", saturateConc, saturateFor)))

	// Let OpenClaw go quiet (it writes for a while after heavy load) before sizing its files.
	time.Sleep(10 * time.Second)
	ourMsgs1, err1 := p.ourMessages(ctx, sendSessions)
	theirMsgs1, err2 := p.theirMessages(ctx, sendSessions)
	if err1 != nil || err2 != nil {
		return figs, fmt.Errorf("message counts: ours %v, openclaw %v", err1, err2)
	}
	ourMsgs, theirMsgs := float64(ourMsgs1-ourMsgs0), float64(theirMsgs1-theirMsgs0)
	if ourMsgs > 0 && theirMsgs > 0 {
		figs = append(figs,
			benchfig.CompareRate("peer_appends_per_s", ourMsgs/ourT.Seconds(), theirMsgs/theirT.Seconds(), "messages/s",
				"recorded transcript messages per second during the saturated sends"),
			benchfig.Compare("peer_bytes_per_message", float64(dirBytes(p.ours.TranscriptDir())-ourBytes0)/ourMsgs,
				float64(dirBytes(p.theirs.StateDir)-theirBytes0)/theirMsgs, "B",
				"growth of the transcript store's files (ours) and OpenClaw's state directory (SQLite) per recorded message"))
	}
	if len(errs) > 0 {
		return figs, errs[0]
	}
	return figs, nil
}

// ourSend creates a SessionSend and waits for its ok.
func (p *peers) ourSend(ctx context.Context, key string, timeoutSeconds int64) error {
	name := "s-" + strconv.FormatInt(sendSeq.Add(1), 10)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sessionsv1alpha1.GroupVersion.String(), "kind": "SessionSend",
		"metadata": map[string]any{"name": name, "namespace": peerNS},
		"spec":     map[string]any{"sessionKey": key, "message": "hello", "timeoutSeconds": timeoutSeconds},
	}}
	res := p.dyn.Resource(sendGVR).Namespace(peerNS)
	created, err := res.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	w, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		return err
	}
	defer w.Stop()
	timeout := time.After(time.Duration(timeoutSeconds+30) * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("send %s: watch closed", name)
			}
			if ev.Type != watch.Modified {
				continue
			}
			obj := ev.Object.(*unstructured.Unstructured)
			switch st, _, _ := unstructured.NestedString(obj.Object, "status", "status"); st {
			case string(sessionsv1alpha1.SendOK):
				return nil
			case string(sessionsv1alpha1.SendError), string(sessionsv1alpha1.SendTimeout):
				return fmt.Errorf("send %s: status %s", name, st)
			}
		case <-timeout:
			return fmt.Errorf("send %s: no ok in time", name)
		}
	}
}

var sendSeq atomic.Int64

// theirSend runs one turn through OpenClaw's OpenAI-compatible endpoint.
func (p *peers) theirSend(ctx context.Context, key string) error {
	body := []byte(`{"model":"openclaw/default","messages":[{"role":"user","content":"hello"}]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.theirs.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.theirs.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-openclaw-session-key", key)
	resp, err := gatewayHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("openclaw chat completion: %s: %.300s", resp.Status, b)
	}
	if !bytes.Contains(b, []byte(`"ok"`)) {
		return fmt.Errorf("openclaw chat completion without the model's reply: %.300s", b)
	}
	return nil
}

var gatewayHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 2 * time.Minute}

// sequential runs n operations one after another, each on worker i%sendSessions.
func sequential(n int, op func(worker int) error) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if err := op(i % sendSessions); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}

// saturate keeps conc workers busy for d and counts the operations finished in that time.
func saturate(conc int, d time.Duration, op func(worker int) error) (int, time.Duration, error) {
	start := time.Now()
	deadline := start.Add(d)
	var count atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := op(w); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if time.Now().Before(deadline) {
					count.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(count.Load()), d, firstErr
}

func quantileMS(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1e3
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
