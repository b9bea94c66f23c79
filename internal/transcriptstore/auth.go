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
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
)

var (
	// ErrUnauthenticated is no token, an invalid one, or an anonymous user (HTTP 401).
	ErrUnauthenticated = caller.ErrUnauthenticated
	// ErrForbidden is a user who may not read the namespace's transcripts (HTTP 403).
	ErrForbidden = errors.New("forbidden")
)

// The access the history API checks: get agentsessions/transcript in the session's namespace.
const (
	AuthVerb        = "get"
	AuthGroup       = "sessions.agents.dev"
	AuthResource    = "agentsessions"
	AuthSubresource = "transcript"
)

// Authorizer decides whether the bearer token may read the transcript of the AgentSession
// named name in namespace. It returns the token's user name, or an error wrapping
// ErrUnauthenticated or ErrForbidden, or another error when it could not decide.
type Authorizer interface {
	Authorize(ctx context.Context, token, namespace, name string) (string, error)
}

// DefaultAudience is the audience the history API asks of tokens: a token minted for it
// (kubectl create token --audience agent-sessions) cannot be replayed to the API server.
const DefaultAudience = "agent-sessions"

// KubeAuthorizer asks the API server: TokenReview for who the token is, and the access
// layer (caller.Access, SubjectAccessReviews) for what that user may do, the same layer
// /mcp and the console ask. Answers are remembered briefly because SSE clients reconnect
// often.
type KubeAuthorizer struct {
	reviewer *caller.Reviewer
	access   *caller.Access
	sars     authzclient.SubjectAccessReviewInterface
	// Audiences, when set, are required of the token.
	Audiences []string

	// decisions remembers /metrics decisions (not a right of the access layer).
	decisions *caller.Memo[decision]
	clock     clock.PassiveClock
}

type decision struct {
	user string
	err  error
}

// DecisionTTL is how long a decision is remembered.
const DecisionTTL = caller.ReviewTTL

// NewKubeAuthorizer builds the authorizer from a client config.
func NewKubeAuthorizer(cfg *rest.Config) (*KubeAuthorizer, error) {
	return NewKubeAuthorizerOn(cfg, clock.RealClock{})
}

// NewKubeAuthorizerOn is NewKubeAuthorizer remembering answers on clk.
func NewKubeAuthorizerOn(cfg *rest.Config, clk clock.PassiveClock) (*KubeAuthorizer, error) {
	authn, err := authnclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &KubeAuthorizer{
		reviewer:  &caller.Reviewer{TokenReviews: authn.TokenReviews(), Memo: caller.NewMemo[caller.Reviewed](DecisionTTL, clk)},
		access:    &caller.Access{SARs: authz.SubjectAccessReviews(), Memo: caller.NewMemo[error](DecisionTTL, clk)},
		sars:      authz.SubjectAccessReviews(),
		decisions: caller.NewMemo[decision](DecisionTTL, clk),
		clock:     clk,
	}, nil
}

// Identify names the user of a token minted for the Audiences (remembered like decisions).
func (a *KubeAuthorizer) Identify(ctx context.Context, token string) (string, error) {
	u, err := a.User(ctx, token)
	if err != nil {
		return "", err
	}
	return u.GetName(), nil
}

// User is who a token minted for the Audiences is.
func (a *KubeAuthorizer) User(ctx context.Context, token string) (user.Info, error) {
	return a.reviewer.IdentifyFor(ctx, token, a.Audiences)
}

// Access is the access layer the authorizer asks; every door of the sidecar shares it.
func (a *KubeAuthorizer) Access() *caller.Access { return a.access }

// SetTTL sets how long answers are remembered from now on (0: never).
func (a *KubeAuthorizer) SetTTL(ttl time.Duration) {
	a.reviewer.Memo = caller.NewMemo[caller.Reviewed](ttl, a.clock)
	a.access.Memo = caller.NewMemo[error](ttl, a.clock)
	a.decisions = caller.NewMemo[decision](ttl, a.clock)
}

// Authorize implements Authorizer: the access layer's ReadTranscript (get
// agentsessions/transcript) on the named session.
func (a *KubeAuthorizer) Authorize(ctx context.Context, token, namespace, name string) (string, error) {
	u, err := a.User(ctx, token)
	if err != nil {
		return "", err
	}
	if err := a.access.May(ctx, u, caller.ReadTranscript, namespace, name); err != nil {
		if apierrors.IsForbidden(err) {
			return "", fmt.Errorf("%w: %s", ErrForbidden, err.Error())
		}
		return "", err
	}
	return u.GetName(), nil
}

// AuthorizeMetrics decides whether the token may get the /metrics URL, as the manager's
// metrics filter does; the caller is Prometheus, whose token is for the API server, so no
// audience is asked of it.
func (a *KubeAuthorizer) AuthorizeMetrics(ctx context.Context, token string) (string, error) {
	return a.decide(ctx, token, authzv1.SubjectAccessReviewSpec{NonResourceAttributes: &authzv1.NonResourceAttributes{
		Path: "/metrics", Verb: "get",
	}})
}

func (a *KubeAuthorizer) decide(ctx context.Context, token string, want authzv1.SubjectAccessReviewSpec) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	key := caller.Key("\x01"+want.NonResourceAttributes.Path, token)
	if d, ok := a.decisions.Get(key); ok {
		return d.user, d.err
	}
	user, err := a.review(ctx, token, want)
	if err != nil && !errors.Is(err, ErrUnauthenticated) && !errors.Is(err, ErrForbidden) {
		return "", err // the API server could not answer: ask again next time
	}
	a.decisions.Put(key, decision{user: user, err: err})
	return user, err
}

// review asks about a non-resource URL; the token is for the API server (no audience).
func (a *KubeAuthorizer) review(ctx context.Context, token string, want authzv1.SubjectAccessReviewSpec) (string, error) {
	u, err := a.reviewer.IdentifyFor(ctx, token, nil)
	if err != nil {
		return "", err
	}
	extra := make(map[string]authzv1.ExtraValue, len(u.GetExtra()))
	for k, v := range u.GetExtra() {
		extra[k] = authzv1.ExtraValue(v)
	}
	spec := want
	spec.User, spec.UID, spec.Groups, spec.Extra = u.GetName(), u.GetUID(), u.GetGroups(), extra
	sar, err := a.sars.Create(ctx, &authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("subject access review: %w", err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		why := sar.Status.Reason
		if why == "" {
			why = "no RBAC rule allows it"
		}
		return "", fmt.Errorf("%w: user %q may not get %s: %s", ErrForbidden, u.GetName(), want.NonResourceAttributes.Path, why)
	}
	return u.GetName(), nil
}

// MetricsAuth lets through only callers whose token may get /metrics (TokenReview +
// SubjectAccessReview, as the manager's metrics filter); nil a (--insecure-no-auth) lets
// everyone through.
func MetricsAuth(a *KubeAuthorizer, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := bearerToken(r)
		_, err := a.AuthorizeMetrics(r.Context(), token)
		switch {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, ErrUnauthenticated):
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case errors.Is(err, ErrForbidden):
			http.Error(w, "Forbidden", http.StatusForbidden)
		default:
			http.Error(w, "authorization check failed", http.StatusServiceUnavailable)
		}
	})
}
