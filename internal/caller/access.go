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

package caller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// Access asks the API server whether a user may do something (SubjectAccessReview) and
// remembers the answer for ReviewTTL. A server that answers reads from its own cache only
// after Access allows the read, so the caller gets what RBAC would give it from the API
// server, at the cost of a map lookup.
type Access struct {
	SARs authzclient.SubjectAccessReviewInterface
	Memo *Memo[error]
}

// NewAccess builds an Access from a client config that remembers answers for ReviewTTL on
// clk (tests step a fake one past a revocation).
func NewAccess(cfg *rest.Config, clk clock.PassiveClock) (*Access, error) {
	c, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Access{SARs: c.SubjectAccessReviews(), Memo: NewMemo[error](ReviewTTL, clk)}, nil
}

// Check returns nil when u may do attrs, a Forbidden API error (as the API server would have
// answered) when not, and any other error when the review could not be made.
func (a *Access) Check(ctx context.Context, u user.Info, attrs authzv1.ResourceAttributes) error {
	key := Key(userKey(u), attrs.Verb, attrs.Group, attrs.Resource, attrs.Subresource, attrs.Namespace, attrs.Name)
	if err, ok := a.Memo.Get(key); ok {
		return err
	}
	extra := make(map[string]authzv1.ExtraValue, len(u.GetExtra()))
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	sar, err := a.SARs.Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra, ResourceAttributes: &attrs,
	}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("subject access review: %w", err)
	}
	if sar.Status.Allowed && !sar.Status.Denied {
		a.Memo.Put(key, nil)
		return nil
	}
	why := sar.Status.Reason
	if why == "" {
		why = "no RBAC rule allows it"
	}
	what := attrs.Resource
	if attrs.Subresource != "" {
		what += "/" + attrs.Subresource
	}
	denied := apierrors.NewForbidden(schema.GroupResource{Group: attrs.Group, Resource: attrs.Resource}, attrs.Name,
		fmt.Errorf("user %q cannot %s %s in the namespace %q: %s", u.GetName(), attrs.Verb, what, attrs.Namespace, why))
	a.Memo.Put(key, denied)
	return denied
}

// userKey is every part of u an authorizer may look at.
func userKey(u user.Info) string {
	var b strings.Builder
	b.WriteString(u.GetName() + "\x00" + u.GetUID() + "\x00" + strings.Join(u.GetGroups(), "\x01") + "\x00")
	keys := make([]string, 0, len(u.GetExtra()))
	for k := range u.GetExtra() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + "\x02" + strings.Join(u.GetExtra()[k], "\x01") + "\x00")
	}
	return b.String()
}
