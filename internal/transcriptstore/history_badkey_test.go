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
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A malformed key is a bad request (400), a well-formed unknown key or sessionId a miss (404).
func TestHistoryMalformedKey(t *testing.T) {
	f := newHistoryFixture(t)
	cases := map[string]struct {
		path       string
		wantStatus int
		wantType   string
		wantText   string
	}{
		"empty agent id": {path: "/sessions/agent%3A%3Amain/history", wantStatus: 400, wantType: transcript.ErrTypeInvalidRequest, wantText: "agent id is empty"},
		"upper case":     {path: "/sessions/Agent%3Aa%3Amain/history", wantStatus: 400, wantType: transcript.ErrTypeInvalidRequest, wantText: "case-sensitive"},
		"well-formed":    {path: "/sessions/agent%3Ax%3Amain/history", wantStatus: 404, wantType: transcript.ErrTypeNotFound},
		// A sessionId is accepted where a key is: an unknown one is a miss, not a bad request.
		"unknown sessionId": {path: "/sessions/0b7e2a52-9c1d-4f5e-8a3b-2d6c7e8f9a01/history", wantStatus: 404, wantType: transcript.ErrTypeNotFound},
		"known sessionId":   {path: "/sessions/s1/history", wantStatus: 200},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp := f.get(t, "GET", tc.path, "allowed")
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus == 200 {
				if page := decodeJSON[transcript.HistoryResponse](t, resp); page.SessionKey != "agent:a:main" {
					t.Errorf("sessionId s1 resolved to %q, want agent:a:main", page.SessionKey)
				}
				return
			}
			body := decodeJSON[transcript.ErrorBody](t, resp)
			if body.Error.Type != tc.wantType || !strings.Contains(body.Error.Message, tc.wantText) {
				t.Errorf("error body %+v, want type %q with %q", body, tc.wantType, tc.wantText)
			}
		})
	}
}
