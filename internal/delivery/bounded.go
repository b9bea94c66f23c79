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
	"errors"
	"io"
	"net/http"
)

// maxAnswerBytes bounds what a chat platform's answer may hold: a message's JSON is a few
// KiB, so a larger answer is not one.
const maxAnswerBytes = 256 << 10

// errAnswerTooLarge is the read error of an answer over maxAnswerBytes.
var errAnswerTooLarge = errors.New("the platform's answer is over 256 KiB")

// boundedClient is c whose response bodies end with an error after max bytes, so that the
// client libraries (slack-go decodes the whole body) cannot be made to read without end.
// Local until internal/egress offers its own body-limiting transport.
func boundedClient(c *http.Client, limit int64) *http.Client {
	out := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = boundedTransport{next: next, limit: limit}
	return &out
}

type boundedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (b boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &boundedBody{rc: resp.Body, left: b.limit}
	return resp, nil
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more says whether the answer ends here or goes on.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errAnswerTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
