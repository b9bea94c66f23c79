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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The history follow suite's followers run in a process of their own, as real followers
// (browsers, kubectl, other Pods) do: sharing the store's Go scheduler, 1,000 reading
// goroutines would wait behind the 1,000 writing ones (the runtime polls the network only
// when its run queues are empty), which measures the harness, not the store.
//
// The protocol on the follower process's stdout: "ready" once every follower has read its
// history event; then, when the last follower has read the last message, one line per
// follower with the receive time (unix nanos) of each seq 1..messages, and a last line
// "cpu SECONDS" with the process's CPU from ready to done.

// followersFlag, when set, makes the bench binary a follower process of that URL.
const followersFlag = "sse-followers"

// runFollowers is the follower process: sseFollowers clients of url, each until it has read
// seq sseMessages.
func runFollowers(url string) error {
	const followers, messages = sseFollowers, sseMessages
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: followers, DisableCompression: true}}
	recv := make([][]int64, followers)
	errs := make(chan error, followers)
	var connected, finished sync.WaitGroup
	connected.Add(followers)
	finished.Add(followers)
	for i := range followers {
		recv[i] = make([]int64, messages+1)
		go func() {
			defer finished.Done()
			if err := follow(client, url, messages, recv[i], connected.Done); err != nil {
				errs <- err
			}
		}()
	}
	connected.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	cpu0 := processCPUSeconds(os.Getpid())
	fmt.Println("ready")
	finished.Wait()
	cpu := processCPUSeconds(os.Getpid()) - cpu0
	close(errs)
	for err := range errs {
		return err
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	for _, r := range recv {
		for seq := 1; seq <= messages; seq++ {
			if seq > 1 {
				_ = w.WriteByte(' ')
			}
			_, _ = w.WriteString(strconv.FormatInt(r[seq], 10))
		}
		_ = w.WriteByte('\n')
	}
	fmt.Fprintf(w, "cpu %g\n", cpu)
	return w.Flush()
}

// follow reads one history stream: ready is called once the history event is in (or the
// stream failed before it), then the receive time of each message event goes to recv[seq].
func follow(client *http.Client, url string, messages int, recv []int64, ready func()) error {
	once := sync.OnceFunc(ready)
	defer once()
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 16<<10)
	var id int64
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			id, _ = strconv.ParseInt(string(bytes.TrimSpace(line[4:])), 10, 64)
		case bytes.HasPrefix(line, []byte("event: history")):
			once()
		case bytes.HasPrefix(line, []byte("data: ")) && id > 0 && id <= int64(messages):
			if recv[id] == 0 {
				recv[id] = time.Now().UnixNano()
			}
			if id == int64(messages) {
				return nil
			}
		}
	}
}

// followerProcess is a started follower process, ready for the first append.
type followerProcess struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// startFollowers starts this binary as a follower process of url and waits until every
// follower is connected.
func startFollowers(url string) (*followerProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-"+followersFlag, url)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &followerProcess{cmd: cmd, out: bufio.NewReaderSize(stdout, 1<<20)}
	line, err := p.out.ReadString('\n')
	if line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("follower process: got %q before ready: %w", line, errors.Join(err, io.ErrUnexpectedEOF))
	}
	return p, nil
}

// wait reads every follower's receive times and the process's CPU seconds.
func (p *followerProcess) wait() (recv [][]int64, cpu float64, err error) {
	const followers, messages = sseFollowers, sseMessages
	defer func() {
		if werr := p.cmd.Wait(); err == nil && werr != nil {
			err = fmt.Errorf("follower process: %w", werr)
		}
	}()
	for range followers {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return nil, 0, fmt.Errorf("follower process: %w", err)
		}
		fields := strings.Fields(line)
		if len(fields) != messages {
			return nil, 0, fmt.Errorf("follower process: %d receive times on a line, want %d", len(fields), messages)
		}
		times := make([]int64, messages+1)
		for i, f := range fields {
			if times[i+1], err = strconv.ParseInt(f, 10, 64); err != nil {
				return nil, 0, fmt.Errorf("follower process: %w", err)
			}
		}
		recv = append(recv, times)
	}
	line, err := p.out.ReadString('\n')
	if _, err2 := fmt.Sscanf(line, "cpu %g\n", &cpu); err != nil || err2 != nil {
		return nil, 0, fmt.Errorf("follower process: no cpu line (%q): %w", line, errors.Join(err, err2))
	}
	return recv, cpu, nil
}
