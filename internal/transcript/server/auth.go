package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
)

var (
	// ErrUnauthenticated: no token, an invalid one, or an anonymous user (HTTP 401).
	ErrUnauthenticated = caller.ErrUnauthenticated
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

// Authorizer decides whether the bearer token may read the transcript of the AgentSession
// named name in namespace. It returns the token's user name, or an error wrapping
// ErrUnauthenticated or ErrForbidden, or another error when it could not decide.
type Authorizer interface {
	Authorize(ctx context.Context, token, namespace, name string) (string, error)
}

// DefaultAudience is the audience the history API asks of tokens: a token minted for it
// (kubectl create token --audience agent-sessions) cannot be replayed to the API server.
const DefaultAudience = "agent-sessions"

// KubeAuthorizer asks the API server: TokenReview for who the token is, SubjectAccessReview for
// what that user may do. Decisions are remembered briefly because SSE clients reconnect often.
type KubeAuthorizer struct {
	reviewer *caller.Reviewer
	sars     authzclient.SubjectAccessReviewInterface
	// Audiences, when set, are required of the token.
	Audiences []string

	decisions *caller.Memo[decision]
}

type decision struct {
	user string
	err  error
}

// DecisionTTL is how long a decision is remembered.
const DecisionTTL = 10 * time.Second

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
		reviewer:  &caller.Reviewer{TokenReviews: authn.TokenReviews(), Memo: caller.NewMemo[caller.Reviewed](DecisionTTL, clock.RealClock{})},
		sars:      authz.SubjectAccessReviews(),
		decisions: caller.NewMemo[decision](DecisionTTL, clock.RealClock{}),
	}, nil
}

// Identify names the user of a token minted for the Audiences (remembered like decisions).
func (a *KubeAuthorizer) Identify(ctx context.Context, token string) (string, error) {
	u, err := a.reviewer.IdentifyFor(ctx, token, a.Audiences)
	if err != nil {
		return "", err
	}
	return u.GetName(), nil
}

// SetTTL sets how long decisions are remembered from now on (0: never).
func (a *KubeAuthorizer) SetTTL(ttl time.Duration) {
	a.decisions = caller.NewMemo[decision](ttl, clock.RealClock{})
}

// Authorize implements Authorizer: get agentsessions/transcript on the named session.
func (a *KubeAuthorizer) Authorize(ctx context.Context, token, namespace, name string) (string, error) {
	return a.decide(ctx, token, authzv1.SubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
		Namespace: namespace, Name: name, Verb: AuthVerb, Group: AuthGroup, Resource: AuthResource, Subresource: AuthSubresource,
	}})
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
	var what string
	if want.NonResourceAttributes == nil {
		r := want.ResourceAttributes
		what = r.Namespace + "\x00" + r.Name
	} else {
		what = "\x01" + want.NonResourceAttributes.Path
	}
	key := caller.Key(what, token)
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

func (a *KubeAuthorizer) review(ctx context.Context, token string, want authzv1.SubjectAccessReviewSpec) (string, error) {
	audiences := a.Audiences
	if want.NonResourceAttributes != nil {
		audiences = nil
	}
	u, err := a.reviewer.IdentifyFor(ctx, token, audiences)
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
		if r := want.ResourceAttributes; r != nil {
			return "", fmt.Errorf("%w: user %q may not get %s/%s %q in namespace %q: %s", ErrForbidden, u.GetName(), AuthResource, AuthSubresource, r.Name, r.Namespace, why)
		}
		return "", fmt.Errorf("%w: user %q may not get %s: %s", ErrForbidden, u.GetName(), want.NonResourceAttributes.Path, why)
	}
	return u.GetName(), nil
}
