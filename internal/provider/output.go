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

package provider

import "unicode/utf8"

// MaxOutputText bounds the text of one model answer, whatever the provider: the size of the
// largest message a user may send (SessionSend spec.message), so a reply fits wherever a
// message does, and an amplifying script or a hostile endpoint cannot grow a transcript
// record, a status write or the manager's heap without bound.
const MaxOutputText = 256 << 10

// capOutput cuts an over-long answer at a rune boundary and marks it cut off for length.
func capOutput(r *Response) {
	if len(r.Text) <= MaxOutputText {
		return
	}
	n := MaxOutputText
	for n > 0 && !utf8.RuneStart(r.Text[n]) {
		n--
	}
	r.Text = r.Text[:n]
	r.StopReason = StopReasonLength
}
