package replay

// DefaultLoadDayParams is the node model's third trace family, "a day whose burst size grows with
// load": the day trace's clock, rates and lifetimes (DefaultDayParams), but bursts of 2 at night
// whose largest size rises with the day's shape to 10 at the peak (uniform in 2..BurstMaxAt).
// Where the day trace's bursts are as large at night as at the peak (so a pool must hold about
// 6 all night), here the night needs 2 and only the peak needs many: the shape an autoscaled
// pool is for. The model's family only; the live benchmark does not run it.
func DefaultLoadDayParams() DayParams {
	p := DefaultDayParams()
	p.BurstMin, p.BurstMax, p.PeakBurstMax = 2, 2, 10
	return p
}

// GenerateLoadDay draws the load-scaled day p describes, from a stream of its own, so a seed's
// load day is not its day trace with other burst sizes.
func GenerateLoadDay(p DayParams) (*Trace, error) {
	return generateDay(p, TraceLoadDay, 0x14057b7ef767814f)
}
