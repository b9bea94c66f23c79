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

// Package certs provides the admission webhook's serving certificate without cert-manager:
// in self-signed mode the manager keeps a CA and a serving certificate in a Secret, injects
// the CA into its webhook configurations' caBundle (open-policy-agent/cert-controller, as
// kueue and gatekeeper do), and starts serving webhooks only once the kubelet has mounted the
// certificate. In provided mode the certificate comes from elsewhere (cert-manager, a test).
package certs

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Modes of --webhook-certs.
const (
	ModeSelfSigned = "self-signed"
	ModeProvided   = "provided"
)

// The names config/default and the Helm chart give the objects the certificate belongs to.
const (
	DefaultSecret     = "agent-session-operator-webhook-server-cert"
	DefaultService    = "agent-session-operator-webhook-service"
	DefaultValidating = "agent-session-operator-validating-webhook-configuration"
	DefaultMutating   = "agent-session-operator-mutating-webhook-configuration"
	// DefaultHistoryService is the transcript-store's history Service, which serves with the
	// same certificate (one CA for a client to trust).
	DefaultHistoryService = "agent-session-operator-history"
)

// saNamespaceFile is where every Pod finds its own namespace.
const saNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options say where the certificate lives and whom it serves.
type Options struct {
	Mode       string
	Namespace  string // empty: $POD_NAMESPACE, else the Pod's service account namespace
	Secret     string
	Service    string
	Validating string
	Mutating   string
	// HistoryService is named in the certificate too: the history API serves with it.
	HistoryService string
	CertDir        string // where the Secret is mounted; the webhook server reads it from here
}

// Manager gates the webhook server on the certificate being ready.
type Manager struct {
	Options
	ready chan struct{}
}

// BindFlags registers the --webhook-cert* flags on fs.
func BindFlags(fs *flag.FlagSet) *Manager {
	m := &Manager{ready: make(chan struct{})}
	fs.StringVar(&m.Mode, "webhook-certs", ModeProvided, "Who provides the webhook serving certificate: self-signed (the manager creates it in a Secret and injects caBundle) or provided (mounted at --webhook-cert-dir, e.g. by cert-manager).")
	fs.StringVar(&m.Secret, "webhook-cert-secret", DefaultSecret, "Self-signed mode: the Secret in the manager's namespace that holds the CA and the serving certificate.")
	fs.StringVar(&m.Service, "webhook-service", DefaultService, "Self-signed mode: the webhook Service the certificate is issued for.")
	fs.StringVar(&m.Validating, "validating-webhook-configuration", DefaultValidating, "Self-signed mode: the ValidatingWebhookConfiguration whose caBundle is kept current.")
	fs.StringVar(&m.Mutating, "mutating-webhook-configuration", DefaultMutating, "Self-signed mode: the MutatingWebhookConfiguration whose caBundle is kept current.")
	fs.StringVar(&m.HistoryService, "history-service", DefaultHistoryService, "Self-signed mode: the transcript-store's history Service, also named in the certificate (empty: none).")
	return m
}

// Gate wraps the webhook server so that it starts serving only once the certificate is in
// CertDir; the manager's other runnables start meanwhile (the rotator among them).
func (m *Manager) Gate(s webhook.Server, certDir string) webhook.Server {
	if certDir == "" {
		// The webhook server's own default.
		certDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	m.CertDir = certDir
	return &gatedServer{Server: s, ready: m.ready}
}

// Setup adds the certificate rotator to mgr (self-signed mode) or opens the gate at once.
func (m *Manager) Setup(mgr ctrl.Manager) error {
	switch m.Mode {
	case ModeProvided:
		close(m.ready)
		return nil
	case ModeSelfSigned:
	default:
		return fmt.Errorf("--webhook-certs=%q: want %s or %s", m.Mode, ModeSelfSigned, ModeProvided)
	}
	ns, err := m.namespace()
	if err != nil {
		return err
	}
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: ns, Name: m.Secret},
		CertDir:        m.CertDir,
		CAName:         "agent-session-operator-ca",
		CAOrganization: "agent-session-operator",
		DNSName:        fmt.Sprintf("%s.%s.svc", m.Service, ns),
		ExtraDNSNames:  serviceNames(ns, m.Service, m.HistoryService),
		IsReady:        m.ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: m.Validating, Type: rotator.Validating},
			{Name: m.Mutating, Type: rotator.Mutating},
		},
		// Every replica serves webhooks, so every replica must see the current certificate;
		// the rotator's writes are idempotent.
		RequireLeaderElection: false,
		// The certificate watcher of the webhook server reloads a renewed certificate.
		RestartOnSecretRefresh: false,
	})
}

func (m *Manager) namespace() (string, error) {
	if m.Namespace != "" {
		return m.Namespace, nil
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := os.ReadFile(saNamespaceFile)
	if err != nil {
		return "", fmt.Errorf("self-signed webhook certificates: the manager's namespace (set POD_NAMESPACE): %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// gatedServer is a webhook server whose Start waits for the certificate. The manager starts
// webhook servers before anything else and does not wait for them to be ready, so waiting
// here does not hold up the rotator that opens the gate.
type gatedServer struct {
	webhook.Server
	ready <-chan struct{}
}

func (g *gatedServer) Start(ctx context.Context) error {
	select {
	case <-g.ready:
		return g.Server.Start(ctx)
	case <-ctx.Done():
		return nil
	}
}

// serviceNames are the DNS names the certificate carries besides the webhook Service's
// <svc>.<ns>.svc: its cluster.local form and both forms of the history Service.
func serviceNames(ns, webhookSvc, historySvc string) []string {
	names := []string{fmt.Sprintf("%s.%s.svc.cluster.local", webhookSvc, ns)}
	if historySvc != "" {
		names = append(names, fmt.Sprintf("%s.%s.svc", historySvc, ns), fmt.Sprintf("%s.%s.svc.cluster.local", historySvc, ns))
	}
	return names
}
