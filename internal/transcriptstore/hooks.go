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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/hookauth"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// HooksRoute is the door SessionHook deliveries come in by: POST /hooks/{namespace}/{name}.
const HooksRoute = "/hooks/"

// hookDeniedFloor is the least time a refused delivery takes to be answered: an unknown
// hook or namespace (a failed read) and a bad signature (two reads and an HMAC) then take
// the same time, so hooks cannot be enumerated by timing either.
const hookDeniedFloor = 150 * time.Millisecond

// hookReplayTTL is how long a delivery's send is kept at least, so that a repeated
// webhook-id is answered with it (and creates nothing) for that long.
const hookReplayTTL = 24*time.Hour + hookauth.Tolerance

// hookMessageMax is a SessionSend's spec.message bound (the CRD's).
const hookMessageMax = 262144

// HookOptions configure the /hooks door.
type HookOptions struct {
	// Keys are the hooks the store serves and their secrets, from the manager.
	Keys *HookKeyring
	// Client creates the deliveries' sessions and sends, as the store. The deliveries are
	// counted in Keys, which the SessionHook controller reads to write the hook's status.
	Client client.Client
	Clock  clock.PassiveClock
	// Registry receives agent_sessions_hook_deliveries_total; nil registers nowhere.
	Registry prometheus.Registerer
	Log      logr.Logger
	// DeniedFloor overrides hookDeniedFloor (tests); 0 is the default.
	DeniedFloor time.Duration
}

// hookDoor turns a signed POST into a SessionSend (SessionHook).
type hookDoor struct {
	HookOptions
	deliveries *prometheus.CounterVec
	mu         sync.Mutex
	// limits are each hook's delivery rate buckets, by UID.
	limits map[types.UID]*hookLimit
}

type hookLimit struct {
	perMinute int32
	*rate.Limiter
}

// maxHookLimits bounds the rate buckets kept: a full map starts again empty (a burst more
// for each hook, once), so that hooks created and deleted forever cost no memory.
const maxHookLimits = 10000

// NewHookHandler serves POST /hooks/{namespace}/{name}.
func NewHookHandler(o HookOptions) http.Handler {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.DeniedFloor == 0 {
		o.DeniedFloor = hookDeniedFloor
	}
	d := &hookDoor{HookOptions: o, limits: map[types.UID]*hookLimit{},
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agent_sessions_hook_deliveries_total",
			Help: "SessionHook deliveries by outcome: accepted, replayed, unauthorized, stale, too_large, rate_limited, refused, error.",
		}, []string{"outcome"})}
	if o.Registry != nil {
		o.Registry.MustRegister(d.deliveries)
	}
	return d
}

// hookAccepted is the answer to an accepted (202) or replayed (200) delivery.
type hookAccepted struct {
	Send       string `json:"send"`
	SessionKey string `json:"sessionKey"`
}

func (d *hookDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, transcript.ErrTypeMethodNotAllowed, "POST a signed delivery")
		return
	}
	// Read at most the largest body any hook accepts, before anything else: what a hook
	// allows is known only to whoever signed for it.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sessionsv1alpha1.MaxHookMaxBodyBytes))
	if err != nil {
		d.deliveries.WithLabelValues("too_large").Inc()
		writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest,
			"the body is over "+strconv.Itoa(sessionsv1alpha1.MaxHookMaxBodyBytes)+" bytes")
		return
	}
	ctx := r.Context()
	hook, secret := d.load(r.URL.Path)
	var scheme hookauth.Scheme = hookauth.Standard{}
	if hook != nil && hook.Spec.Signature == sessionsv1alpha1.HookSignatureGitHub {
		scheme = hookauth.GitHub{}
	}
	if hook == nil {
		// Do the work a known hook costs, with a secret nobody holds.
		secret = unknownHookSecret
	}
	id, err := scheme.Verify(secret, body, r.Header, d.Clock.Now())
	if hook == nil || err != nil {
		outcome := "unauthorized"
		if hook != nil && errors.Is(err, hookauth.ErrTimestamp) {
			outcome = "stale"
		}
		d.deliveries.WithLabelValues(outcome).Inc()
		d.denied(r.Context(), w, start)
		return
	}
	if limit := hookMaxBody(hook); len(body) > limit {
		d.deliveries.WithLabelValues("too_large").Inc()
		writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest,
			"the body is over the hook's spec.maxBodyBytes ("+strconv.Itoa(limit)+")")
		return
	}
	if !d.allow(hook) {
		d.deliveries.WithLabelValues("rate_limited").Inc()
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusTooManyRequests, transcript.ErrTypeTooManyRequests,
			"over the hook's spec.ratePerMinute ("+strconv.Itoa(int(hookRate(hook)))+")")
		return
	}
	d.deliver(ctx, w, hook, id, body)
}

// unknownHookSecret signs for no hook: an unknown one is verified against it.
var unknownHookSecret = []byte("whsec_" + "dW5rbm93biBob29rOiBub2JvZHkgaG9sZHMgdGhpcw==")

// denied answers a delivery that is not a known hook's, correctly signed, no sooner than
// the floor: the same status, body and time for an unknown hook or namespace, a hook whose
// Secret is missing, a bad signature and an old timestamp.
func (d *hookDoor) denied(ctx context.Context, w http.ResponseWriter, start time.Time) {
	if wait := d.DeniedFloor - time.Since(start); wait > 0 {
		// A sender that gives up is not waited for: nobody reads the answer's timing then.
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
	writeError(w, http.StatusUnauthorized, transcript.ErrTypeUnauthorized, "bad or missing signature")
}

// load is the hook the path names and its signing secret, as the manager handed them; nil
// when the store serves no such hook (unknown, or its Secret is missing or unusable).
func (d *hookDoor) load(path string) (*sessionsv1alpha1.SessionHook, []byte) {
	ns, name, ok := HookPathNamespace(path)
	if !ok || d.Keys == nil {
		return nil, nil
	}
	return d.Keys.get(ns, name)
}

// HookPathNamespace splits /hooks/{namespace}/{name}; the shard front routes the door by
// the namespace segment.
func HookPathNamespace(path string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(path, HooksRoute)
	if !found {
		return "", "", false
	}
	namespace, name, found = strings.Cut(rest, "/")
	if !found || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", false
	}
	return namespace, name, true
}

func hookMaxBody(h *sessionsv1alpha1.SessionHook) int {
	if h.Spec.MaxBodyBytes > 0 {
		return int(h.Spec.MaxBodyBytes)
	}
	return sessionsv1alpha1.DefaultHookMaxBodyBytes
}

func hookRate(h *sessionsv1alpha1.SessionHook) int32 {
	if h.Spec.RatePerMinute > 0 {
		return h.Spec.RatePerMinute
	}
	return sessionsv1alpha1.DefaultHookRatePerMinute
}

// allow takes a delivery from the hook's bucket: ratePerMinute a minute, as a burst too.
func (d *hookDoor) allow(h *sessionsv1alpha1.SessionHook) bool {
	per := hookRate(h)
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.limits[h.UID]
	if l == nil || l.perMinute != per {
		if len(d.limits) >= maxHookLimits {
			d.limits = map[types.UID]*hookLimit{}
		}
		l = &hookLimit{perMinute: per, Limiter: rate.NewLimiter(rate.Limit(float64(per)/60), int(per))}
		d.limits[h.UID] = l
	}
	return l.AllowN(d.Clock.Now(), 1)
}

// deliver creates the delivery's session (on first use) and send, named from the hook and
// the delivery id: a repeated delivery finds its send and is answered 200 with it.
func (d *hookDoor) deliver(ctx context.Context, w http.ResponseWriter, h *sessionsv1alpha1.SessionHook, id string, body []byte) {
	sum := sha256.Sum256([]byte(string(h.UID) + "/" + id))
	name := h.Name + "-" + hex.EncodeToString(sum[:5])
	key := h.Spec.SessionKey
	if key == "" {
		ns, err := uuid.Parse(string(h.UID))
		if err != nil {
			ns = uuid.NameSpaceURL
		}
		key = "hook:" + uuid.NewSHA1(ns, []byte(id)).String()
	}
	existing := &sessionsv1alpha1.SessionSend{}
	err := d.Client.Get(ctx, types.NamespacedName{Namespace: h.Namespace, Name: name}, existing)
	if err == nil && metav1.IsControlledBy(existing, h) {
		d.deliveries.WithLabelValues("replayed").Inc()
		writeJSON(w, http.StatusOK, hookAccepted{Send: name, SessionKey: existing.Spec.SessionKey})
		return
	}
	msg, ok := hookMessage(h.Spec.Message, body)
	if !ok {
		d.deliveries.WithLabelValues("too_large").Inc()
		writeError(w, http.StatusRequestEntityTooLarge, transcript.ErrTypeInvalidRequest, "the message and body are over a send's message bound")
		return
	}
	if err := d.ensureSession(ctx, h, key); err != nil {
		d.refused(w, err)
		return
	}
	ttl := int32(hookReplayTTL / time.Second)
	send := &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.Namespace,
			Labels:      map[string]string{sessionsv1alpha1.HookLabel: h.Name},
			Annotations: map[string]string{sessionsv1alpha1.DeliveryIDAnnotation: id},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: sessionsv1alpha1.GroupVersion.String(), Kind: "SessionHook",
				Name: h.Name, UID: h.UID, Controller: ptrTrue()}}},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: msg, TimeoutSeconds: h.Spec.TimeoutSeconds,
			Budget: h.Spec.Budget.DeepCopy(), TTLSecondsAfterFinished: &ttl},
	}
	if err := d.Client.Create(ctx, send); err != nil {
		if apierrors.IsAlreadyExists(err) {
			d.deliveries.WithLabelValues("replayed").Inc()
			writeJSON(w, http.StatusOK, hookAccepted{Send: name, SessionKey: key})
			return
		}
		d.refused(w, err)
		return
	}
	d.deliveries.WithLabelValues("accepted").Inc()
	writeJSON(w, http.StatusAccepted, hookAccepted{Send: name, SessionKey: key})
	d.Keys.accepted(types.NamespacedName{Namespace: h.Namespace, Name: h.Name}, d.Clock.Now())
}

func ptrTrue() *bool { t := true; return &t }

// ensureSession creates the delivery's session for the hook's agent when it is new.
func (d *hookDoor) ensureSession(ctx context.Context, h *sessionsv1alpha1.SessionHook, key string) error {
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: h.Namespace},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: h.Spec.AgentID},
	}
	if err := d.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// refused answers a delivery the API server refused: the send policy, a budget or a chain
// limit (403, with the reason; the sender proved who it is), or an error (503).
func (d *hookDoor) refused(w http.ResponseWriter, err error) {
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		d.deliveries.WithLabelValues("refused").Inc()
		writeError(w, http.StatusForbidden, transcript.ErrTypeForbidden, err.Error())
		return
	}
	d.deliveries.WithLabelValues("error").Inc()
	d.Log.Error(err, "creating a hook's send")
	writeError(w, http.StatusServiceUnavailable, transcript.ErrTypeUnavailable, "the delivery could not be recorded; send it again")
}

// hookMessage is the hook's message, a blank line, then the body as text: JSON
// pretty-printed when that fits a send's message, else as it came.
func hookMessage(prefix string, body []byte) (string, bool) {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if json.Valid(body) {
		var b bytes.Buffer
		if json.Indent(&b, body, "", "  ") == nil && len(prefix)+2+b.Len() <= hookMessageMax {
			text = b.String()
		}
	}
	msg := text
	if prefix != "" {
		msg = prefix + "\n\n" + text
	}
	if strings.TrimSpace(msg) == "" {
		msg = "(empty delivery)"
	}
	return msg, len(msg) <= hookMessageMax
}
