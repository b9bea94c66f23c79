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

// Package search is the full-text index of the transcripts: SQLite FTS5 (through the pure-Go
// modernc.org/sqlite) in one file beside them, fed from the store's commits as they land and
// rebuilt from the JSONL files when it is missing or behind. The JSONL files stay the truth:
// the index holds no text, only postings and (session, seq) per message, so a hit's excerpt
// is read back from the transcript, and losing the index loses nothing.
package search
