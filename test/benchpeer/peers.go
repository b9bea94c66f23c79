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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/test/benchfig"
)

const peerNS = "peer"

// peers are both systems, started once for every figure.
type peers struct {
	ours    *devcluster.Cluster
	cl      client.Client
	dyn     dynamic.Interface
	history *http.Client // trusts the history API's certificate
	theirs  *gateway
	stops   []func()
	once    sync.Once
}

func startPeers(ctx context.Context, work string) (*peers, error) {
	p := &peers{}
	install, err := installOpenClaw()
	if err != nil {
		return nil, err
	}
	modelURL, stopModel, err := startStubModel()
	if err != nil {
		return nil, err
	}
	p.stops = append(p.stops, stopModel)
	gwLog, err := os.Create(filepath.Join(work, "openclaw.log"))
	if err != nil {
		p.stop()
		return nil, err
	}
	p.stops = append(p.stops, func() { _ = gwLog.Close() })
	if p.theirs, err = startGateway(ctx, install, filepath.Join(work, "openclaw"), modelURL, gwLog); err != nil {
		p.stop()
		return nil, err
	}
	p.stops = append(p.stops, p.theirs.stop)

	// 100 followers of one session are one user's streams here, and one user reads every
	// session's history: raise the per-user bounds, which the bench does not measure.
	c, stopOurs, err := benchfig.StartCluster(ctx, "bench-peer-ours.log", devcluster.Options{
		StoreArgs: []string{"--max-streams-per-user=512", "--api-qps-per-user=-1"}})
	if err != nil {
		p.stop()
		return nil, err
	}
	p.ours = c
	p.stops = append(p.stops, stopOurs)
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	if p.cl, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		p.stop()
		return nil, err
	}
	p.dyn = dynamic.NewForConfigOrDie(cfg)
	if p.history, err = historyClient(c.HistoryCAFile); err != nil {
		p.stop()
		return nil, err
	}
	if err := setupOurs(ctx, p.cl); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// stop ends both systems once, whether from main's return or from a signal.
func (p *peers) stop() {
	p.once.Do(func() {
		for i := len(p.stops) - 1; i >= 0; i-- {
			p.stops[i]()
		}
	})
}

func historyClient(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", caFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 256}
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}, nil
}

// ourAgent answers every turn at once, as OpenClaw's stub model does.
const ourAgent = "peer"

// ourKey is the key of our session i; theirKey the key OpenClaw's session i is routed by.
func ourKey(i int) string   { return fmt.Sprintf("agent:%s:webchat:group:s%d", ourAgent, i) }
func theirKey(i int) string { return fmt.Sprintf("agent:main:bench-s%d", i) }

func setupOurs(ctx context.Context, cl client.Client) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(peerNS)
	agent := &sessionsv1alpha1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: ourAgent, Namespace: peerNS},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
			{Match: "^Agent-to-agent announce step", Reply: sessionsv1alpha1.AnnounceSkip},
			{Match: ".", Reply: "ok"},
		}}},
	}
	for _, o := range []client.Object{ns, agent} {
		if err := cl.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// ensureOurSessions creates our sessions 0..n-1 and waits until each has a transcript.
func ensureOurSessions(ctx context.Context, cl client.Client, n int) error {
	for i := range n {
		if err := ensureOurSession(ctx, cl, i); err != nil {
			return err
		}
	}
	return nil
}

// ensureOurSession creates our session i and waits until it has a transcript.
func ensureOurSession(ctx context.Context, cl client.Client, i int) error {
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(ourKey(i)), Namespace: peerNS},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: ourKey(i), AgentID: ourAgent, ChatType: sessionsv1alpha1.ChatTypeGroup},
	}
	if err := createRetrying(ctx, cl, s); err != nil {
		return err
	}
	_, err := ourSessionID(ctx, cl, i)
	return err
}

// createBackoff spans about 25 s: a loaded machine's API server may fail a webhook call
// (its 5 s timeout, a broken connection) or shed load for that long.
var createBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 8}

// createRetrying creates o, again after an error the API server may not repeat (a failed
// webhook call, a timeout, too many requests); o already there is created.
func createRetrying(ctx context.Context, cl client.Client, o client.Object) error {
	transient := func(err error) bool {
		return apierrors.IsInternalError(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
			apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
	}
	return retry.OnError(createBackoff, transient, func() error {
		return client.IgnoreAlreadyExists(cl.Create(ctx, o))
	})
}

// ourSessionID waits up to 2 minutes for our session i's transcript and returns its id.
func ourSessionID(ctx context.Context, cl client.Client, i int) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s := &sessionsv1alpha1.AgentSession{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: peerNS, Name: sessionkey.ObjectName(ourKey(i))}, s); err != nil {
			return "", err
		}
		if s.Status.SessionID != "" {
			return s.Status.SessionID, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("session %s has no transcript after 2m", ourKey(i))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logOut receives progress lines.
var logOut = os.Stderr
