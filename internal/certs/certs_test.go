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

package certs

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// startRecorder is a webhook server that only records that it was started.
type startRecorder struct {
	webhook.Server
	started chan struct{}
}

func (s *startRecorder) Start(ctx context.Context) error {
	close(s.started)
	<-ctx.Done()
	return nil
}

func TestGateHoldsTheServerUntilReady(t *testing.T) {
	m := BindFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	inner := &startRecorder{started: make(chan struct{})}
	gated := m.Gate(inner, "")
	if m.CertDir == "" {
		t.Fatal("an empty cert dir should default to the webhook server's own default")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = gated.Start(ctx) }()
	select {
	case <-inner.started:
		t.Fatal("the webhook server started before the certificate was ready")
	case <-time.After(100 * time.Millisecond):
	}
	close(m.ready)
	select {
	case <-inner.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook server did not start once the certificate was ready")
	}
}

func TestGateStopsWaitingWithTheManager(t *testing.T) {
	m := BindFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	gated := m.Gate(&startRecorder{started: make(chan struct{})}, "/certs")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gated.Start(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start kept waiting after the manager stopped")
	}
}

func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	m := BindFlags(fs)
	if m.Mode != ModeProvided || m.Secret != DefaultSecret || m.Service != DefaultService {
		t.Fatalf("defaults: %+v", m.Options)
	}
	if err := fs.Parse([]string{"--webhook-certs=self-signed", "--webhook-service=svc"}); err != nil {
		t.Fatal(err)
	}
	if m.Mode != ModeSelfSigned || m.Service != "svc" {
		t.Fatalf("parsed: %+v", m.Options)
	}
}

func TestSetupRefusesAnUnknownMode(t *testing.T) {
	m := BindFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	m.Mode = "cert-manager"
	if err := m.Setup(nil); err == nil {
		t.Fatal("want an error for an unknown mode")
	}
}

func TestProvidedModeOpensTheGate(t *testing.T) {
	m := BindFlags(flag.NewFlagSet("t", flag.ContinueOnError))
	if err := m.Setup(nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.ready:
	default:
		t.Fatal("provided certificates must not hold the webhook server")
	}
}

func TestNamespace(t *testing.T) {
	m := &Manager{}
	t.Setenv("POD_NAMESPACE", "ops")
	if ns, err := m.namespace(); err != nil || ns != "ops" {
		t.Fatalf("namespace from POD_NAMESPACE: %q %v", ns, err)
	}
	m.Namespace = "given"
	if ns, _ := m.namespace(); ns != "given" {
		t.Fatalf("an explicit namespace wins: %q", ns)
	}
}

// The history API serves with the webhook's certificate, so the certificate names the
// history Service too, and a client that trusts the CA can verify it by that name.
func TestServiceNames(t *testing.T) {
	want := []string{"wh.ops.svc.cluster.local", "hist.ops.svc", "hist.ops.svc.cluster.local"}
	if d := cmp.Diff(want, serviceNames("ops", "wh", "hist")); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"wh.ops.svc.cluster.local"}, serviceNames("ops", "wh", "")); d != "" {
		t.Errorf("names without a history Service (-want +got):\n%s", d)
	}
}
