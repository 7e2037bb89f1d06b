package bursts

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// klogLine is one line of a Kubernetes component's log: its time of day, message and quoted
// key="value" pairs.
var (
	klogLine = regexp.MustCompile(`^[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)\s+\d+ [^\]]+\] "([^"]*)"(.*)$`)
	klogKV   = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// SchedulerLogChoices reads kube-scheduler's log at --v=5 (localcluster's SchedulerLogLevel; the
// live day's LIVEDAY_LOGS) and holds replay.PodQueue's rule to what the scheduler did, with each
// pod's failures as the log has them, where a record has only the events it kept
// (FreedSlotChoices): over the slots a pod's deletion freed while two or more pods of one
// namespace were pending and one of them took, how many the rule, first come (the first found
// unschedulable) and the newest pick right. Times are of the day: a log across midnight is
// refused.
func SchedulerLogChoices(r io.Reader) (FreedSlotChoices, error) {
	type podState struct {
		failures            int
		firstSeen, lastFail time.Duration
	}
	type move struct {
		event string
		at    time.Duration
	}
	type queued struct {
		failures int
		lastFail time.Duration
	}
	rule := replay.NewPodQueue[string](replay.SchedulerBackoff(replay.Nodes{}))

	var out FreedSlotChoices
	pods := map[string]*podState{}
	lastMove := map[string]move{}
	moved := map[move][]string{}
	at := map[move]map[string]queued{} // each pod as it stood when the event moved it
	state := func(pod string) *podState {
		if pods[pod] == nil {
			pods[pod] = &podState{}
		}
		return pods[pod]
	}
	var last time.Duration
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := klogLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		s, _ := strconv.ParseFloat(m[3], 64)
		t := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(s*float64(time.Second))
		if t < last-time.Hour {
			return out, fmt.Errorf("kube-scheduler's log goes back from %s to %s: it runs across midnight, which its times of day cannot place", last, t)
		}
		last = max(last, t)
		kv := map[string]string{}
		for _, p := range klogKV.FindAllStringSubmatch(m[5], -1) {
			kv[p[1]] = p[2]
		}
		pod := kv["pod"]
		switch m[4] {
		case "Pod moved to an internal scheduling queue":
			switch ev := kv["event"]; ev {
			case "ScheduleAttemptFailure":
				p := state(pod)
				p.failures++
				p.lastFail = t
			case "UnschedulablePodAdd":
				state(pod).firstSeen = t
			default:
				k := move{ev, t.Round(10 * time.Millisecond)}
				p := state(pod)
				lastFail := p.lastFail
				if p.failures == 0 {
					lastFail = p.firstSeen
				}
				if at[k] == nil {
					at[k] = map[string]queued{}
				}
				at[k][pod] = queued{p.failures, lastFail}
				moved[k] = append(moved[k], pod)
				lastMove[pod] = k
			}
		case "Successfully bound pod to node":
			k, ok := lastMove[pod]
			if !ok || k.event != "AssignedPodDelete" || state(pod).failures == 0 {
				continue
			}
			ns, _, _ := strings.Cut(pod, "/")
			var cands []string
			for _, c := range moved[k] {
				if cns, _, _ := strings.Cut(c, "/"); cns == ns && lastMove[c] == k && !slices.Contains(cands, c) {
					cands = append(cands, c)
				}
			}
			if len(cands) < 2 {
				continue
			}
			out.Slots++
			out.Chance += 1 / float64(len(cands))
			key := func(c string) replay.QueueKey { return rule.Key(at[k][c].failures, at[k][c].lastFail, k.at) }
			if slices.MinFunc(cands, func(a, b string) int {
				switch {
				case key(a).Before(key(b)):
					return -1
				case key(b).Before(key(a)):
					return 1
				}
				return 0
			}) == pod {
				out.Backoff++
			}
			bySeen := func(a, b string) int { return cmp.Compare(pods[a].firstSeen, pods[b].firstSeen) }
			if slices.MinFunc(cands, bySeen) == pod {
				out.Oldest++
			}
			if slices.MaxFunc(cands, bySeen) == pod {
				out.Newest++
			}
		}
	}
	return out, sc.Err()
}
