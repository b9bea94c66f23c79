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

package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Retire hands the store a retired session's record; on return it is durable.
func (c *Client) Retire(ctx context.Context, r transcript.RetiredSession) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, transcript.APIRetiredPath, r, nil)
}

// RetiredSessions are the records of namespace's retired sessions q keeps (see
// transcript.RetiredQuery).
func (c *Client) RetiredSessions(ctx context.Context, namespace string, q transcript.RetiredQuery) ([]transcript.RetiredSession, error) {
	var l transcript.RetiredList
	v := q.Values()
	v.Set("namespace", namespace)
	err := c.do(ctx, http.MethodGet, transcript.APIRetiredPath+"?"+v.Encode(), nil, &l)
	return l.Sessions, err
}

// Unretire drops the record of a session that is back.
func (c *Client) Unretire(ctx context.Context, namespace, sessionID string) error {
	return c.do(ctx, http.MethodDelete, transcript.APIRetiredPath+"/"+url.PathEscape(namespace)+"/"+url.PathEscape(sessionID), nil, nil)
}

// ReadArchived reads a page of a session's archived transcript.
func (c *Client) ReadArchived(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	var p transcript.Page
	return p, c.do(ctx, http.MethodGet, sessionPath(namespace, sessionID, transcript.APIArchivedMessagesPath)+"?"+readQuery(opts).Encode(), nil, &p)
}
