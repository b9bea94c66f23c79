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

package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func newSchedulesCommand(o *options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "List the SessionSchedules: when each ticks next, and when it last sent",
		Example: `  kubectl sessions schedules
  kubectl sessions schedules -A`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list sessionsv1alpha1.SessionScheduleList
			if err := o.listStarters(cmd, all, &list); err != nil {
				return err
			}
			return printSchedules(o.streams.Out, list.Items, all, time.Now())
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the schedules of every namespace")
	return cmd
}

func newHooksCommand(o *options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "List the SessionHooks: their URL, deliveries and last delivery",
		Example: `  kubectl sessions hooks
  kubectl sessions hooks -A`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list sessionsv1alpha1.SessionHookList
			if err := o.listStarters(cmd, all, &list); err != nil {
				return err
			}
			return printHooks(o.streams.Out, list.Items, all, time.Now())
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the hooks of every namespace")
	return cmd
}

// listStarters lists schedules or hooks in the current namespace, or every one with all.
func (o *options) listStarters(cmd *cobra.Command, all bool, list client.ObjectList) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	var opts []client.ListOption
	if !all {
		opts = append(opts, client.InNamespace(ns))
	}
	return cl.List(cmd.Context(), list, opts...)
}

// printSchedules writes a table of schedules, by namespace and name.
func printSchedules(w io.Writer, items []sessionsv1alpha1.SessionSchedule, all bool, now time.Time) error {
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if all {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tTIMEZONE\tSUSPEND\tACTIVE\tLAST\tNEXT\tSESSION")
	for _, s := range items {
		if all {
			fmt.Fprintf(tw, "%s\t", s.Namespace)
		}
		tz, suspend, next := "UTC", s.Spec.Suspend != nil && *s.Spec.Suspend, "<none>"
		if s.Spec.TimeZone != nil {
			tz = *s.Spec.TimeZone
		}
		if t := s.Status.NextScheduleTime; t != nil && !suspend {
			next = "in " + duration.HumanDuration(t.Sub(now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%d\t%s\t%s\t%s\n", s.Name, s.Spec.Schedule, tz, suspend, len(s.Status.Active),
			ago(s.Status.LastScheduleTime, now), next, s.TargetKey())
	}
	return tw.Flush()
}

// printHooks writes a table of hooks, by namespace and name.
func printHooks(w io.Writer, items []sessionsv1alpha1.SessionHook, all bool, now time.Time) error {
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if all {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tAGENT\tSIGNATURE\tREADY\tDELIVERIES\tLAST DELIVERY\tURL")
	for _, h := range items {
		if all {
			fmt.Fprintf(tw, "%s\t", h.Namespace)
		}
		sig, ready := h.Spec.Signature, "Unknown"
		if sig == "" {
			sig = sessionsv1alpha1.HookSignatureStandard
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, sessionsv1alpha1.ConditionReady); c != nil {
			ready = string(c.Status)
			if c.Status != metav1.ConditionTrue {
				ready += " (" + c.Reason + ")"
			}
		}
		url := h.Status.URL
		if url == "" {
			url = "/hooks/" + h.Namespace + "/" + h.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.Spec.AgentID, sig, ready, strconv.FormatInt(h.Status.Deliveries, 10),
			ago(h.Status.LastDeliveryTime, now), url)
	}
	return tw.Flush()
}

// ago is "5m ago", or <never>.
func ago(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "<never>"
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}
