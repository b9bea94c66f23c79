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

package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// postJSON POSTs body as JSON with headers and decodes the answer (bounded, whatever its
// status) into into. It returns the HTTP status and headers, 0 with a PostError when no answer came;
// an answer that is not JSON leaves into as it was (a 5xx page of a proxy).
func postJSON(ctx context.Context, c *http.Client, url string, headers http.Header, body, into any) (int, http.Header, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, nil, &PostError{Text: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, nil, &PostError{Text: err.Error()}
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, networkError(err)
	}
	defer resp.Body.Close()
	// The body is bounded by the egress client (egress.SinkLimit): a larger answer is no
	// platform's, and fails for good rather than being retried.
	raw, err := io.ReadAll(resp.Body)
	var tooLarge *egress.ReadLimitError
	switch {
	case errors.As(err, &tooLarge):
		return 0, nil, &PostError{Status: resp.StatusCode, Text: tooLarge.Error()}
	case err != nil:
		return 0, nil, networkError(err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return resp.StatusCode, resp.Header, &PostError{Status: resp.StatusCode, Text: "redirect not followed"}
	}
	if err := json.Unmarshal(raw, into); err != nil && resp.StatusCode < 300 {
		return resp.StatusCode, resp.Header, &PostError{Status: resp.StatusCode, Text: fmt.Sprintf("the answer is not the platform's JSON: %v", err)}
	}
	return resp.StatusCode, resp.Header, nil
}

// retryAfterHeader is a Retry-After header in seconds (the form the chat APIs use).
func retryAfterHeader(h http.Header) time.Duration {
	secs, err := strconv.ParseFloat(h.Get("Retry-After"), 64)
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}
