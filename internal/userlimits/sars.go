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

package userlimits

import (
	"context"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// ChargeSARs makes every SubjectAccessReview asked about a user take one call from that
// user's bucket before it reaches the API server (nil r: sars itself).
func ChargeSARs(sars authzclient.SubjectAccessReviewInterface, r *Rates) authzclient.SubjectAccessReviewInterface {
	if r == nil {
		return sars
	}
	return chargedSARs{SubjectAccessReviewInterface: sars, rates: r}
}

type chargedSARs struct {
	authzclient.SubjectAccessReviewInterface
	rates *Rates
}

func (c chargedSARs) Create(ctx context.Context, sar *authzv1.SubjectAccessReview, opts metav1.CreateOptions) (*authzv1.SubjectAccessReview, error) {
	if err := c.rates.Take(sar.Spec.User); err != nil {
		return nil, err
	}
	return c.SubjectAccessReviewInterface.Create(ctx, sar, opts)
}
