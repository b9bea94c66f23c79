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

// Package caller turns a bearer token into the user it belongs to (TokenReview) and builds
// API clients that act as that user (impersonation with the user's name, uid, groups and
// extra), so that RBAC and the admission webhook judge the caller, not the server that
// relays its request. The MCP endpoint and the console use it for every call they make on
// a caller's behalf.
package caller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ErrUnauthenticated is no token, an invalid one, or an anonymous user (HTTP 401).
var ErrUnauthenticated = errors.New("unauthenticated")

// Reviewer asks the API server who a token is.
type Reviewer struct {
	TokenReviews authnclient.TokenReviewInterface
	// Audiences, when set, are required of the token.
	Audiences []string
	// Memo, when set, remembers answers: a client's burst of requests costs one review, and
	// a revoked token is refused within the Memo's TTL (the API server's own token webhook
	// cache keeps answers for two minutes).
	Memo *Memo[Reviewed]
}

// Reviewed is a remembered TokenReview: the user, or why the token was refused.
type Reviewed struct {
	User user.Info
	Err  error
}

// ReviewTTL is how long a NewReviewer remembers who a token is.
const ReviewTTL = 10 * time.Second

// NewReviewer builds a Reviewer from a client config that remembers answers for ReviewTTL.
func NewReviewer(cfg *rest.Config, audiences ...string) (*Reviewer, error) {
	c, err := authnclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Reviewer{TokenReviews: c.TokenReviews(), Audiences: audiences,
		Memo: NewMemo[Reviewed](ReviewTTL, clock.RealClock{})}, nil
}

// Identify reviews the token with the Reviewer's audiences.
func (r *Reviewer) Identify(ctx context.Context, token string) (user.Info, error) {
	return r.IdentifyFor(ctx, token, r.Audiences)
}

// IdentifyFor reviews the token asking for audiences (none: the API server's own). It
// returns an error wrapping ErrUnauthenticated for a missing, refused or anonymous token.
func (r *Reviewer) IdentifyFor(ctx context.Context, token string, audiences []string) (user.Info, error) {
	if token == "" {
		return nil, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	key := Key(append(slices.Clone(audiences), "", token)...)
	if seen, ok := r.Memo.Get(key); ok {
		return seen.User, seen.Err
	}
	u, err := r.review(ctx, token, audiences)
	if err == nil || errors.Is(err, ErrUnauthenticated) {
		r.Memo.Put(key, Reviewed{User: u, Err: err})
	}
	return u, err
}

// review asks the API server once.
func (r *Reviewer) review(ctx context.Context, token string, audiences []string) (user.Info, error) {
	tr, err := r.TokenReviews.Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: audiences},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token review: %w", err)
	}
	if !tr.Status.Authenticated {
		msg := tr.Status.Error
		if msg == "" {
			msg = "token not accepted"
		}
		return nil, fmt.Errorf("%w: %s", ErrUnauthenticated, msg)
	}
	u := tr.Status.User
	if u.Username == user.Anonymous || slices.Contains(u.Groups, user.AllUnauthenticated) {
		return nil, fmt.Errorf("%w: anonymous user", ErrUnauthenticated)
	}
	extra := make(map[string][]string, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}, nil
}

// Config is base acting as u: every request carries u's name, uid, groups and extra as
// impersonation, so the API server authorizes and admits it as u. base's own identity
// needs only the right to impersonate. A ServiceAccount is impersonated by its name alone:
// the API server derives its groups, and refuses uid, groups or extra in that mode.
func Config(base *rest.Config, u user.Info) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
	if _, _, err := serviceaccount.SplitUsername(u.GetName()); err == nil {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: u.GetName()}
	}
	return cfg
}

// Factory builds clients acting as callers. They share one REST mapper (discovery is done
// once, with base's identity); each gets its own impersonating transport.
type Factory struct {
	base   *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// Limit, when set, is the rate limiter of u's calls, shared by all of u's clients
	// (otherwise each client would get a fresh bucket of base's rate).
	Limit func(user string) flowcontrol.RateLimiter
}

// NewFactory returns a Factory over base.
func NewFactory(base *rest.Config, scheme *runtime.Scheme) (*Factory, error) {
	hc, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, err
	}
	m, err := apiutil.NewDynamicRESTMapper(base, hc)
	if err != nil {
		return nil, err
	}
	return &Factory{base: base, scheme: scheme, mapper: m}, nil
}

// Client is a controller-runtime client (with watch) acting as u.
func (f *Factory) Client(u user.Info) (client.WithWatch, error) {
	cfg := Config(f.base, u)
	if f.Limit != nil {
		cfg.RateLimiter = f.Limit(u.GetName())
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: f.scheme, Mapper: f.mapper})
}
