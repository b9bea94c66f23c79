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
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteStatus is every controller's one way to write the status of the object it owns:
// obj's status as this reconcile changed it from base (a copy taken before the first
// change), as one update of the status subresource, which carries obj's resourceVersion.
// A status computed from a stale cache read is refused with a conflict, which the reconcile
// returns and requeueConflicts turns into a quiet requeue, rather than dropping a condition
// it did not see. An update, not a merge patch: the API server applies it without building
// and merging a patch, which on the send's path cost about a tenth more CPU per send
// (docs/operations/scaling.md). Nothing is sent when the status did not change, and no
// object is read first. It says whether a write landed; on error obj is unchanged on the
// server, and the Events and counts that follow a write must not be emitted.
func WriteStatus[T client.Object](ctx context.Context, c client.Client, base, obj T) (bool, error) {
	if equality.Semantic.DeepEqual(statusOf(base), statusOf(obj)) {
		return false, nil
	}
	if err := c.Status().Update(ctx, obj); err != nil {
		return false, err
	}
	return true, nil
}

// statusOf is a pointer to obj's Status field (every kind of the API has one).
func statusOf(obj client.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Addr().Interface()
}
