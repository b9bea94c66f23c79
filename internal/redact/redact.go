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

// Package redact masks credential-like text (API keys, bearer tokens, private keys,
// password assignments) in what a door returns of a transcript: a model or a person that
// pasted a key into a conversation must not hand it to every reader of the session.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces what was redacted.
const Mask = "[REDACTED]"

// patterns are the credential shapes, each matched whole and masked whole. An assignment
// (password=..., "api_key": "...") keeps its name and loses its value.
var (
	tokens = regexp.MustCompile(strings.Join([]string{
		`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
		`\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}`,                            // OpenAI, Anthropic
		`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`,                         // GitHub
		`\bgithub_pat_[A-Za-z0-9_]{20,}`,                                     // GitHub fine-grained
		`\bxox[abposr]-[A-Za-z0-9\-]{10,}`,                                   // Slack
		`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,                                      // AWS access key id
		`\bAIza[0-9A-Za-z_\-]{35}`,                                           // Google API key
		`\bglpat-[A-Za-z0-9_\-]{20,}`,                                        // GitLab
		`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`, // JWT
		`(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*`,
	}, "|"))
	assignment = regexp.MustCompile(`(?i)((?:api[_-]?key|secret|password|passwd|token|access[_-]?key|client[_-]?secret|auth)["']?\s*[:=]\s*["']?)([^\s"',;]{8,})`)
)

// Redact returns s with credential-like text masked, and whether anything was.
func Redact(s string) (string, bool) {
	out := tokens.ReplaceAllString(s, Mask)
	out = assignment.ReplaceAllStringFunc(out, func(m string) string {
		sub := assignment.FindStringSubmatch(m)
		if sub[2] == Mask || strings.HasPrefix(sub[2], Mask) {
			return m
		}
		return sub[1] + Mask
	})
	return out, out != s
}
