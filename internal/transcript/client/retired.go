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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// Retire hands the store one namespace's retired sessions' records (transcript.Retirer):
// one request for the batch, more only when its encoding is over
// transcript.MaxRetiredRequestBytes. On return recs[:n] are durable.
func (c *Client) Retire(ctx context.Context, recs ...transcript.RetiredSession) (int, error) {
	if err := transcript.ValidateRetiredBatch(recs); err != nil {
		return 0, err
	}
	done := 0
	for len(recs) > 0 {
		body, k, err := retiredBody(recs)
		if err != nil {
			return done, err
		}
		var res transcript.RetireResult
		if err := c.do(ctx, http.MethodPost, transcript.APIRetiredPath, body, &res); err != nil {
			return done, err
		}
		done += res.Retired
		if res.Full != "" {
			return done, fmt.Errorf("%w (%s)", transcript.ErrFull, res.Full)
		}
		if res.Retired != k {
			return done, fmt.Errorf("transcript-store kept %d of %d retired sessions' records and said no more", res.Retired, k)
		}
		recs = recs[k:]
	}
	return done, nil
}

// retiredBody is the RetiredList of the first k of recs whose encoding fits in
// transcript.MaxRetiredRequestBytes (at least one: a valid record is far under it).
func retiredBody(recs []transcript.RetiredSession) (json.RawMessage, int, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"sessions":[`)
	k := 0
	for _, rec := range recs {
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, 0, errors.Join(transcript.ErrInvalid, err)
		}
		if k > 0 && buf.Len()+len(b)+3 > transcript.MaxRetiredRequestBytes {
			break
		}
		if k > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
		k++
	}
	buf.WriteString(`]}`)
	return buf.Bytes(), k, nil
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
