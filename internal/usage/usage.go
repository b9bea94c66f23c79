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

// Package usage prices model usage and adds it up: pure functions on exact integers (a cost
// is kept in nano-units of its currency, 1e-9), so sums over thousands of turns do not drift
// as float sums would.
package usage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Nano is one billionth of a currency unit.
const nanosPerUnit = 1_000_000_000

// Turn is what one turn used and, when its Agent has a price, what it cost.
type Turn struct {
	Input, Output, CachedInput int64
	// CostNanos is set when Currency is: the turn was priced.
	CostNanos int64
	Currency  string
}

// Price prices a turn's tokens with p (nil: not priced). Cached input tokens are part of
// input; they are priced at the cached price when one is set.
func Price(p *sessionsv1alpha1.Pricing, input, output, cachedInput int64) (Turn, error) {
	t := Turn{Input: input, Output: output, CachedInput: cachedInput}
	if p == nil {
		return t, nil
	}
	in, err := ParseNanos(p.InputPerMillion)
	if err != nil {
		return t, fmt.Errorf("pricing.inputPerMillion: %w", err)
	}
	out, err := ParseNanos(p.OutputPerMillion)
	if err != nil {
		return t, fmt.Errorf("pricing.outputPerMillion: %w", err)
	}
	cached := in
	if p.CachedInputPerMillion != "" {
		if cached, err = ParseNanos(p.CachedInputPerMillion); err != nil {
			return t, fmt.Errorf("pricing.cachedInputPerMillion: %w", err)
		}
	}
	cachedInput = min(max(cachedInput, 0), input)
	// Prices are per million tokens: nanos per token = price nanos / 1e6. Multiply first,
	// divide once, so small turns are not rounded to zero one by one.
	t.CostNanos = ((input-cachedInput)*in + cachedInput*cached + output*out) / 1_000_000
	t.Currency = p.Currency
	if t.Currency == "" {
		t.Currency = "USD"
	}
	return t, nil
}

// Add adds a turn to u (nil makes a new Usage) and returns it.
func Add(u *sessionsv1alpha1.Usage, t Turn) *sessionsv1alpha1.Usage {
	if u == nil {
		u = &sessionsv1alpha1.Usage{}
	}
	u.InputTokens += t.Input
	u.OutputTokens += t.Output
	u.CachedInputTokens += t.CachedInput
	u.Turns++
	addCost(u, t.CostNanos, t.Currency)
	return u
}

// Merge adds the usage of another object (a child run's) to u and returns it.
func Merge(u, other *sessionsv1alpha1.Usage) *sessionsv1alpha1.Usage {
	if other == nil {
		return u
	}
	if u == nil {
		u = &sessionsv1alpha1.Usage{}
	}
	u.InputTokens += other.InputTokens
	u.OutputTokens += other.OutputTokens
	u.CachedInputTokens += other.CachedInputTokens
	u.Turns += other.Turns
	if other.Cost != "" {
		n, err := ParseNanos(other.Cost)
		if err == nil {
			addCost(u, n, other.Currency)
		}
	}
	return u
}

// addCost adds nanos in currency. Costs in different currencies are not added up: the
// first currency stays and a later one marks the cost "mixed" (a namespace prices its
// Agents in one currency; the metrics keep each one).
func addCost(u *sessionsv1alpha1.Usage, nanos int64, currency string) {
	if currency == "" {
		return
	}
	switch {
	case u.Currency == "":
		u.Currency, u.Cost = currency, FormatNanos(nanos)
	case u.Currency == currency && u.Cost != Mixed:
		have, _ := ParseNanos(u.Cost)
		u.Cost = FormatNanos(have + nanos)
	default:
		u.Cost = Mixed
	}
}

// Mixed is the cost of usage priced in more than one currency.
const Mixed = "mixed"

// ParseNanos reads a non-negative decimal with at most 9 fractional digits ("" is 0).
func ParseNanos(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 9 || strings.HasPrefix(whole, "-") || strings.HasPrefix(whole, "+") {
		return 0, errors.New("want a decimal like 3 or 0.075 (at most 9 decimals)")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 9_000_000_000 {
		return 0, errors.New("want a decimal like 3 or 0.075 (at most 9 decimals)")
	}
	var f int64
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil || f < 0 {
			return 0, errors.New("want a decimal like 3 or 0.075 (at most 9 decimals)")
		}
	}
	return w*nanosPerUnit + f, nil
}

// FormatNanos writes nanos as a decimal without trailing zeros ("0.0105", "3", "0").
func FormatNanos(n int64) string {
	s := strconv.FormatInt(n/nanosPerUnit, 10)
	if frac := n % nanosPerUnit; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return s
}
