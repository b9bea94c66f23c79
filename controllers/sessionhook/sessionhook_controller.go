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

package sessionhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/internal/hookauth"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SessionHookReconciler writes what a SessionHook's owner needs to wire the sender: its
// status.url, and Ready once its signing Secret is there, usable (vouched for by the hook's
// writer, or opted in) and of the scheme's form; and it hands the transcript-store the
// hook and its secret (Keys), which the store's /hooks door verifies deliveries with: the
// network-facing store reads no Secrets. It hands them again every hookKeyResync, so a
// restarted store serves its hooks again within that. It is the one writer of the hook's
// status: status.deliveries and status.lastDeliveryTime are what the store's /hooks door
// reports it accepted (Deliveries), written with the rest and then acknowledged; each
// delivery's SessionSend, which the hook owns, wakes the reconcile.
type SessionHookReconciler struct {
	client.Client
	// APIReader reads the signing Secret: the manager caches no Secrets.
	APIReader client.Reader
	// HookBaseURL is the transcript-store listener's external URL; empty gives a path.
	HookBaseURL string
	Recorder    recorder.EventRecorder
	// Keys receives the hooks' keys; nil hands them nowhere.
	Keys HookKeys
	// Deliveries reports the deliveries the store accepted; nil counts none.
	Deliveries HookDeliveries
}

// HookDeliveries reports the deliveries of a hook that the transcript-store's /hooks door
// accepted and its status does not count yet, and takes the acknowledgement of those written
// (the transcript client).
type HookDeliveries interface {
	HookDeliveries(ctx context.Context, namespace, name string) (transcript.HookDelivery, error)
	AckHookDeliveries(ctx context.Context, d transcript.HookDelivery) error
}

// HookKeys hands the transcript-store the SessionHooks it serves and their secrets (the
// transcript client).
type HookKeys interface {
	PutHookKeys(ctx context.Context, keys transcript.HookKeys) error
}

// hookKeyResync is how often a Ready hook's key is handed to the store again.
const hookKeyResync = time.Minute

// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=sessionhooks/status,verbs=get;update;patch

// hookSecretRecheck is how often a hook whose Secret is missing or unusable looks again
// (the manager watches no Secrets).
const hookSecretRecheck = time.Minute

// HookPath is a hook's path on the transcript-store's listener.
func HookPath(namespace, name string) string { return "/hooks/" + namespace + "/" + name }

// Reconcile implements reconcile.Reconciler.
func (r *SessionHookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	h := &sessionsv1alpha1.SessionHook{}
	if err := r.Get(ctx, req.NamespacedName, h); err != nil || !h.DeletionTimestamp.IsZero() {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.handKey(ctx, req.Namespace, req.Name, nil, nil)
	}
	base := h.DeepCopy()
	delivered, err := r.delivered(ctx, h)
	if err != nil {
		return ctrl.Result{}, err
	}
	h.Status.URL = strings.TrimSuffix(r.HookBaseURL, "/") + HookPath(h.Namespace, h.Name)
	secret, ok, reason, msg := r.secretReady(ctx, h)
	if !ok {
		secret = nil
	}
	if err := r.handKey(ctx, h.Namespace, h.Name, h, secret); err != nil {
		return ctrl.Result{}, err
	}
	ready := metav1.Condition{Type: sessionsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: reason,
		Message: textutil.Truncate(msg, ownerflow.MaxConditionMessage), ObservedGeneration: h.Generation}
	if !ok {
		ready.Status = metav1.ConditionFalse
	}
	changed := meta.SetStatusCondition(&h.Status.Conditions, ready)
	ownerflow.SetStalled(&h.Status.Conditions, ready)
	h.Status.ObservedGeneration = h.Generation
	res := ctrl.Result{RequeueAfter: hookKeyResync}
	if !ok {
		res.RequeueAfter = hookSecretRecheck
	}
	written, err := ownerflow.WriteStatus(ctx, r.Client, base, h)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !written {
		return res, nil
	}
	if delivered.Count > 0 {
		if err := r.Deliveries.AckHookDeliveries(ctx, delivered); err != nil {
			return ctrl.Result{}, err
		}
	}
	if changed && r.Recorder != nil {
		kind := corev1.EventTypeNormal
		if !ok {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(h, nil, kind, reason, "Verify", "%s", ready.Message)
	}
	return res, nil
}

// secretReady reads the signing Secret under the Secret rule, and checks its form for the
// scheme.
func (r *SessionHookReconciler) secretReady(ctx context.Context, h *sessionsv1alpha1.SessionHook) ([]byte, bool, string, string) {
	ref := h.Spec.SigningSecretRef
	val, err := secretaccess.Value(ctx, r.APIReader, h, ref.Name, ref.Key)
	switch {
	case secretaccess.IsUnusable(err):
		return nil, false, "SecretUnusable", err.Error()
	case apierrors.IsNotFound(err):
		return nil, false, "SecretNotFound", "Secret " + ref.Name + " not found"
	case err != nil:
		return nil, false, "SecretError", err.Error()
	}
	if ok, why := hookauth.ValidSecret(h.Spec.Signature != sessionsv1alpha1.HookSignatureGitHub, val); !ok {
		return nil, false, "InvalidSecret", "Secret " + ref.Name + " key " + ref.Key + ": " + why
	}
	if len(val) > transcript.MaxHookSecretBytes {
		return nil, false, "InvalidSecret", fmt.Sprintf("Secret %s key %s: over %d bytes", ref.Name, ref.Key, transcript.MaxHookSecretBytes)
	}
	return val, true, "Ready", "deliveries signed with Secret " + ref.Name + " are accepted at " + h.Status.URL
}

// handKey hands the store the hook and its secret, or drops the hook's key (h or secret
// nil): a hook that is gone or not Ready has its deliveries refused.
func (r *SessionHookReconciler) handKey(ctx context.Context, ns, name string, h *sessionsv1alpha1.SessionHook, secret []byte) error {
	if r.Keys == nil {
		return nil
	}
	key := transcript.HookKey{Namespace: ns, Name: name, Delete: h == nil || secret == nil}
	if !key.Delete {
		spec := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: h.Name, UID: h.UID}, Spec: h.Spec}
		b, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		key.Hook, key.Secret = b, secret
	}
	return r.Keys.PutHookKeys(ctx, transcript.HookKeys{Keys: []transcript.HookKey{key}})
}

// delivered adds to h's status the deliveries the store reports and returns them, to be
// acknowledged once the status write lands.
func (r *SessionHookReconciler) delivered(ctx context.Context, h *sessionsv1alpha1.SessionHook) (transcript.HookDelivery, error) {
	if r.Deliveries == nil {
		return transcript.HookDelivery{}, nil
	}
	d, err := r.Deliveries.HookDeliveries(ctx, h.Namespace, h.Name)
	if err != nil || d.Count <= 0 {
		return transcript.HookDelivery{}, err
	}
	h.Status.Deliveries += d.Count
	if last := h.Status.LastDeliveryTime; last == nil || d.Last.After(last.Time) {
		h.Status.LastDeliveryTime = &metav1.Time{Time: d.Last}
	}
	return d, nil
}

// SetupWith registers the reconciler: a hook's own changes, and each SessionSend it owns
// when created (a delivery the store accepted, to count).
func (r *SessionHookReconciler) SetupWith(b *builder.Builder) error {
	return b.For(&sessionsv1alpha1.SessionHook{}).
		Owns(&sessionsv1alpha1.SessionSend{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Named("sessionhook").Complete(ownerflow.RequeueConflicts(r))
}
