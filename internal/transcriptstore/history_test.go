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

package transcriptstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeAuthorizer judges tokens by table: "allowed", "denied", "anonymous".
type fakeAuthorizer struct{}

func (fakeAuthorizer) Authorize(_ context.Context, token, namespace, _ string) (string, error) {
	switch token {
	case "allowed":
		return "alice", nil
	case "denied":
		return "", fmt.Errorf("%w: no access to %s", transcriptstore.ErrForbidden, namespace)
	case "anonymous":
		return "", fmt.Errorf("%w: anonymous user", transcriptstore.ErrUnauthenticated)
	}
	return "", fmt.Errorf("%w: unknown token", transcriptstore.ErrUnauthenticated)
}

type historyFixture struct {
	store *store.FileStore
	srv   *httptest.Server
	clock *clocktesting.FakeClock
}

func newHistoryFixture(t *testing.T) *historyFixture {
	t.Helper()
	f := &historyFixture{store: transcripttest.OpenStore(t, t.TempDir()), clock: clocktesting.NewFakeClock(time.Now())}
	transcripttest.CreateSession(t, f.store, "s1", "agent:a:main")
	transcripttest.AppendN(t, f.store, "s1", 30, true) // every third is a tool result
	f.srv = httptest.NewServer(transcriptstore.NewHistoryHandler(transcriptstore.HistoryOptions{
		Source: f.store, Authorizer: fakeAuthorizer{}, DefaultNamespace: transcripttest.Namespace,
		KeepAlive: time.Minute, Clock: f.clock,
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *historyFixture) get(t *testing.T, method, path, token string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func decodeJSON[T any](t *testing.T, resp *http.Response) T {
	t.Helper()
	defer resp.Body.Close()
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

var mainPath = "/sessions/" + url.PathEscape("agent:a:main") + "/history"

func TestHistoryStatusAndErrors(t *testing.T) {
	f := newHistoryFixture(t)
	cases := map[string]struct {
		method, path, token string
		wantStatus          int
		wantType            string
	}{
		"allowed by key":         {method: "GET", path: mainPath, token: "allowed", wantStatus: 200},
		"allowed by session id":  {method: "GET", path: "/sessions/s1/history", token: "allowed", wantStatus: 200},
		"escaped colons":         {method: "GET", path: "/sessions/agent%3Aa%3Amain/history", token: "allowed", wantStatus: 200},
		"unknown session":        {method: "GET", path: "/sessions/agent%3Ax%3Amain/history", token: "allowed", wantStatus: 404, wantType: transcript.ErrTypeNotFound},
		"other namespace":        {method: "GET", path: mainPath + "?namespace=team-b", token: "allowed", wantStatus: 404, wantType: transcript.ErrTypeNotFound},
		"no token":               {method: "GET", path: mainPath, wantStatus: 401, wantType: transcript.ErrTypeUnauthorized},
		"anonymous":              {method: "GET", path: mainPath, token: "anonymous", wantStatus: 401, wantType: transcript.ErrTypeUnauthorized},
		"denied":                 {method: "GET", path: mainPath, token: "denied", wantStatus: 403, wantType: transcript.ErrTypeForbidden},
		"denied unknown session": {method: "GET", path: "/sessions/nope/history", token: "denied", wantStatus: 403, wantType: transcript.ErrTypeForbidden},
		"POST":                   {method: "POST", path: mainPath, token: "allowed", wantStatus: 405, wantType: transcript.ErrTypeMethodNotAllowed},
		"DELETE":                 {method: "DELETE", path: mainPath, token: "allowed", wantStatus: 405, wantType: transcript.ErrTypeMethodNotAllowed},
		"bad cursor":             {method: "GET", path: mainPath + "?cursor=zz", token: "allowed", wantStatus: 400, wantType: transcript.ErrTypeInvalidRequest},
		"other path":             {method: "GET", path: "/sessions/s1", token: "allowed", wantStatus: 404, wantType: transcript.ErrTypeNotFound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp := f.get(t, tc.method, tc.path, tc.token)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantType == "" {
				resp.Body.Close()
				return
			}
			body := decodeJSON[transcript.ErrorBody](t, resp)
			if body.Error.Type != tc.wantType || body.Error.Message == "" {
				t.Errorf("error body %+v, want type %q with a message", body, tc.wantType)
			}
			if tc.wantStatus == 405 && resp.Header.Get("Allow") == "" {
				t.Errorf("405 without Allow header")
			}
		})
	}
}

func TestHistoryPagingAndTools(t *testing.T) {
	f := newHistoryFixture(t)
	cases := map[string]struct {
		query string
		want  []int64
	}{
		"without tools": {query: "limit=7", want: []int64{1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16, 17, 19, 20, 22, 23, 25, 26, 28, 29}},
		"with tools":    {query: "limit=7&includeTools=1", want: transcripttest.SeqRange(1, 30)},
		"from a cursor": {query: "limit=4&cursor=10", want: []int64{1, 2, 4, 5, 7, 8}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []int64
			query := tc.query
			for pages := 0; ; pages++ {
				if pages > 50 {
					t.Fatal("paging does not terminate")
				}
				resp := f.get(t, "GET", mainPath+"?"+query, "allowed")
				page := decodeJSON[transcript.HistoryResponse](t, resp)
				if page.SessionKey != "agent:a:main" || page.SessionID != "s1" || page.Namespace != transcripttest.Namespace {
					t.Fatalf("identity fields: %+v", page)
				}
				got = append(transcripttest.Seqs(page.Messages), got...)
				if !page.HasMore {
					if page.NextCursor != "" {
						t.Errorf("nextCursor %q without hasMore", page.NextCursor)
					}
					break
				}
				q, _ := url.ParseQuery(query)
				q.Set("cursor", page.NextCursor)
				query = q.Encode()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("seqs over all pages (-want +got):\n%s", diff)
			}
		})
	}
}

// sseReader reads events from a text/event-stream body.
type sseReader struct{ r *bufio.Reader }

type sseEvent struct {
	id, event, data string
	comment         string
	retry           string
}

func (s *sseReader) next(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if ev != (sseEvent{}) {
				return ev
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			ev.comment = value
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			ev.data = value
		case "retry":
			ev.retry = value
		}
	}
}

func (f *historyFixture) follow(t *testing.T, query string, hdr ...string) (*sseReader, func()) {
	t.Helper()
	resp := f.get(t, "GET", mainPath+"?"+query, "allowed", hdr...)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sseReader{r: bufio.NewReader(resp.Body)}, func() { resp.Body.Close() }
}

func TestHistorySSE(t *testing.T) {
	cases := map[string]struct {
		query    string
		hdr      []string
		wantSeqs []int64 // live message events after the snapshot
	}{
		"follow=1":          {query: "follow=1&limit=5", wantSeqs: []int64{32}},
		"accept header":     {query: "limit=5", hdr: []string{"Accept", "text/event-stream"}, wantSeqs: []int64{32}},
		"follow with tools": {query: "follow=1&limit=5&includeTools=1", wantSeqs: []int64{31, 32}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newHistoryFixture(t)
			s, done := f.follow(t, tc.query, tc.hdr...)
			defer done()
			first := s.next(t)
			if first.retry == "" {
				// retry may come as its own block before the history event
				if first.event != "history" {
					t.Fatalf("first block %+v, want retry", first)
				}
			} else if first.event == "" {
				first = s.next(t)
			}
			if first.event != "history" || first.id != "30" {
				t.Fatalf("want history event with id 30, got %+v", first)
			}
			var snap transcript.HistoryResponse
			if err := json.Unmarshal([]byte(first.data), &snap); err != nil {
				t.Fatal(err)
			}
			if len(snap.Messages) != 5 || snap.Messages[4].Seq < 29 {
				t.Errorf("snapshot seqs %v", transcripttest.Seqs(snap.Messages))
			}
			_, err := f.store.Append(context.Background(), transcripttest.Namespace, "s1", transcript.AppendRequest{Message: transcripttest.ToolResult("live tool")}, transcript.AppendRequest{Message: transcripttest.TextMessage(transcript.RoleAssistant, "live")})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantSeqs {
				ev := s.next(t)
				var rec transcript.Record
				if err := json.Unmarshal([]byte(ev.data), &rec); err != nil {
					t.Fatal(err)
				}
				if ev.event != "message" || ev.id != fmt.Sprint(want) || rec.Seq != want {
					t.Errorf("event %+v, want message seq %d", ev, want)
				}
			}
		})
	}
}

func TestHistorySSEKeepaliveAndEnd(t *testing.T) {
	f := newHistoryFixture(t)
	s, done := f.follow(t, "follow=1&limit=1")
	defer done()
	for ev := s.next(t); ev.event != "history"; {
		ev = s.next(t)
	}
	// The ticker is created before the first byte is written, so stepping now fires it.
	f.clock.Step(time.Minute)
	if ev := s.next(t); ev.comment != "keepalive" {
		t.Errorf("want keepalive comment, got %+v", ev)
	}
	if err := f.store.Archive(context.Background(), transcripttest.Namespace, "s1"); err != nil {
		t.Fatal(err)
	}
	if ev := s.next(t); ev.event != "end" {
		t.Errorf("want end event after archive, got %+v", ev)
	}
}
