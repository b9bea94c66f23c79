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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is what the bench reads of a process from /proc/<pid>/stat.
type procStat struct {
	comm       string
	ppid       int
	cpuSeconds float64 // utime + stime
	zombie     bool    // exited, not yet reaped: a restarted API server's old process
}

func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold spaces; fields follow it.
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procStat{}, false
	}
	f := strings.Fields(s[closing+2:])
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return procStat{comm: s[open+1 : closing], ppid: ppid, cpuSeconds: (ut + st) / 100, zombie: f[0] == "Z"}, true
}

// processCPUSeconds is utime+stime of pid (clock ticks of 1/100 s), 0 when it is gone.
func processCPUSeconds(pid int) float64 {
	st, _ := readProcStat(pid)
	return st.cpuSeconds
}

// clusterCPU is the CPU seconds used so far by this process and each process it started
// (kube-apiserver, etcd, manager, transcript-store), by command name.
func clusterCPU() map[string]float64 {
	self := os.Getpid()
	out := map[string]float64{"bench": processCPUSeconds(self)}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.ppid == self {
			out[st.comm] += st.cpuSeconds
		}
	}
	return out
}

// childPID is the id of the first process this one started with command name comm, 0 when
// none runs (kube-apiserver and etcd, which devcluster starts through envtest).
func childPID(comm string) int {
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.ppid == self && st.comm == comm && !st.zombie {
			return pid
		}
	}
	return 0
}

// cpuSince is the CPU seconds each process used since before, and their sum under "total".
func cpuSince(before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for name, v := range clusterCPU() {
		out[name] = v - before[name]
		out["total"] += out[name]
	}
	return out
}

func processRSSMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}
