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

package benchfig

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A figure's target, as the bench prints it beside the figure, is a check when it starts
// with a bound: "< 100 (...)", ">= 20000 (...)", "ratio <= 2.5 (...)" (the figure's ratio to
// its baseline measured in the same run), or "0: ..." (exactly that value). Anything else is
// a description and checks nothing.
var targetRe = regexp.MustCompile(`^\s*(ratio\s+)?(<=|>=|<|>|≤|≥)\s*×?\s*([0-9][0-9,]*(?:\.[0-9]+)?)|^\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*:`)

// Verdict is a figure held to its target.
type Verdict struct {
	Figure Figure
	// Checked is false for a target that states no bound.
	Checked bool
	// Met says the figure (or its ratio) is within the bound.
	Met bool
	// Bound is the bound as read, e.g. "ratio <= 2.5".
	Bound string
}

// Check holds f to the bound its target states.
func Check(f Figure) Verdict {
	v := Verdict{Figure: f}
	m := targetRe.FindStringSubmatch(f.Target)
	if m == nil {
		return v
	}
	if m[4] != "" { // "N: ..." is exactly N
		want, err := strconv.ParseFloat(strings.ReplaceAll(m[4], ",", ""), 64)
		if err != nil {
			return v
		}
		v.Checked, v.Met, v.Bound = true, f.Value == want, "= "+m[4]
		return v
	}
	bound, err := strconv.ParseFloat(strings.ReplaceAll(m[3], ",", ""), 64)
	if err != nil {
		return v
	}
	op := map[string]string{"≤": "<=", "≥": ">="}[m[2]]
	if op == "" {
		op = m[2]
	}
	value := f.Value
	v.Bound = op + " " + m[3]
	if m[1] != "" {
		v.Bound = "ratio " + v.Bound
		if f.Ratio == nil { // no baseline measured: the check cannot pass
			v.Checked = true
			return v
		}
		value = *f.Ratio
	}
	v.Checked = true
	switch op {
	case "<":
		v.Met = value < bound
	case "<=":
		v.Met = value <= bound
	case ">":
		v.Met = value > bound
	case ">=":
		v.Met = value >= bound
	}
	return v
}

// CheckTable writes each figure's verdict, the checked ones first, and says whether every
// checked figure met its target.
func CheckTable(w io.Writer, all []Figure) bool {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tFIGURE\tVALUE\tRATIO\tBOUND")
	ok := true
	var unchecked []string
	for _, f := range all {
		v := Check(f)
		if !v.Checked {
			unchecked = append(unchecked, f.Name)
			continue
		}
		verdict := "ok"
		if !v.Met {
			verdict, ok = "MISSED", false
		}
		ratio := spread(f)
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\n", verdict, f.Name, f.Value, ratio, v.Bound)
	}
	_ = tw.Flush()
	if len(unchecked) > 0 {
		fmt.Fprintf(w, "not checked (no bound in the target): %s\n", strings.Join(unchecked, ", "))
	}
	return ok
}
