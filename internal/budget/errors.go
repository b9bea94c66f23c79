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

package budget

import "errors"

// ErrExceeded is the error of a model call a budget refused (a send's or run tree's budget,
// or the namespace's window, is spent). Match it with errors.Is.
var ErrExceeded = errors.New("budget exceeded")

// Exceeded is the error of a call refused by a budget: why, as people read it, matching
// ErrExceeded.
func Exceeded(why string) error { return exceededError(why) }

type exceededError string

func (e exceededError) Error() string        { return string(e) }
func (e exceededError) Is(target error) bool { return target == ErrExceeded }
