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

package e2e

import (
	"io"
	"net/http"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// historyGet asks the transcript-store's public API, with the bearer token when given.
func historyGet(key, token string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		cluster.HistoryURL()+"/sessions/"+url.PathEscape(key)+"/history?namespace=default", nil)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := historyClient().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var _ = Describe("the history API", func() {
	It("refuses a request without a token", func() {
		code, body := historyGet("agent:main:main", "")
		Expect(code).To(Equal(http.StatusUnauthorized), body)
	})

	It("refuses a token the API server does not know", func() {
		code, body := historyGet("agent:main:main", "not-a-token")
		Expect(code).To(Equal(http.StatusUnauthorized), body)
	})

	It("answers an unknown session with 404 not_found to an authorized reader", func() {
		code, body := historyGet("agent:nobody:main", cluster.Token)
		Expect(code).To(Equal(http.StatusNotFound), body)
		Expect(body).To(ContainSubstring(`"type":"not_found"`))
	})
})
