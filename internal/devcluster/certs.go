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

package devcluster

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
)

// servingCertsDir is where a local cluster keeps what an install's webhook certificate
// Secret holds (ca.crt, tls.crt, tls.key), mounted the same way: the manager's
// --webhook-cert-dir and the transcript-store's --tls-cert-dir.
const servingCertsDir = "serving-certs"

// writeServingCerts makes the local cluster's CA and one serving certificate it signs for
// the loopback names, as the manager's self-signed mode and cert-manager make them for an
// install: the webhooks and the history listener (its /a2a and /mcp doors among them) serve
// it, and the manager's A2A and MCP clients trust ca.crt of the webhook certificate
// directory, so an Agent may call the cluster's own doors as in a real install. Every pair
// shares the one directory, as every Pod mounts the one Secret.
func (c *Cluster) writeServingCerts(hosts ...string) (string, error) {
	dir := filepath.Join(c.opts.StateDir, servingCertsDir)
	if c.HistoryCAFile != "" {
		return dir, nil
	}
	caPEM, certPEM, keyPEM, err := servingCerts(hosts...)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"ca.crt": caPEM, "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return "", err
		}
	}
	c.HistoryCAFile = filepath.Join(dir, "ca.crt")
	return dir, nil
}

// servingCerts are a new CA and a serving certificate it signed for 127.0.0.1, localhost
// and hosts, as PEM: client-go's self-signed pair is exactly that, its certificate file the
// serving certificate followed by the CA's.
func servingCerts(hosts ...string) (caPEM, certPEM, keyPEM []byte, err error) {
	var ips []net.IP
	var names []string
	for _, h := range append([]string{"localhost"}, hosts...) {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else if h != "" {
			names = append(names, h)
		}
	}
	certPEM, keyPEM, err = cert.GenerateSelfSignedCertKey("127.0.0.1", ips, names)
	if err != nil {
		return nil, nil, nil, err
	}
	leaf, rest := pem.Decode(certPEM)
	ca, _ := pem.Decode(rest)
	if leaf == nil || ca == nil {
		return nil, nil, nil, errors.New("the self-signed certificate holds no CA")
	}
	return pem.EncodeToMemory(ca), certPEM, keyPEM, nil
}

// trustOneCA makes the serving certificate (named for the webhooks' host too) and injects
// its CA into the webhook configurations the control plane installed.
func (c *Cluster) trustOneCA(ctx context.Context) error {
	wh := c.env.WebhookInstallOptions
	if _, err := c.writeServingCerts(wh.LocalServingHost); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	if len(wh.MutatingWebhooks)+len(wh.ValidatingWebhooks) == 0 {
		return nil
	}
	return c.injectCA(ctx)
}

// injectCA points the webhook configurations the control plane installed at the local CA,
// as the manager's self-signed mode injects its CA: the API server then trusts the webhook
// serving certificate of the serving-certs directory.
func (c *Cluster) injectCA(ctx context.Context) error {
	caPEM, err := os.ReadFile(c.HistoryCAFile)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	wh := c.env.WebhookInstallOptions
	for _, m := range wh.MutatingWebhooks {
		if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, m.Name, types.JSONPatchType,
			caPatch(len(m.Webhooks), caPEM), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("inject the local CA into %s: %w", m.Name, err)
		}
	}
	for _, v := range wh.ValidatingWebhooks {
		if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, v.Name, types.JSONPatchType,
			caPatch(len(v.Webhooks), caPEM), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("inject the local CA into %s: %w", v.Name, err)
		}
	}
	return nil
}

// caPatch is the JSON patch that sets the caBundle of a configuration's n webhooks.
func caPatch(n int, caPEM []byte) []byte {
	ops := make([]map[string]any, n)
	for i := range ops {
		ops[i] = map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": caPEM}
	}
	b, _ := json.Marshal(ops) // maps of strings and bytes always marshal
	return b
}
