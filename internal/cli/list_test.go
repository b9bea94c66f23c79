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

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/console/actions"
	"github.com/agent-sessions/agent-session-operator/internal/mcpserver/mcpservertest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// kubectl sessions list --archived asks the transcript store's console action, as the
// caller, for sessions_list's archived rows: an archived session that keeps its object and
// a retired one (its object deleted by the retention, its record kept) both list, the
// STATE column telling them apart; a caller who may not list sessions is refused.
func TestListArchivedShowsRetiredSessions(t *testing.T) {
	ctx := context.Background()
	o, fc := mcpservertest.Options()
	updated := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	done := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: mcpservertest.Namespace, Name: sessionkey.ObjectName("agent:main:done")},
		Spec:       sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:done", AgentID: "main"},
		Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-done", Phase: sessionsv1alpha1.SessionArchived, Kind: sessionsv1alpha1.SessionKind("other"),
			UpdatedAt: &metav1.Time{Time: updated.Add(time.Hour)}},
	}
	if err := fc.Create(ctx, done); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	recs, err := store.OpenRetiredStore(root + "/" + store.RetiredDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recs.Retire(ctx, transcript.RetiredSession{Namespace: mcpservertest.Namespace, Name: sessionkey.ObjectName("agent:main:old"),
		SessionID: "sid-old", Key: "agent:main:old", AgentID: "main", Kind: "other", TotalTokens: 42,
		UpdatedAt: updated, ArchivedAt: updated, RetiredAt: updated.Add(7 * 24 * time.Hour), Reason: "age"}); err != nil {
		t.Fatal(err)
	}
	o.Retired = retiredRecords{recs, transcripttest.OpenStore(t, root)}
	srv := httptest.NewServer(actions.Handler(o))
	defer srv.Close()
	common := []string{"list", "--archived", "--history-url", srv.URL, "-n", mcpservertest.Namespace}

	out, stderr, code := run(t, append(common, "--token-for-history", "alice")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := [][]string{
		{"KEY", "KIND", "CHANNEL", "UPDATED", "TOKENS", "SEND", "STATE"},
		{"agent:main:done", "other", "unknown", local(updated.Add(time.Hour)), "0", "-", "archived"},
		{"agent:main:old", "other", "unknown", local(updated), "42", "-", "retired"},
	}
	if diff := cmp.Diff(want, tableFields(out)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}

	out, _, code = run(t, append(common, "--token-for-history", "alice", "-o", "json")...)
	var rows []sessionrows.SessionRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("json: exit %d, %v:\n%s", code, err, out)
	}
	got := map[string][2]bool{}
	for _, r := range rows {
		got[r.Key] = [2]bool{r.Archived, r.Retired}
	}
	if diff := cmp.Diff(map[string][2]bool{"agent:main:done": {true, false}, "agent:main:old": {true, true}}, got); diff != "" {
		t.Errorf("json rows' archived, retired (-want +got):\n%s", diff)
	}

	if _, stderr, code := run(t, append(common, "--token-for-history", "mallory")...); code == 0 || !strings.Contains(stderr, "forbidden") {
		t.Errorf("a caller who may not list sessions: exit %d, %s", code, stderr)
	}
}

// Without the transcript store's address, --archived lists what the API holds and says
// that retired sessions are left out.
func TestListArchivedWithoutTheStoreSaysSo(t *testing.T) {
	_, stderr, _ := run(t, "list", "--archived", "--kubeconfig", t.TempDir()+"/none", "-n", "team")
	if !strings.Contains(stderr, noRetired) {
		t.Errorf("stderr does not say retired sessions are left out:\n%s", stderr)
	}
}

// The table of active sessions keeps its columns; an archived list adds STATE.
func TestListTable(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rows := []sessionrows.SessionRow{
		{Key: "agent:main:main", Kind: "main", Channel: "webchat", UpdatedAt: at.UnixMilli(), TotalTokens: 7, SendPolicy: "deny"},
	}
	cases := map[string]struct {
		archived bool
		rows     []sessionrows.SessionRow
		want     [][]string
	}{
		"active": {rows: rows, want: [][]string{
			{"KEY", "KIND", "CHANNEL", "UPDATED", "TOKENS", "SEND"},
			{"agent:main:main", "main", "webchat", local(at), "7", "deny"}}},
		"archived": {archived: true, rows: []sessionrows.SessionRow{{Key: "agent:main:a", Kind: "main", UpdatedAt: at.UnixMilli(), Archived: true},
			{Key: "agent:main:r", Kind: "main", UpdatedAt: at.UnixMilli(), Archived: true, Retired: true}}, want: [][]string{
			{"KEY", "KIND", "CHANNEL", "UPDATED", "TOKENS", "SEND", "STATE"},
			{"agent:main:a", "main", local(at), "0", "-", "archived"},
			{"agent:main:r", "main", local(at), "0", "-", "retired"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printRows(&out, tc.rows, "", tc.archived); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tableFields(out.String())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// local is t as the table prints it, in the machine's zone.
func local(t time.Time) string { return time.UnixMilli(t.UnixMilli()).Format(time.RFC3339) }

// tableFields are a table's lines, each as its words (an empty cell has none).
func tableFields(out string) [][]string {
	var lines [][]string
	for l := range strings.Lines(out) {
		lines = append(lines, strings.Fields(l))
	}
	return lines
}

// retiredRecords are the store's records and archived transcripts, as the sidecar reads them.
type retiredRecords struct {
	*store.RetiredStore
	files *store.FileStore
}

func (r retiredRecords) ReadArchived(ctx context.Context, namespace, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	return r.files.ReadArchived(ctx, namespace, sessionID, opts)
}
