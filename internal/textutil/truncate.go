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

// Package textutil holds the one way the tree cuts text to a limit: status fields, condition
// messages, Event notes, tool results and previews all go through Truncate. It imports only the
// standard library so every package can use it.
package textutil

import "unicode/utf8"

// Marker ends a string that Truncate cut, so a reader sees that text is missing.
const Marker = "…"

// Truncate returns s when it fits in limit bytes; otherwise its longest prefix that ends on a
// rune boundary and leaves room for Marker, followed by Marker. The result is never longer
// than limit bytes and is valid UTF-8 when s is, because Kubernetes and the API server's
// validators count bytes and refuse an over-long field forever.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit < len(Marker) {
		return Prefix(s, limit)
	}
	return Prefix(s, limit-len(Marker)) + Marker
}

// Prefix returns the longest prefix of s of at most limit bytes that ends on a rune boundary,
// for callers that write their own marker.
func Prefix(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit < 0 {
		limit = 0
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}
