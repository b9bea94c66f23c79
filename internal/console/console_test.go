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

package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestConsoleServesEmbeddedAssetsUnderAStrictCSP(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, contains string
		code           int
	}{
		{"/", `<script src="/static/console.js" defer>`, http.StatusOK},
		{"/static/console.js", "/events?", http.StatusOK},
		{"/static/console.css", "@media", http.StatusOK},
		{"/elsewhere", "", http.StatusNotFound},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s: %d, body has %q: %v", tc.path, resp.StatusCode, tc.contains, strings.Contains(string(body), tc.contains))
		}
		if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Security-Policy") != CSP {
			t.Errorf("%s: CSP %q", tc.path, resp.Header.Get("Content-Security-Policy"))
		}
	}
	// No inline script or style and nothing fetched from elsewhere.
	resp, _ := http.Get(srv.URL + "/")
	page, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, bad := range []string{"<script>", "<style", "style=", "http://", "https://", "onclick"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("the page holds %q, which the CSP or the no-CDN rule forbids", bad)
		}
	}
}
