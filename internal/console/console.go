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

// Package console is the web console the transcript-store serves at / on its history
// listener: static assets embedded in the binary (no CDN), under a strict Content Security
// Policy. The page signs in with a bearer token and reads the same APIs as any client:
// /events for sessions live, /sessions/{key}/history for a transcript.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// CSP allows only this origin's own scripts, styles and fetches; no inline code, no frames.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console: / is the page, /static/ its assets; anything else is 404.
func Handler() http.Handler {
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		switch {
		case r.URL.Path == "/":
			http.ServeFileFS(w, r, sub, "index.html")
		case len(r.URL.Path) > len("/static/") && r.URL.Path[:len("/static/")] == "/static/":
			http.StripPrefix("/static", files).ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
