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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kjson "sigs.k8s.io/json"
)

// typedValidator is admission.WithValidator's handler with a cheaper decode of the object
// in the review: the object's JSON is unmarshalled straight into T with sigs.k8s.io/json
// (case-sensitive, as the API machinery's own JSON serializer reads it), where the universal
// deserializer first parses the whole object once more to find its apiVersion and kind.
// The result is the same: that deserializer neither defaults nor converts. The object must
// name kind (the only one the webhook is installed for), or the request is refused.
type typedValidator[T runtime.Object] struct {
	validator admission.Validator[T]
	kind      schema.GroupVersionKind
	new       func() T
}

// withTypedValidator is admission.WithValidator for the one kind gvk, decoding with
// decodeTyped.
func withTypedValidator[T runtime.Object](gvk schema.GroupVersionKind, newObj func() T, v admission.Validator[T]) *admission.Webhook {
	return &admission.Webhook{Handler: &typedValidator[T]{validator: v, kind: gvk, new: newObj}}
}

// Handle implements admission.Handler as controller-runtime's validator handler does.
func (h *typedValidator[T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	ctx = admission.NewContextWithRequest(ctx, req)
	obj := h.new()
	var (
		warnings admission.Warnings
		err      error
	)
	switch req.Operation {
	case admissionv1.Connect:
	case admissionv1.Create:
		if err := decodeTyped(req.Object, h.kind, obj); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		warnings, err = h.validator.ValidateCreate(ctx, obj)
	case admissionv1.Update:
		old := h.new()
		if err := errors.Join(decodeTyped(req.Object, h.kind, obj), decodeTyped(req.OldObject, h.kind, old)); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		warnings, err = h.validator.ValidateUpdate(ctx, old, obj)
	case admissionv1.Delete:
		if err := decodeTyped(req.OldObject, h.kind, obj); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		warnings, err = h.validator.ValidateDelete(ctx, obj)
	default:
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("unknown operation %q", req.Operation))
	}
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			res := status.Status()
			return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Result: &res}}.WithWarnings(warnings...)
		}
		return admission.Denied(err.Error()).WithWarnings(warnings...)
	}
	return admission.Allowed("").WithWarnings(warnings...)
}

// decodeTyped unmarshals raw into obj, which must then name gvk.
func decodeTyped(raw runtime.RawExtension, gvk schema.GroupVersionKind, obj runtime.Object) error {
	if len(raw.Raw) == 0 {
		return errors.New("there is no content to decode")
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw.Raw, obj); err != nil {
		return err
	}
	if got := obj.GetObjectKind().GroupVersionKind(); got != gvk {
		return fmt.Errorf("the object is %s, this webhook judges %s only", got, gvk)
	}
	return nil
}

// maxReviewBytes bounds an AdmissionReview read from the API server (controller-runtime's
// bound): an object of the API server's largest (3 MiB) and its old version on update.
const maxReviewBytes = 7 << 20

// reviewDecoder serves an admission.Webhook as its own ServeHTTP does, but decodes the
// AdmissionReview in one pass with sigs.k8s.io/json, where the universal deserializer
// first parses the whole review (the object in it included) once more to find its
// apiVersion and kind. It takes admission.k8s.io/v1 reviews only: the one version the
// webhook configurations name (admissionReviewVersions=v1).
type reviewDecoder struct{ *admission.Webhook }

func (h reviewDecoder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ar, status, err := readReview(r)
	if err != nil {
		writeReview(w, admission.Errored(status, err))
		return
	}
	// Handle completes the response (the request's UID) and recovers a panic.
	writeReview(w, h.Handle(r.Context(), admission.Request{AdmissionRequest: *ar.Request}))
}

// readReview reads and decodes a review, or says why not with the status to answer.
func readReview(r *http.Request) (*admissionv1.AdmissionReview, int32, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, http.StatusBadRequest, errors.New("request body is empty")
	}
	defer func() { _ = r.Body.Close() }()
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return nil, http.StatusBadRequest, fmt.Errorf("contentType=%s, expected application/json", ct)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if len(body) > maxReviewBytes {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", maxReviewBytes)
	}
	ar := &admissionv1.AdmissionReview{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, ar); err != nil {
		return nil, http.StatusBadRequest, err
	}
	if gvk := ar.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") || ar.Request == nil {
		return nil, http.StatusBadRequest, fmt.Errorf("want an %s AdmissionReview with a request, got %s", admissionv1.SchemeGroupVersion, gvk)
	}
	return ar, 0, nil
}

func writeReview(w http.ResponseWriter, res admission.Response) {
	ar := admissionv1.AdmissionReview{Response: &res.AdmissionResponse}
	ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(ar); err != nil {
		ctrl.Log.WithName("admission").Error(err, "unable to encode and write the response")
	}
}
