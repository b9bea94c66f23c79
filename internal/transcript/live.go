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

package transcript

import (
	"context"
	"slices"
)

// LiveLister lists the live (not archived) transcripts a store holds: the manager's orphan
// sweep archives those whose session is gone (controllers/agentsession/orphans.go).
type LiveLister interface {
	// LiveNamespaces are the namespaces with at least one live transcript, in order.
	LiveNamespaces(ctx context.Context) ([]string, error)
	// LiveSessionIDs are the sessionIds of namespace's live transcripts after the sessionId
	// after ("" from the first), in order, at most limit of them (ClampLivePage): a page
	// shorter than its limit is the last.
	LiveSessionIDs(ctx context.Context, namespace, after string, limit int) ([]string, error)
}

// APILivePath is the internal API of the live transcripts: GET ?namespace=&after=&limit=
// lists a page of a namespace's sessionIds (LiveList), GET without a namespace lists the
// namespaces (LiveList.Namespaces).
const APILivePath = "/v1/live"

// MaxLivePage bounds one page of sessionIds, and DefaultLivePage is a page's size when the
// request names none: a page of 1,000 UUIDs is about 40 KB of JSON.
const (
	MaxLivePage     = 1000
	DefaultLivePage = 1000
)

// LiveList is the answer to GET APILivePath: a page of sessionIds, or the namespaces.
type LiveList struct {
	Namespaces []string `json:"namespaces,omitempty"`
	SessionIDs []string `json:"sessionIds,omitempty"`
}

// ClampLivePage is limit within (0, MaxLivePage]; <= 0 is DefaultLivePage.
func ClampLivePage(limit int) int {
	if limit <= 0 {
		return DefaultLivePage
	}
	return min(limit, MaxLivePage)
}

// LivePage is the page of ids after after, at most limit (clamped) of them, in order; ids
// need not be sorted and are reordered.
func LivePage(ids []string, after string, limit int) []string {
	ids = slices.DeleteFunc(ids, func(id string) bool { return id <= after })
	slices.Sort(ids)
	return ids[:min(len(ids), ClampLivePage(limit))]
}
