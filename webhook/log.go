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

package webhook

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// logged wraps a validator to log each decision at V(2), the object named with klog.KObj:
// one place, so the per-kind validators stay free of logging.
type logged[T client.Object] struct {
	admission.Validator[T]
	kind string
}

func withLog[T client.Object](kind string, v admission.Validator[T]) admission.Validator[T] {
	return logged[T]{Validator: v, kind: kind}
}

func (l logged[T]) log(ctx context.Context, op string, obj T, err error) {
	log := ctrl.LoggerFrom(ctx).V(2)
	if !log.Enabled() {
		return // every admission passes here: build no logger for logs that are off
	}
	log = log.WithValues(l.kind, klog.KObj(obj), "operation", op)
	if err != nil {
		log.Info("denied", "reason", err.Error())
		return
	}
	log.Info("admitted")
}

func (l logged[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	w, err := l.Validator.ValidateCreate(ctx, obj)
	l.log(ctx, "create", obj, err)
	return w, err
}

func (l logged[T]) ValidateUpdate(ctx context.Context, oldObj, obj T) (admission.Warnings, error) {
	w, err := l.Validator.ValidateUpdate(ctx, oldObj, obj)
	l.log(ctx, "update", obj, err)
	return w, err
}

// RequestLog is the webhooks' admission.Webhook.LogConstructor: the request's names (object,
// namespace, name, resource, user, request id) go into its logger only when V(2) is on,
// where the decisions are logged (withLog) and controller-runtime's own request lines (V(5))
// may be. controller-runtime's default adds them to every request's logger, which a
// structured logger encodes at once whether or not anything is written: most of an
// admission's logging cost, for lines that are off. With V(2) off, the rare error the
// handler logs (an answer it could not encode) goes without them.
func RequestLog(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil || !base.V(2).Enabled() {
		return base
	}
	return admission.DefaultLogConstructor(base, req)
}
