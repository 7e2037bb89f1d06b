package bursts

// A live day takes 41 minutes of control planes; the model's side of it takes a second. The
// record keeps what the cluster did and counted on one live day (the claims as the harness
// really created and deleted them, the pool's spec.replicas, the nodes, the figures), so the
// model can be held to that day again, after every change to the model, without a cluster.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// LiveDayRecord is one live day as the cluster ran it.
type LiveDayRecord struct {
	// Date the day ran (YYYY-MM-DD), for the docs.
	Date string `json:"date"`
	// The nodes as the live day ran them: K sandboxes per node, the launch delay and
	// consolidateAfter. What Karpenter adds (its batch window, its disruption delay and budget)
	// is the model's to replay: replay.AutoModeNodes.
	SlotsPerNode     int           `json:"slotsPerNode"`
	LaunchDelay      time.Duration `json:"launchDelay"`
	ConsolidateAfter time.Duration `json:"consolidateAfter"`
	// Wall places the day on the wall clock (its start past a whole second), where the API
	// server's whole seconds decide a boot's end and a claim's grace; none in a record older
	// than it.
	Wall *replay.WallClock `json:"wall,omitempty"`
	Rows []RecordedRow     `json:"rows"`
}

// RecordedRow is one setting's pool on one family's day.
type RecordedRow struct {
	Family  string      `json:"family"`
	Seed    uint64      `json:"seed"`
	Setting LiveSetting `json:"setting"`
	// Trace is the claims the harness really created, at the times it created and deleted them
	// (LiveTrace), from the day's start.
	Trace    string           `json:"trace"`
	Duration time.Duration    `json:"duration"`
	Claims   []replay.Arrival `json:"claims"`
	// InitialScale is the live pool's spec.replicas at rest when the day began.
	InitialScale int `json:"initialScale"`
	// Live is what the cluster counted; LiveSpec and LiveNodes the pool's spec.replicas and the
	// NodePool's nodes over the day.
	Live      LiveFigures `json:"live"`
	LiveSpec  []Step      `json:"liveSpec"`
	LiveNodes []Step      `json:"liveNodes"`
	// Outcomes are the live claims one by one, in Claims' order (none in a record older than
	// them).
	Outcomes []ClaimOutcome `json:"outcomes,omitempty"`
	// Reads are KEDA's reads of the pool's exporter, as its tap recorded them (none for a fixed
	// pool, or in a record older than the tap): the HPA's syncs are among them.
	Reads []DemandRead `json:"reads,omitempty"`
	// LiveReady and LiveBooting are the pool's unheld sandboxes, Ready and not yet, over the day;
	// LiveBoots each boot that ended in it (At when the sandbox became Ready, Value the seconds
	// since it was first seen). None in a record older than them.
	LiveReady   []Step `json:"liveReady,omitempty"`
	LiveBooting []Step `json:"liveBooting,omitempty"`
	LiveBoots   []Step `json:"liveBoots,omitempty"`
	// LivePods is the pool's pods (PodTimes); none in a record older than them.
	LivePods []PodTimes `json:"livePods,omitempty"`
	// Wall places the row's day on the wall clock where it ran on a control plane of its own
	// (each family does); none: the record's.
	Wall *replay.WallClock `json:"wall,omitempty"`
}

// trace is the row's claims as a trace the model replays.
func (r RecordedRow) trace() *replay.Trace {
	return &replay.Trace{Name: r.Trace, Duration: r.Duration, Arrivals: r.Claims}
}

// Replayed is the model's replay of the row, with the program's default HPA behaviour, the
// pool at rest where the live one was and, unless loop names its own, the HPA syncing when the
// live one did (HPASyncs) on what the exporter served it there (Served).
func (r RecordedRow) Replayed(loop replay.Loop) (replay.Result, error) {
	m, err := r.Setting.ModelPolicy()
	if err != nil {
		return replay.Result{}, err
	}
	if m.Fixed == 0 && r.InitialScale > 0 {
		m.InitialScale = r.InitialScale
	}
	if loop.Syncs == nil {
		loop.Syncs = r.HPASyncs()
	}
	if loop.Served == nil {
		loop.Served = r.Served()
	}
	if r.Wall != nil {
		loop.Wall = r.Wall
	}
	return replay.Simulate(r.trace(), m, loop, r.Seed), nil
}

// Served is what the exporter served at each of KEDA's evaluations (its first read's counts),
// keyed by the evaluation's time: the HPA's syncs at an evaluation decide on these (none for a
// record without reads).
func (r RecordedRow) Served() map[time.Duration]replay.Demand {
	if len(r.Reads) == 0 {
		return nil
	}
	out := map[time.Duration]replay.Demand{}
	for _, rd := range r.evaluationReads() {
		out[rd.At] = replay.Demand{Held: int(rd.Held), ArrivalsShort: int(rd.Short), ArrivalsLong: int(rd.Long)}
	}
	return out
}

// specReadLead is how long before the harness saw spec.replicas change the exporter counted
// what the HPA then wrote: KEDA's adapter asks the exporter once per trigger, each a list of the
// claims, the HPA writes the scale, the watch delivers it. Not read from the cluster: it is
// where the recorded days' changes line up with the model's reads (docs/bursts.md, "The live
// day": 400 to 700 ms give the same figures on 9 of the 10 autoscaled rows).
const specReadLead = 500 * time.Millisecond

// liveClaimReady is a warm claim's create to Ready on the live day (agent-sandbox's claim
// controller adopts, the harness's watch sees it): the median of the p95 waits of the recorded
// day's rows on which every claim was warm (0.5 to 0.8 s; 1.3 to 1.8 s on the record before it).
const liveClaimReady = 600 * time.Millisecond

// Loop is the model's loop on the nodes the day ran on, with a claim's Ready as the live day saw
// it.
func (rec LiveDayRecord) Loop() replay.Loop {
	loop := replay.DefaultLoop()
	loop.Nodes = replay.AutoModeNodes(rec.SlotsPerNode, rec.LaunchDelay, rec.ConsolidateAfter)
	loop.ClaimReady = liveClaimReady
	loop.AdoptRetry = liveAdoptRetry
	loop.Wall = rec.Wall
	loop.CreateLag = liveCreateLag
	return loop
}

// liveCreateLag is a warm claim's create to the pool's new sandbox on the live day (the claim
// controller adopts, the warm pool controller creates a Sandbox, the harness's watch sees it):
// the median of the fixed pools' CreateLags on the record that keeps the booting sandboxes
// (0.16 to 0.22 s per row, TestCreateLagIsTheRecordsMedian), which the model's 100 ms steps
// take as 200 ms.
const liveCreateLag = 200 * time.Millisecond

// CreateLags are, on a fixed pool's row, each warm claim's create to the first new unheld
// sandbox the harness saw after it (the pool's replacement of the one the claim took; a fixed
// pool creates no other), within createLagLimit; none for an autoscaled pool (the HPA's changes
// create sandboxes too) or a record without the booting sandboxes.
func (r RecordedRow) CreateLags() []time.Duration {
	if m, err := r.Setting.ModelPolicy(); err != nil || m.Fixed == 0 || len(r.LiveBooting) == 0 || len(r.Outcomes) != len(r.Claims) {
		return nil
	}
	var created []time.Duration // each rise of the booting count: a new sandbox seen
	for i := 1; i < len(r.LiveBooting); i++ {
		for range int(r.LiveBooting[i].Value - r.LiveBooting[i-1].Value) {
			created = append(created, r.LiveBooting[i].At)
		}
	}
	var out []time.Duration
	next := 0
	for i, c := range r.Claims {
		if !r.Outcomes[i].Warm {
			continue
		}
		for next < len(created) && created[next] < c.At {
			next++
		}
		if next < len(created) && created[next]-c.At <= createLagLimit {
			out = append(out, created[next]-c.At)
			next++
		}
	}
	return out
}

// createLagLimit bounds a claim's create to its replacement: a later new sandbox replaces
// another claim's.
const createLagLimit = 3 * time.Second

// liveAdoptRetry is how often agent-sandbox v0.5.6's claim controller looks again for a warm
// sandbox during a claim's grace (warmCandidateRetryInterval).
const liveAdoptRetry = 500 * time.Millisecond

// evaluationGap bounds the time between the reads of one KEDA evaluation (one per trigger,
// asked one after the other); readsBeforeChange how long before the harness saw spec.replicas
// change the HPA's read may have come (the adapter's answer, the HPA's write, the pool's, the
// watch); evaluationSnap how far from a sync's spread time a read is taken as that sync's.
const (
	evaluationGap     = 300 * time.Millisecond
	readsBeforeChange = 3 * time.Second
	evaluationSnap    = time.Second
)

// Evaluations are when KEDA evaluated the row's ScaledObject, each at its first read of the
// exporter (the tap's reads gathered: one per trigger, within evaluationGap); none for a record
// without reads. The HPA's syncs are among them, and so are the reads of KEDA's own polling loop.
func (r RecordedRow) Evaluations() []time.Duration {
	var out []time.Duration
	for _, rd := range r.evaluationReads() {
		out = append(out, rd.At)
	}
	return out
}

// evaluationReads are the first read of each of KEDA's evaluations.
func (r RecordedRow) evaluationReads() []DemandRead {
	var out []DemandRead
	last := time.Duration(-1)
	for _, rd := range r.Reads {
		if last < 0 || rd.At-last > evaluationGap {
			out = append(out, rd)
		}
		last = rd.At
	}
	return out
}

// HPASyncs are when the row's HPA synced, up to its last change of spec.replicas: each change
// is one of its syncs, read at KEDA's last evaluation before the change was seen (within
// readsBeforeChange) or, in a record without reads, specReadLead before it; between two changes
// the syncs are spread evenly, as many as fit at the row's period; before the first they run back
// from it at that period; a spread sync is moved to the evaluation within evaluationSnap of it,
// if there is one. The period is the median of the short gaps between changes over the syncs
// each spans: the HPA controller requeues an HPA its period after a sync ends, so each sync's
// own time (more on a loaded machine) slows the clock. None with no change.
func (r RecordedRow) HPASyncs() []time.Duration {
	evals := r.Evaluations()
	// nearest is the evaluation closest to at within [at-before, at+after]; ok false: none.
	nearest := func(at, before, after time.Duration) (time.Duration, bool) {
		best, ok := time.Duration(0), false
		for _, e := range evals {
			if e >= at-before && e <= at+after && (!ok || absDuration(e-at) < absDuration(best-at)) {
				best, ok = e, true
			}
		}
		return best, ok
	}
	var changes []time.Duration
	for _, s := range r.LiveSpec {
		if s.At <= 0 {
			continue
		}
		read := s.At - specReadLead
		if e, ok := nearest(s.At, readsBeforeChange, 0); ok {
			read = e
		}
		changes = append(changes, read)
	}
	snap := func(at time.Duration) time.Duration {
		if e, ok := nearest(at, evaluationSnap, evaluationSnap); ok {
			return e
		}
		return at
	}
	if len(changes) == 0 {
		return nil
	}
	period := replay.HPASyncPeriod
	var periods []time.Duration
	for i := 1; i < len(changes); i++ {
		if gap := changes[i] - changes[i-1]; gap < 8*replay.HPASyncPeriod {
			if n := math.Round(float64(gap) / float64(replay.HPASyncPeriod)); n >= 1 {
				periods = append(periods, time.Duration(float64(gap)/n))
			}
		}
	}
	if len(periods) > 0 {
		slices.Sort(periods)
		period = periods[len(periods)/2]
	}
	var syncs []time.Duration
	for at := changes[0] - period; at > 0; at -= period {
		syncs = append(syncs, snap(at))
	}
	slices.Reverse(syncs)
	syncs = append(syncs, changes[0])
	for i := 1; i < len(changes); i++ {
		gap := changes[i] - changes[i-1]
		n := max(math.Round(float64(gap)/float64(period)), 1)
		for k := 1.0; k < n; k++ {
			syncs = append(syncs, snap(changes[i-1]+time.Duration(k*float64(gap)/n)))
		}
		syncs = append(syncs, changes[i])
	}
	return syncs
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// Judged holds the model to every row: each row live beside the model's replay of it, and the
// replays in the same order.
func (rec LiveDayRecord) Judged() ([]LiveDayRow, []replay.Result, error) { return rec.JudgedBy(nil) }

// JudgedBy is Judged with the model's nodes changed by nodes (nil: as the record's Loop has them),
// to judge a variant of the model on the same record (first come, first bound: no PodBackoff).
func (rec LiveDayRecord) JudgedBy(nodes func(replay.Nodes) replay.Nodes) ([]LiveDayRow, []replay.Result, error) {
	loop := rec.Loop()
	if nodes != nil {
		loop.Nodes = nodes(loop.Nodes)
	}
	var rows []LiveDayRow
	var results []replay.Result
	for i, r := range rec.Rows {
		l := loop
		l.Nodes.SharedTriggers = rec.SharedTriggers(i)
		l.Nodes.SharedRequeues = rec.SharedRequeues(i)
		res, err := r.Replayed(l)
		if err != nil {
			return nil, nil, fmt.Errorf("%s day, seed %d, %s: %w", r.Family, r.Seed, r.Setting.Name, err)
		}
		rows = append(rows, LiveDayRow{Family: r.Family, Seed: r.Seed, Setting: r.Setting, Claims: len(r.Claims),
			Live: r.Live, Model: ModelFigures(res)})
		results = append(results, res)
	}
	return rows, results, nil
}

// SharedTriggers are when the pods of the rows that ran beside row i, on its control plane and
// so under its Karpenter, were found unschedulable, sorted: the model's Karpenter keeps the
// row's batch window open for them as the live one did (replay.Nodes.SharedTriggers). None for
// a record without the pods' times.
func (rec LiveDayRecord) SharedTriggers(i int) []time.Duration {
	var out []time.Duration
	for j, r := range rec.Rows {
		if j == i || !r.ranBeside(rec.Rows[i]) {
			continue
		}
		for _, p := range r.LivePods {
			if p.Unschedulable > 0 {
				out = append(out, p.Unschedulable)
			}
		}
	}
	slices.Sort(out)
	return out
}

// SharedRequeues are when the rows that ran beside row i made its scheduler try its pending pods
// again, sorted: each of their pods that left its node, and each of their nodes as it took its
// first pod (its Ready; the record keeps no node's own times). None for a record without the
// pods' times.
func (rec LiveDayRecord) SharedRequeues(i int) []time.Duration {
	var out []time.Duration
	for j, r := range rec.Rows {
		if j == i || !r.ranBeside(rec.Rows[i]) {
			continue
		}
		first := map[string]time.Duration{}
		for _, p := range r.LivePods {
			if p.Bound <= 0 || p.Node == "" {
				continue
			}
			if p.Gone > 0 {
				out = append(out, p.Gone)
			}
			if f, ok := first[p.Node]; !ok || p.Bound < f {
				first[p.Node] = p.Bound
			}
		}
		for _, at := range first {
			out = append(out, at)
		}
	}
	slices.Sort(out)
	return out
}

// ranBeside reports whether r and o ran on one control plane: both on the record's (no Wall of
// their own), or both in one family's round (one family at a time, each row with its round's
// Wall).
func (r RecordedRow) ranBeside(o RecordedRow) bool {
	if r.Wall == nil || o.Wall == nil {
		return r.Wall == nil && o.Wall == nil
	}
	return r.Family == o.Family
}

// Series is what the timeline picture draws of the row beside the model's replay res.
func (r RecordedRow) Series(res replay.Result) LiveDaySeries {
	s := LiveDaySeries{Claims: DemandSteps(r.trace()), LiveSpec: r.LiveSpec, LiveNodes: r.LiveNodes}
	for _, z := range res.Sizes {
		s.ModelSpec = append(s.ModelSpec, Step{At: z.At, Value: float64(z.Replicas)})
	}
	for _, n := range res.NodeCounts {
		s.ModelNodes = append(s.ModelNodes, Step{At: n.At, Value: float64(n.Nodes)})
	}
	return s
}

// WriteLiveDayRecord writes rec to path as indented JSON.
func WriteLiveDayRecord(path string, rec LiveDayRecord) error {
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadLiveDayRecord reads a record WriteLiveDayRecord wrote, and refuses one the model cannot
// replay.
func ReadLiveDayRecord(path string) (LiveDayRecord, error) {
	var rec LiveDayRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: not a live day record: %w", path, err)
	}
	if rec.SlotsPerNode < 1 || rec.LaunchDelay < 0 || rec.ConsolidateAfter < 0 || len(rec.Rows) == 0 {
		return rec, fmt.Errorf("%s: a live day record needs slotsPerNode >= 1, launchDelay and consolidateAfter >= 0 and at least one row", path)
	}
	for i, r := range rec.Rows {
		if len(r.Claims) == 0 {
			return rec, fmt.Errorf("%s: row %d (%s day, seed %d, %s) holds no claims", path, i+1, r.Family, r.Seed, r.Setting.Name)
		}
	}
	return rec, nil
}

// ClaimApart is one claim that found a warm sandbox on one side only: live or in the model.
type ClaimApart struct {
	// Index is the claim's place in the row's Claims (by creation); At its creation.
	Index int
	At    time.Duration
	Live  ClaimOutcome
	// ModelWarm and ModelWait are the model's outcome for the same claim.
	ModelWarm bool
	ModelWait time.Duration
}

// ClaimsApart are the row's claims that were warm live and cold in the model's replay res, or
// the other way round (none for a record without Outcomes).
func (r RecordedRow) ClaimsApart(res replay.Result) []ClaimApart {
	if len(r.Outcomes) != len(r.Claims) || len(res.Warm) != len(r.Claims) {
		return nil
	}
	var out []ClaimApart
	for i, o := range r.Outcomes {
		if o.Warm != res.Warm[i] {
			out = append(out, ClaimApart{Index: i, At: r.Claims[i].At, Live: o, ModelWarm: res.Warm[i], ModelWait: res.Waits[i]})
		}
	}
	return out
}

// PoolSizeApart is how far the model's pool size parts from the live one over [0, end): the
// integral of |model spec.replicas - live spec.replicas| over the integral of the live one.
// 0: the same size throughout.
func (r RecordedRow) PoolSizeApart(res replay.Result, end time.Duration) float64 {
	// The two step functions' change points, merged; between two points both are constant.
	live, model := r.LiveSpec, res.Sizes
	valueAt := func(t time.Duration) (l, m float64) {
		for _, s := range live {
			if s.At <= t {
				l = s.Value
			}
		}
		for _, s := range model {
			if s.At <= t {
				m = float64(s.Replicas)
			}
		}
		return l, m
	}
	points := []time.Duration{0, end}
	for _, s := range live {
		points = append(points, s.At)
	}
	for _, s := range model {
		points = append(points, s.At)
	}
	slices.Sort(points)
	var apart, total float64
	for i := 0; i+1 < len(points) && points[i] < end; i++ {
		from, to := max(points[i], 0), min(points[i+1], end)
		if to <= from {
			continue
		}
		l, m := valueAt(from)
		apart += math.Abs(m-l) * (to - from).Seconds()
		total += l * (to - from).Seconds()
	}
	if total == 0 {
		return 0
	}
	return apart / total
}

// ServedApart counts the HPA's syncs at which the exporter served other counts than the claims
// the harness had created and not yet deleted by then (and created within each arrival window,
// short and long): the exporter sees a claim a moment after its client creates or deletes it.
// syncs is how many of the HPA's syncs have a served reading.
func (r RecordedRow) ServedApart(short, long time.Duration) (apart, syncs int) {
	served := r.Served()
	for _, s := range r.HPASyncs() {
		d, ok := served[s]
		if !ok {
			continue
		}
		syncs++
		var held, inShort, inLong int
		for _, c := range r.Claims {
			if c.At <= s && s < c.At+c.Lifetime {
				held++
			}
			if c.At <= s && c.At > s-short {
				inShort++
			}
			if c.At <= s && c.At > s-long {
				inLong++
			}
		}
		if held != d.Held || (short > 0 && inShort != d.ArrivalsShort) || (long > 0 && inLong != d.ArrivalsLong) {
			apart++
		}
	}
	return apart, syncs
}
