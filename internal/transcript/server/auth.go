package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

var (
	// ErrUnauthenticated: no token, an invalid one, or an anonymous user (HTTP 401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the user may not read the namespace's transcripts (HTTP 403).
	ErrForbidden = errors.New("forbidden")
)

// The access the history API checks: get agentsessions/transcript in the session's namespace.
const (
	AuthVerb        = "get"
	AuthGroup       = "sessions.agents.dev"
	AuthResource    = "agentsessions"
	AuthSubresource = "transcript"
)

// Authorizer decides whether the bearer token may read transcripts in namespace. It returns
// nil, an error wrapping ErrUnauthenticated or ErrForbidden, or another error when it could
// not decide.
type Authorizer interface {
	Authorize(ctx context.Context, token, namespace string) error
}

// KubeAuthorizer asks the API server: TokenReview for who the token is, SubjectAccessReview for
// what that user may do. Decisions are cached briefly because SSE clients reconnect often.
type KubeAuthorizer struct {
	tokenReviews authnclient.TokenReviewInterface
	sars         authzclient.SubjectAccessReviewInterface
	// Audiences, when set, are required of the token.
	Audiences []string
	TTL       time.Duration
	Clock     clock.PassiveClock

	mu    sync.Mutex
	cache map[[32]byte]cachedDecision
}

type cachedDecision struct {
	err     error
	expires time.Time
}

const maxCachedDecisions = 10000

// NewKubeAuthorizer builds the authorizer from a client config.
func NewKubeAuthorizer(cfg *rest.Config) (*KubeAuthorizer, error) {
	authn, err := authnclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &KubeAuthorizer{
		tokenReviews: authn.TokenReviews(), sars: authz.SubjectAccessReviews(),
		TTL: 10 * time.Second, Clock: clock.RealClock{}, cache: map[[32]byte]cachedDecision{},
	}, nil
}

// Authorize implements Authorizer.
func (a *KubeAuthorizer) Authorize(ctx context.Context, token, namespace string) error {
	if token == "" {
		return fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	key := sha256.Sum256([]byte(namespace + "\x00" + token))
	now := a.Clock.Now()
	a.mu.Lock()
	if d, ok := a.cache[key]; ok && now.Before(d.expires) {
		a.mu.Unlock()
		return d.err
	}
	a.mu.Unlock()

	err := a.review(ctx, token, namespace)
	if err != nil && !errors.Is(err, ErrUnauthenticated) && !errors.Is(err, ErrForbidden) {
		return err // the API server could not answer: ask again next time
	}
	a.mu.Lock()
	if len(a.cache) >= maxCachedDecisions {
		clear(a.cache)
	}
	a.cache[key] = cachedDecision{err: err, expires: now.Add(a.TTL)}
	a.mu.Unlock()
	return err
}

func (a *KubeAuthorizer) review(ctx context.Context, token, namespace string) error {
	tr, err := a.tokenReviews.Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: a.Audiences},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token review: %w", err)
	}
	if !tr.Status.Authenticated {
		msg := tr.Status.Error
		if msg == "" {
			msg = "token not accepted"
		}
		return fmt.Errorf("%w: %s", ErrUnauthenticated, msg)
	}
	u := tr.Status.User
	if u.Username == "system:anonymous" || slices.Contains(u.Groups, "system:unauthenticated") {
		return fmt.Errorf("%w: anonymous user", ErrUnauthenticated)
	}
	extra := make(map[string]authzv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := a.sars.Create(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{
			User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
			ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: namespace, Verb: AuthVerb, Group: AuthGroup,
				Resource: AuthResource, Subresource: AuthSubresource,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("subject access review: %w", err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		why := sar.Status.Reason
		if why == "" {
			why = "no RBAC rule allows it"
		}
		return fmt.Errorf("%w: user %q may not get %s/%s in namespace %q: %s", ErrForbidden, u.Username, AuthResource, AuthSubresource, namespace, why)
	}
	return nil
}
