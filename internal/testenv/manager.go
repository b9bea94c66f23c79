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

package testenv

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
)

// ManagerUser is the user a suite's manager speaks as (AsManager) where admission must tell
// the manager's own writes from a person's: webhook.Options.ManagerUsername.
const ManagerUser = "system:serviceaccount:agent-sessions:manager"

// AsManager returns a copy of cfg that speaks as ManagerUser, in system:masters so RBAC
// never stands in the way of what the suite tests.
func AsManager(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: ManagerUser, Groups: []string{"system:masters"}}
	return c
}

// NewManager builds a suite's manager on cfg: this API's scheme, no metrics listener,
// controller names that may repeat (a suite restarts its manager in one process), the given
// cache options (cacheindex.CacheOptions() are cmd/manager's), the webhook server of env
// when env installs webhooks (WithWebhooks), and cacheindex's field indexes.
func NewManager(ctx context.Context, env *envtest.Environment, cfg *rest.Config, cacheOpts cache.Options) (ctrl.Manager, error) {
	o := ctrl.Options{
		Scheme:     Scheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cacheOpts,
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if len(env.WebhookInstallOptions.Paths) > 0 {
		o.WebhookServer = WebhookServer(env)
	}
	mgr, err := ctrl.NewManager(cfg, o)
	if err != nil {
		return nil, err
	}
	if err := cacheindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	return mgr, nil
}

// WebhookServer serves the webhooks env installed (WithWebhooks) from a manager.
func WebhookServer(env *envtest.Environment) ctrlwebhook.Server {
	wh := env.WebhookInstallOptions
	return ctrlwebhook.NewServer(ctrlwebhook.Options{
		Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir,
	})
}

// RunWithWebhooks starts mgr in the background and returns once its webhook server answers
// and its cache has synced; stop ends the manager.
func RunWithWebhooks(ctx context.Context, mgr ctrl.Manager) (stop context.CancelFunc, err error) {
	mctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, 1)
	go func() { errs <- mgr.Start(mctx) }()
	err = wait.PollUntilContextTimeout(mctx, Interval, Timeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-errs:
			return false, errors.Join(errors.New("manager stopped"), err)
		default:
		}
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	})
	if err == nil && !mgr.GetCache().WaitForCacheSync(mctx) {
		err = errors.New("the manager's cache did not sync")
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}
