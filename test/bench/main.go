// Command bench is the harness behind `make bench`: it runs every registered suite and prints
// one JSON line per figure, then a summary table. Suites live one per file in this package.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime/pprof"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Figure is one measured number. Baseline and Ratio are set for comparisons.
type Figure struct {
	Name     string   `json:"name"`
	Value    float64  `json:"value"`
	Unit     string   `json:"unit"`
	Baseline *float64 `json:"baseline,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	Target   string   `json:"target,omitempty"`
}

// Compare builds a figure that states value next to its baseline.
func Compare(name string, value, baseline float64, unit, target string) Figure {
	f := Figure{Name: name, Value: value, Unit: unit, Target: target, Baseline: &baseline}
	if baseline != 0 {
		r := value / baseline
		f.Ratio = &r
	}
	return f
}

// suite measures one area and returns its figures.
type suite struct {
	name string
	run  func() ([]Figure, error)
}

var suites []suite

// register adds a suite; each suite file calls it from init.
func register(name string, run func() ([]Figure, error)) {
	suites = append(suites, suite{name: name, run: run})
}

func main() {
	only := flag.String("run", "", "regexp selecting suites by name")
	cpuProfile := flag.String("cpuprofile", "", "write the bench process's CPU profile (the in-process suites) to this file")
	flag.Parse()
	// The webhook suite calls controller-runtime directly; its logs are not figures.
	ctrllog.SetLogger(logr.Discard())
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	re := regexp.MustCompile(*only)
	sort.Slice(suites, func(i, j int) bool { return suites[i].name < suites[j].name })

	var all []Figure
	failed := false
	enc := json.NewEncoder(os.Stdout)
	for _, s := range suites {
		if !re.MatchString(s.name) {
			continue
		}
		start := time.Now()
		figs, err := s.run()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: suite %s failed after %s: %v\n", s.name, time.Since(start).Round(time.Millisecond), err)
			failed = true
			continue
		}
		for _, f := range figs {
			_ = enc.Encode(f)
		}
		all = append(all, figs...)
	}

	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tVALUE\tUNIT\tBASELINE\tRATIO\tTARGET")
	for _, f := range all {
		base, ratio := "-", "-"
		if f.Baseline != nil {
			base = fmt.Sprintf("%.4g", *f.Baseline)
		}
		if f.Ratio != nil {
			ratio = fmt.Sprintf("%.4g", *f.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%s\t%s\n", f.Name, f.Value, f.Unit, base, ratio, f.Target)
	}
	_ = tw.Flush()
	if failed {
		pprof.StopCPUProfile() // os.Exit skips the deferred stop
		os.Exit(1)
	}
}
