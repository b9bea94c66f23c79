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
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
)

// SlackAPI is the Web API's public origin.
const SlackAPI = "https://slack.com"

// slackPoster posts with the Web API's chat.postMessage (POST {apiURL}/api/chat.postMessage)
// through slack-go, which takes the API URL and the HTTP client (the egress one, bounded) as
// options. A thread is the first message's ts (thread_ts).
type slackPoster struct {
	api, token string
	http       *http.Client
}

// slackRetried are the Web API's error codes that a later attempt may not get (it answers
// them with HTTP 200 and ok false).
var slackRetried = map[string]bool{"internal_error": true, "fatal_error": true, "service_unavailable": true, "request_timeout": true}

func (s *slackPoster) Format() Format { return SlackFormat }

func (s *slackPoster) Post(ctx context.Context, m ChatMessage) (Posted, error) {
	client := slack.New(s.token, slack.OptionAPIURL(strings.TrimSuffix(s.api, "/")+"/api/"), slack.OptionHTTPClient(s.http))
	opts := []slack.MsgOption{
		// Escaped by SlackFormat already; no unfurls, no @name linking.
		slack.MsgOptionText(m.Text, false), slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(),
		slack.MsgOptionLinkNames(false),
	}
	if m.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(m.Thread))
	}
	_, ts, err := client.PostMessageContext(ctx, m.To, opts...)
	if err != nil {
		return Posted{}, slackError(err)
	}
	out := Posted{MessageID: ts, Thread: m.Thread}
	if m.StartThread && m.Thread == "" {
		out.Thread = ts
	}
	return out, nil
}

// slackError is slack-go's error as a PostError.
func slackError(err error) *PostError {
	var (
		rate   *slack.RateLimitedError
		status slack.StatusCodeError
		api    slack.SlackErrorResponse
	)
	switch {
	case errors.As(err, &rate):
		return statusError(http.StatusTooManyRequests, "ratelimited", rate.RetryAfter)
	case errors.As(err, &status):
		return statusError(status.Code, status.Status, 0)
	case errors.As(err, &api):
		return &PostError{Text: api.Err, Retry: slackRetried[api.Err]}
	}
	return networkError(err)
}
