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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

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
