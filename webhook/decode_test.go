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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// seen is a validator that records what it was given and answers err.
type seen struct {
	err      error
	old, obj *sessionsv1alpha1.SessionSend
	op       string
}

func (s *seen) ValidateCreate(_ context.Context, obj *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	s.op, s.obj = "create", obj
	return admission.Warnings{"w"}, s.err
}

func (s *seen) ValidateUpdate(_ context.Context, old, obj *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	s.op, s.old, s.obj = "update", old, obj
	return nil, s.err
}

func (s *seen) ValidateDelete(_ context.Context, obj *sessionsv1alpha1.SessionSend) (admission.Warnings, error) {
	s.op, s.obj = "delete", obj
	return nil, s.err
}

func newSeen(err error) *seen { return &seen{err: err} }

func rawSend(kind, key string) runtime.RawExtension {
	raw, _ := json.Marshal(map[string]any{"apiVersion": sessionsv1alpha1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": "s", "namespace": "b", "labels": map[string]string{"a": "1"}, "annotations": map[string]string{"n": "42"}},
		"spec":     map[string]any{"sessionKey": key, "message": "ping", "fromSessionKey": "agent:main:main", "cancel": key == "k2", "unknownField": 1}})
	return runtime.RawExtension{Raw: raw}
}

func reviewBody(apiVersion string, req admissionv1.AdmissionRequest) []byte {
	b, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "AdmissionReview", "request": req})
	return b
}

// serve posts body to h and returns the HTTP status and the decoded review's response.
func serve(t *testing.T, h http.Handler, body []byte, contentType string) (int, *admissionv1.AdmissionResponse, metav1.TypeMeta) {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	h.ServeHTTP(w, r)
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &ar); err != nil || ar.Response == nil {
		t.Fatalf("answer %q: %v", w.Body.String(), err)
	}
	return w.Code, ar.Response, ar.TypeMeta
}

// The SessionSend webhook decodes the review and the object once each, with
// sigs.k8s.io/json, where controller-runtime's handler goes through the universal
// deserializer: every review gets the same answer, and the validator the same objects.
func TestSessionSendDecodeAnswersAsControllerRuntime(t *testing.T) {
	sendKind := metav1.GroupVersionKind{Group: sessionsv1alpha1.GroupVersion.Group, Version: sessionsv1alpha1.GroupVersion.Version, Kind: "SessionSend"}
	create := admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create, Kind: sendKind, Object: rawSend("SessionSend", "k1")}
	update := admissionv1.AdmissionRequest{UID: "u2", Operation: admissionv1.Update, Kind: sendKind, Object: rawSend("SessionSend", "k2"), OldObject: rawSend("SessionSend", "k1")}
	del := admissionv1.AdmissionRequest{UID: "u3", Operation: admissionv1.Delete, Kind: sendKind, OldObject: rawSend("SessionSend", "k1")}
	wrongKind := admissionv1.AdmissionRequest{UID: "u4", Operation: admissionv1.Create, Kind: sendKind, Object: rawSend("AgentSession", "k1")}
	noObject := admissionv1.AdmissionRequest{UID: "u5", Operation: admissionv1.Create, Kind: sendKind}
	badOp := admissionv1.AdmissionRequest{UID: "u6", Operation: "PATCH", Kind: sendKind, Object: rawSend("SessionSend", "k1")}
	forbidden := apierrors.NewForbidden(sessionsv1alpha1.GroupVersion.WithResource("sessionsends").GroupResource(), "s", errors.New("no"))
	for name, tc := range map[string]struct {
		body        []byte
		contentType string
		err         error
		wantCode    int32 // the answer's result code
		wantOp      string
	}{
		"create, allowed":                   {body: reviewBody("admission.k8s.io/v1", create), wantCode: http.StatusOK, wantOp: "create"},
		"create, forbidden with a status":   {body: reviewBody("admission.k8s.io/v1", create), err: forbidden, wantCode: http.StatusForbidden, wantOp: "create"},
		"create, denied with a plain error": {body: reviewBody("admission.k8s.io/v1", create), err: errors.New("plain"), wantCode: http.StatusForbidden, wantOp: "create"},
		"update, both objects":              {body: reviewBody("admission.k8s.io/v1", update), wantCode: http.StatusOK, wantOp: "update"},
		"delete, the old object":            {body: reviewBody("admission.k8s.io/v1", del), wantCode: http.StatusOK, wantOp: "delete"},
		"an object of another kind":         {body: reviewBody("admission.k8s.io/v1", wrongKind), wantCode: http.StatusBadRequest},
		"no object":                         {body: reviewBody("admission.k8s.io/v1", noObject), wantCode: http.StatusBadRequest},
		"an unknown operation":              {body: reviewBody("admission.k8s.io/v1", badOp), wantCode: http.StatusBadRequest},
		"not JSON":                          {body: []byte(`{"apiVersion":`), wantCode: http.StatusBadRequest},
		"another content type":              {body: reviewBody("admission.k8s.io/v1", create), contentType: "application/yaml", wantCode: http.StatusBadRequest},
		"over the size bound":               {body: append(reviewBody("admission.k8s.io/v1", create), bytes.Repeat([]byte(" "), maxReviewBytes)...), wantCode: http.StatusRequestEntityTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			ours, theirs := newSeen(tc.err), newSeen(tc.err)
			gotStatus, got, typ := serve(t, reviewDecoder{withTypedValidator(sessionsv1alpha1.GroupVersion.WithKind("SessionSend"), func() *sessionsv1alpha1.SessionSend { return &sessionsv1alpha1.SessionSend{} }, ours)}, tc.body, ct)
			wantStatus, want, _ := serve(t, admission.WithValidator[*sessionsv1alpha1.SessionSend](scheme.New(), theirs), tc.body, ct)
			if gotStatus != http.StatusOK || wantStatus != http.StatusOK {
				t.Errorf("HTTP status %d, controller-runtime's %d, want 200 (the answer is in the review)", gotStatus, wantStatus)
			}
			if typ.APIVersion != "admission.k8s.io/v1" || typ.Kind != "AdmissionReview" {
				t.Errorf("answer's type %q %q, want an admission.k8s.io/v1 AdmissionReview", typ.APIVersion, typ.Kind)
			}
			if code := got.Result.Code; code != tc.wantCode || got.Allowed != (tc.wantCode == http.StatusOK) {
				t.Errorf("answer allowed=%v code %d, want code %d", got.Allowed, code, tc.wantCode)
			}
			if tc.wantCode == http.StatusBadRequest || tc.wantCode == http.StatusRequestEntityTooLarge {
				// Both refuse; their decoders word the reason each their own way.
				got.Result.Message, want.Result.Message = "", ""
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("answer differs from controller-runtime's (-theirs +ours):\n%s", d)
			}
			if d := cmp.Diff([]any{theirs.op, theirs.old, theirs.obj}, []any{ours.op, ours.old, ours.obj}); d != "" {
				t.Errorf("the validator was given other objects (-theirs +ours):\n%s", d)
			}
			if ours.op != tc.wantOp {
				t.Errorf("validator called for %q, want %q", ours.op, tc.wantOp)
			}
		})
	}
}

// Only the review version the webhook configurations name is taken (controller-runtime's
// handler also reads v1beta1 ones).
func TestSessionSendDecodeRefusesOtherReviewVersions(t *testing.T) {
	req := admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Object: rawSend("SessionSend", "k1")}
	v := newSeen(nil)
	h := reviewDecoder{withTypedValidator(sessionsv1alpha1.GroupVersion.WithKind("SessionSend"), func() *sessionsv1alpha1.SessionSend { return &sessionsv1alpha1.SessionSend{} }, v)}
	for _, body := range [][]byte{reviewBody("admission.k8s.io/v1beta1", req), []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`)} {
		if _, res, _ := serve(t, h, body, "application/json"); res.Allowed || res.Result == nil || res.Result.Code != http.StatusBadRequest {
			t.Errorf("%s: answer %+v, want a 400", body, res)
		}
	}
	if v.op != "" {
		t.Errorf("the validator was called (%s)", v.op)
	}
}

// One admission allocates less than through controller-runtime's handler: the review and
// the object are each parsed once.
func TestSessionSendDecodeAllocatesLessThanTheUniversalDeserializer(t *testing.T) {
	body := reviewBody("admission.k8s.io/v1", admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Object: rawSend("SessionSend", "k1")})
	allocs := func(h http.Handler) float64 {
		return testing.AllocsPerRun(50, func() {
			r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), r)
		})
	}
	ours := allocs(reviewDecoder{withTypedValidator(sessionsv1alpha1.GroupVersion.WithKind("SessionSend"), func() *sessionsv1alpha1.SessionSend { return &sessionsv1alpha1.SessionSend{} }, newSeen(nil))})
	theirs := allocs(admission.WithValidator[*sessionsv1alpha1.SessionSend](scheme.New(), newSeen(nil)))
	if ours > theirs-15 {
		t.Errorf("one admission allocates %.0f times, controller-runtime's handler %.0f: want at least 15 fewer", ours, theirs)
	}
	if !strings.Contains(string(body), `"kind":"SessionSend"`) {
		t.Fatal("the review carries no SessionSend")
	}
}
