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

// Package memory is an Agent's long-term memory: chunks of its sessions' transcripts
// (messages, compaction summaries, optionally tool results) and the notes it wrote with
// memory_write, each with an embedding, recalled by meaning and merged with the full-text
// index by reciprocal rank fusion.
//
// It is fed like the full-text index: the store's commit hooks only queue (a bounded
// queue; what does not fit is read back from the file), and a session's mark says how far
// its transcript is indexed, so a lost or torn index is rebuilt from the JSONL files. The
// vectors are kept in memory as int8 and logged, fsynced, in one file beside the
// transcripts; the text is not: a hit's text is read back from its transcript.
//
// Search is exact: every vector of the Agent's space is scored (int8 dot products), which
// measures under the bench's goal at 100k chunks, so no approximate graph is kept.
package memory
