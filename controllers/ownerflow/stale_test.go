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

package ownerflow

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestStaleReads(t *testing.T) {
	at := func(rv string) *sessionsv1alpha1.SessionSend {
		return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", ResourceVersion: rv}}
	}
	var s staleReads
	if s.stale(at("10")) {
		t.Fatal("an object never written is stale")
	}
	s.wrote(at("11"), "10") // the write turned version 10 into 11
	if !s.stale(at("10")) {
		t.Error("the replaced version read from the cache is not stale")
	}
	if !s.stale(at("10")) {
		t.Error("a second read of the replaced version is not stale")
	}
	if s.stale(at("11")) {
		t.Error("the written version is stale")
	}
	if s.stale(at("10")) {
		t.Error("once the cache caught up the mark must be gone (a later version may be anything)")
	}
	s.wrote(at("12"), "11")
	s.forget(client.ObjectKeyFromObject(at("")))
	if s.stale(at("11")) {
		t.Error("a forgotten object is stale")
	}
}
