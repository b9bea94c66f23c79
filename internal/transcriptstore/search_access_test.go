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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// pagingIndex holds one hit per session of sids and pages them as the index does, among
// the sessions a query names; it records what it was asked.
type pagingIndex struct {
	sids  []string
	asked []transcript.SearchQuery
}

func (x *pagingIndex) Search(_ context.Context, q transcript.SearchQuery) (transcript.SearchResult, error) {
	x.asked = append(x.asked, q)
	res := transcript.SearchResult{Hits: []transcript.SearchHit{}}
	var matched []string
	for _, sid := range x.sids {
		if q.SessionIDs == nil || slices.Contains(q.SessionIDs, sid) {
			matched = append(matched, sid)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = 20
	}
	for i := q.Offset; i < len(matched) && i < q.Offset+limit; i++ {
		res.Hits = append(res.Hits, transcript.SearchHit{SessionID: matched[i], Excerpt: "secret"})
	}
	if q.Offset+limit < len(matched) {
		res.NextOffset = q.Offset + limit
	}
	return res, nil
}

// What /search pages is settled before the index is asked: a caller granted one session of
// many gets its hit and no nextOffset from the others, whatever the page size; a caller
// who may read none gets the 403 /events gives, with the index never asked, so neither the
// answer nor its timing says whether a word is in the namespace; the namespace-wide grant
// searches everything. Before, hits were filtered after paging and nextOffset told of them.
func TestSearchSettlesReadableSessionsBeforePaging(t *testing.T) {
	b := fake.NewClientBuilder().WithScheme(scheme.New())
	var sids []string
	for i := range 40 {
		key := fmt.Sprintf("agent:a:s%d", i)
		updated := metav1.NewTime(time.Date(2026, 5, 1, 12, i, 0, 0, time.UTC))
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: sessionkey.ObjectName(key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-" + key, UpdatedAt: &updated}}
		b = b.WithObjects(s)
		sids = append(sids, s.Status.SessionID)
	}
	g := newGrants()
	g.set("one", sessionkey.ObjectName("agent:a:s37"))
	g.set("old", sessionkey.ObjectName("agent:a:s2"))
	g.set("none")
	g.set("all", "*")
	ix := &pagingIndex{sids: sids}
	srv := httptest.NewServer(transcriptstore.NewSearchHandler(transcriptstore.SearchOptions{
		Index: ix, Sessions: b.Build(), Authorizer: g, DefaultNamespace: "ns", Log: logr.Discard()}))
	t.Cleanup(srv.Close)
	search := func(token, query string) (int, transcript.SearchResult) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/search?namespace=ns&q=secret"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		var res transcript.SearchResult
		_ = json.Unmarshal(body, &res)
		return resp.StatusCode, res
	}

	for _, page := range []string{"&limit=1", "&limit=1&offset=0", ""} {
		code, res := search("one", page)
		if code != http.StatusOK || len(res.Hits) != 1 || res.Hits[0].SessionID != "sid-agent:a:s37" || res.NextOffset != 0 {
			t.Errorf("one session's reader, page %q: %d %+v; want its one hit and no nextOffset", page, code, res)
		}
	}
	if code, res := search("one", "&offset=1"); code != http.StatusOK || len(res.Hits) != 0 || res.NextOffset != 0 {
		t.Errorf("one session's reader past its hit: %d %+v; want an empty page", code, res)
	}
	asked := len(ix.asked)
	if code, _ := search("none", "&limit=1"); code != http.StatusForbidden {
		t.Errorf("a caller who reads nothing: %d, want 403", code)
	}
	if len(ix.asked) != asked {
		t.Errorf("the index was asked for a caller who reads nothing")
	}
	// A reader of a session older than the MaxSearchScan newest is let in, as /events lets it
	// in, and finds nothing: what it searches is what it may read among those.
	if code, res := search("old", ""); code != http.StatusOK || len(res.Hits) != 0 || res.NextOffset != 0 {
		t.Errorf("an older session's reader: %d %+v; want 200 and an empty page", code, res)
	}
	if code, res := search("all", "&limit=1"); code != http.StatusOK || len(res.Hits) != 1 || res.NextOffset != 1 || ix.asked[len(ix.asked)-1].SessionIDs != nil {
		t.Errorf("the namespace-wide reader: %d %+v; want a page of the whole namespace", code, res)
	}
	// The sessions asked one by one are bounded, however many the namespace holds.
	g.asked = nil
	search("one", "")
	if n := len(g.asked); n > sessiontools.MaxSearchScan+1+100 {
		t.Errorf("%d access reviews for one search, want at most MaxSearchScan and the /events admission's", n)
	}
}
