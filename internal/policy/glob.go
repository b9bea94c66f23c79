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

package policy

import (
	"fmt"
	"path"
	"regexp"
)

// MatchAny reports whether id matches one of the globs (shell patterns: *, ?, [..]).
// Invalid patterns never match; ValidateGlob reports them at admission.
func MatchAny(globs []string, id string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, id); err == nil && ok {
			return true
		}
	}
	return false
}

// ValidateGlob reports a pattern that cannot be matched.
func ValidateGlob(g string) error {
	if g == "" {
		return fmt.Errorf("empty pattern")
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("pattern %q: %w", g, err)
	}
	return nil
}

// ValidateRegexp reports an RE2 expression that does not compile (scripted provider rules).
func ValidateRegexp(expr string) error {
	_, err := regexp.Compile(expr)
	return err
}
