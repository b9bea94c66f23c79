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

// Package docs keeps the user-facing text true to the tree: the layout in DEVELOPMENT.md
// names every Go package and only paths that exist, docs/architecture.md names only files
// that exist, every relative link of the pages resolves, the flags and metrics pages name
// every flag and metric the code defines, every metric the metrics page, the alerts and
// the dashboard name is registered by the manager or the transcript store, and the docs
// name the session-tools specification in words a reader can follow. Plain unit tests on
// the files and the programs' metric registries; no control plane.
package docs
