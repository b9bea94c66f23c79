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
	"time"
)

// APISearchPath is the internal API's search of a namespace's transcripts.
const APISearchPath = "/v1/search"

// SearchQuery is one full-text search of a namespace's transcripts.
type SearchQuery struct {
	Namespace string `json:"namespace"`
	Text      string `json:"q"`
	Limit     int    `json:"limit,omitempty"`
	Offset    int    `json:"offset,omitempty"`
	// SessionIDs, when not nil, are the only sessions searched (a caller who sees some).
	SessionIDs []string `json:"sessionIds,omitempty"`
}

// SearchHit is one matching message. Cursor is the history cursor that opens the session at
// it: the page it starts ends with this message.
type SearchHit struct {
	SessionKey      string    `json:"sessionKey"`
	SessionID       string    `json:"sessionId"`
	Seq             int64     `json:"seq"`
	MessageID       string    `json:"messageId"`
	Role            string    `json:"role"`
	TS              time.Time `json:"ts"`
	Excerpt         string    `json:"excerpt"`
	ContentRedacted bool      `json:"contentRedacted,omitempty"`
	Cursor          string    `json:"cursor"`
}

// SearchResult is a page of hits, best first. NextOffset, when not 0, asks for the next page.
type SearchResult struct {
	Hits       []SearchHit `json:"hits"`
	NextOffset int         `json:"nextOffset,omitempty"`
}

// Searcher answers searches: the index in the transcript-store, its client in the manager.
type Searcher interface {
	Search(ctx context.Context, q SearchQuery) (SearchResult, error)
}
