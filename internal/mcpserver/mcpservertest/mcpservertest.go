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

// Package mcpservertest serves the MCP endpoint over a fake API for tests: tokens "alice"
// and "bob" may use every namespace, token "mallory" is refused every list and every right
// of the access layer (as RBAC would), and any other token is not accepted.
package mcpservertest

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Namespace holds the one session, agent:main:main.
const Namespace = "team"

type noTranscripts struct{}

func (noTranscripts) Read(context.Context, string, string, transcript.ReadOptions) (transcript.Page, error) {
	return transcript.Page{}, nil
}

// Handler is the endpoint and the fake API behind it.
func Handler() (http.Handler, client.WithWatch) {
	o, fc := Options()
	return mcpserver.Handler(o), fc
}

// Options are the endpoint's options over a fake API: tokens "alice", "bob" and "mallory"
// are users of those names (mallory may not list sessions), any other token is refused.
func Options() (mcpserver.Options, client.WithWatch) {
	main := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: sessionkey.ObjectName("agent:main:main")},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:main", AgentID: "main"}}
	fc := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(main).
		WithStatusSubresource(&sessionsv1alpha1.SessionSend{}).WithInterceptorFuncs(interceptor.Funcs{
		// As the API server does, every object created gets a UID (a task's id is made of it).
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetUID() == "" {
				obj.SetUID(types.UID(uuid.NewString()))
			}
			return c.Create(ctx, obj, opts...)
		}})).Build()
	refused := interceptor.NewClient(fc, interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions"}, "", errors.New("no RBAC rule"))
	}})
	return mcpserver.Options{
		Identify: func(_ context.Context, token string) (user.Info, error) {
			if token == "alice" || token == "bob" || token == "mallory" {
				return &user.DefaultInfo{Name: token}, nil
			}
			return nil, caller.ErrUnauthenticated
		},
		ClientFor: func(u user.Info) (client.WithWatch, error) {
			if u.GetName() == "mallory" {
				return refused, nil
			}
			return fc, nil
		},
		Store: noTranscripts{},
		// The access layer as RBAC would answer: alice and bob may do everything, mallory
		// nothing.
		Access: func(_ context.Context, u user.Info, attrs authzv1.ResourceAttributes) error {
			if u.GetName() == "alice" || u.GetName() == "bob" {
				return nil
			}
			return apierrors.NewForbidden(schema.GroupResource{Group: attrs.Group, Resource: attrs.Resource}, attrs.Name, errors.New("no RBAC rule"))
		},
	}, fc
}
