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

package turns

import (
	"context"
	"errors"
)

// ErrBudgetExceeded is the error of a turn whose budget check refused its next model call
// (a send's or run tree's budget, or the namespace's window, is spent). Match it with
// errors.Is.
var ErrBudgetExceeded = errors.New("budget exceeded")

// BudgetCheck is asked before each model call of every turn, with what the turn's earlier
// model calls used (zero before the first). A non-nil error ends the turn with it before
// the call; it should match ErrBudgetExceeded (see BudgetExceeded). The controllers
// implement it: they know the owners, their budgets and the namespace's window.
type BudgetCheck interface {
	BeforeModelCall(ctx context.Context, req *TurnRequest, used TurnResult) error
}

// UseBudget sets the engine's budget check (nil: none). Call it before the first Submit.
func (e *Engine) UseBudget(b BudgetCheck) { e.budget = b }

// checkBudget asks the budget check whether the turn may make its next model call.
func (t *turn) checkBudget(ctx context.Context) error {
	if t.e.budget == nil {
		return nil
	}
	return t.e.budget.BeforeModelCall(ctx, t.req, t.res)
}

// BudgetExceeded is the error of a turn stopped by a budget: why, as people read it, that
// matches ErrBudgetExceeded.
func BudgetExceeded(why string) error { return budgetError(why) }

type budgetError string

func (e budgetError) Error() string        { return string(e) }
func (e budgetError) Is(target error) bool { return target == ErrBudgetExceeded }
