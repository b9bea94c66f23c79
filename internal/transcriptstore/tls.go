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

package transcriptstore

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// ServerTLS is the public listener's TLS: the tls.crt and tls.key of certDir, reloaded when
// they change (controller-runtime's certwatcher, as the webhook server does), or, without a
// directory, a self-signed certificate made at start. Bearer tokens never cross the network
// in the clear either way.
func ServerTLS(ctx context.Context, certDir string, log logr.Logger) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if certDir == "" {
		certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("transcript-store", nil, []string{"localhost"})
		if err != nil {
			return nil, fmt.Errorf("self-signed certificate: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, err
		}
		log.Info("serving the history API with a self-signed certificate; mount one with --tls-cert-dir")
		cfg.Certificates = []tls.Certificate{pair}
		return cfg, nil
	}
	w, err := certwatcher.New(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("serving certificate in %s: %w", certDir, err)
	}
	go func() {
		if err := w.Start(ctx); err != nil {
			log.Error(err, "certificate watcher stopped")
		}
	}()
	cfg.GetCertificate = w.GetCertificate
	return cfg, nil
}
