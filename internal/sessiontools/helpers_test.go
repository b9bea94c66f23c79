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

package sessiontools

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

const ns = "team"

// newFakeClient is a fake client with the API types, the status subresources and the
// manager's field indexes, holding objs.
func newFakeClient(objs ...client.Object) client.WithWatch {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(sessionsv1alpha1.AddToScheme(s))
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&sessionsv1alpha1.AgentSession{}, &sessionsv1alpha1.SessionSend{}, &sessionsv1alpha1.SubagentRun{})
	return testenv.IndexFake(b).Build()
}

// session is an AgentSession named as the session controller names them, with a sessionId.
func session(key, agentID, sessionID string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: agentID},
		Status:     sessionsv1alpha1.AgentSessionStatus{SessionID: sessionID, Phase: sessionsv1alpha1.SessionActive},
	}
}
