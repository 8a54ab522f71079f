//! A time series of a measured phase: counters sampled at fixed simulated
//! time steps.
//!
//! The engine asks [`Sampler::due`] every time simulated time advances (one
//! comparison) and hands a [`Snapshot`] of its cumulative counters when a
//! step boundary is passed. Sampling only reads counters, so it never changes
//! what a run computes. Without a fixed step the sampler starts at
//! [`ADAPTIVE_START_NS`] and doubles the step (merging neighbouring rows)
//! whenever [`ADAPTIVE_MAX_ROWS`] rows are reached, so any run gives between
//! half of that and that many rows.

/// First step of the adaptive sampler, ns.
pub const ADAPTIVE_START_NS: u64 = 100_000;

/// Rows at which the adaptive sampler doubles its step.
pub const ADAPTIVE_MAX_ROWS: usize = 1000;
/// Rows at which a fixed-step sampler doubles its step too, so that a step
/// far below the run's length cannot exhaust memory; the rows' `len_ns`
/// shows the step that was used.
pub const FIXED_MAX_ROWS: usize = 1 << 20;

/// Channels whose busy time the series keeps one by one.
pub const SERIES_CHANNELS: usize = 16;

/// Cumulative counters (since the phase began) and current state, read at a
/// step boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Host requests completed.
    pub requests: u64,
    /// Host mapping units read (completed requests).
    pub read_units: u64,
    /// Host mapping units written (completed requests).
    pub write_units: u64,
    /// Units the core accepted from host writes.
    pub host_write_units: u64,
    /// Units programmed for the host and by GC (the WAF numerator).
    pub program_units: u64,
    /// GC victim blocks.
    pub gc_victims: u64,
    /// Channel busy ns, summed over channels.
    pub chan_busy_ns: u64,
    /// Channel busy ns of each of the first [`SERIES_CHANNELS`] channels.
    pub chan_busy_by: [u64; SERIES_CHANNELS],
    /// Channel busy ns inside GC windows, summed over channels.
    pub gc_busy_ns: u64,
    /// GC window ns (a GC operation running on the channel), summed over channels.
    pub gc_window_ns: u64,
    /// Free blocks summed over planes (state, not cumulative).
    pub free_blocks: u64,
    /// Write-buffer slots in use (state, not cumulative).
    pub buffer_used: u32,
}

/// One sampling interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// End of the interval, ns since the phase began.
    pub end_ns: u64,
    /// Length of the interval, ns.
    pub len_ns: u64,
    /// Counters of the interval ([`Snapshot`] differences), and the state
    /// fields as they were at its end.
    pub delta: Snapshot,
}

impl Sample {
    /// Requests completed per simulated second in the interval.
    pub fn iops(&self) -> f64 {
        if self.len_ns == 0 {
            0.0
        } else {
            self.delta.requests as f64 * 1e9 / self.len_ns as f64
        }
    }

    /// Write amplification of the interval; `None` with no host write.
    pub fn waf(&self) -> Option<f64> {
        (self.delta.host_write_units > 0)
            .then(|| self.delta.program_units as f64 / self.delta.host_write_units as f64)
    }

    /// Mean channel utilisation over `channels` channels (0..1; busy time
    /// is booked when an operation is scheduled, so it is clamped at 1).
    pub fn channel_utilisation(&self, channels: usize) -> f64 {
        let cap = self.len_ns as f64 * channels.max(1) as f64;
        if cap <= 0.0 {
            0.0
        } else {
            (self.delta.chan_busy_ns as f64 / cap).min(1.0)
        }
    }

    /// Utilisation of channel `ch` (below [`SERIES_CHANNELS`]) in the interval.
    pub fn channel_utilisation_of(&self, ch: usize) -> f64 {
        let busy = self.delta.chan_busy_by.get(ch).copied().unwrap_or(0);
        if self.len_ns == 0 {
            0.0
        } else {
            (busy as f64 / self.len_ns as f64).min(1.0)
        }
    }

    /// Channel utilisation inside the interval's GC windows (0 without GC).
    pub fn channel_utilisation_gc(&self) -> f64 {
        if self.delta.gc_window_ns == 0 {
            0.0
        } else {
            (self.delta.gc_busy_ns as f64 / self.delta.gc_window_ns as f64).min(1.0)
        }
    }
}

/// Differences of the cumulative fields `a - b`; state fields from `a`.
fn diff(a: &Snapshot, b: &Snapshot) -> Snapshot {
    Snapshot {
        requests: a.requests - b.requests,
        read_units: a.read_units - b.read_units,
        write_units: a.write_units - b.write_units,
        host_write_units: a.host_write_units - b.host_write_units,
        program_units: a.program_units - b.program_units,
        gc_victims: a.gc_victims - b.gc_victims,
        chan_busy_ns: a.chan_busy_ns - b.chan_busy_ns,
        chan_busy_by: core::array::from_fn(|i| a.chan_busy_by[i] - b.chan_busy_by[i]),
        gc_busy_ns: a.gc_busy_ns - b.gc_busy_ns,
        gc_window_ns: a.gc_window_ns - b.gc_window_ns,
        free_blocks: a.free_blocks,
        buffer_used: a.buffer_used,
    }
}

/// Two consecutive samples as one: counters summed, state from the later.
fn merge(a: &Sample, b: &Sample) -> Sample {
    let (x, y) = (&a.delta, &b.delta);
    Sample {
        end_ns: b.end_ns,
        len_ns: a.len_ns + b.len_ns,
        delta: Snapshot {
            requests: x.requests + y.requests,
            read_units: x.read_units + y.read_units,
            write_units: x.write_units + y.write_units,
            host_write_units: x.host_write_units + y.host_write_units,
            program_units: x.program_units + y.program_units,
            gc_victims: x.gc_victims + y.gc_victims,
            chan_busy_ns: x.chan_busy_ns + y.chan_busy_ns,
            chan_busy_by: core::array::from_fn(|i| x.chan_busy_by[i] + y.chan_busy_by[i]),
            gc_busy_ns: x.gc_busy_ns + y.gc_busy_ns,
            gc_window_ns: x.gc_window_ns + y.gc_window_ns,
            free_blocks: y.free_blocks,
            buffer_used: y.buffer_used,
        },
    }
}

/// Collects [`Sample`]s of one phase.
#[derive(Clone, Debug)]
pub struct Sampler {
    start_ns: u64,
    step_ns: u64,
    adaptive: bool,
    next_ns: u64,
    last: Snapshot,
    rows: Vec<Sample>,
}

impl Sampler {
    /// A sampler for a phase starting at `start_ns` with counters `at_start`;
    /// `step_ns` 0 means adaptive.
    pub fn new(start_ns: u64, step_ns: u64, at_start: Snapshot) -> Self {
        let adaptive = step_ns == 0;
        let step_ns = if adaptive { ADAPTIVE_START_NS } else { step_ns };
        Sampler {
            start_ns,
            step_ns,
            adaptive,
            next_ns: start_ns.saturating_add(step_ns),
            last: at_start,
            rows: Vec::new(),
        }
    }

    /// The fixed step (ns), or 0 if adaptive.
    pub fn fixed_step_ns(&self) -> u64 {
        if self.adaptive {
            0
        } else {
            self.step_ns
        }
    }

    /// Whether moving time to `now` passes a step boundary.
    #[inline(always)]
    pub fn due(&self, now: u64) -> bool {
        now >= self.next_ns
    }

    /// Records every boundary up to `now` with the counters `s` (taken
    /// before anything at `now` happened).
    pub fn record(&mut self, now: u64, s: Snapshot) {
        while now >= self.next_ns {
            let end = self.next_ns;
            self.push(end, self.step_ns, &s);
            let cap = if self.adaptive {
                ADAPTIVE_MAX_ROWS
            } else {
                FIXED_MAX_ROWS
            };
            if self.rows.len() >= cap {
                self.rows = self
                    .rows
                    .chunks(2)
                    .map(|c| {
                        if c.len() == 2 {
                            merge(&c[0], &c[1])
                        } else {
                            c[0]
                        }
                    })
                    .collect();
                self.step_ns = self.step_ns.saturating_mul(2);
                // Realign to the doubled grid.
                let since = end - self.start_ns;
                self.next_ns = self.start_ns.saturating_add(
                    since
                        .div_ceil(self.step_ns)
                        .max(1)
                        .saturating_mul(self.step_ns),
                );
                if self.next_ns == end {
                    self.next_ns = self.next_ns.saturating_add(self.step_ns);
                }
            } else {
                self.next_ns = end.saturating_add(self.step_ns);
            }
        }
    }

    fn push(&mut self, end: u64, len: u64, s: &Snapshot) {
        self.rows.push(Sample {
            end_ns: end - self.start_ns,
            len_ns: len,
            delta: diff(s, &self.last),
        });
        self.last = *s;
    }

    /// The rows so far, plus the partial interval up to `now` with counters
    /// `s` (if it is not empty).
    pub fn finish(&self, now: u64, s: Snapshot) -> Vec<Sample> {
        let mut rows = self.rows.clone();
        let begin = rows.last().map_or(0, |r| r.end_ns) + self.start_ns;
        if now > begin || s != self.last {
            rows.push(Sample {
                end_ns: now.max(begin) - self.start_ns,
                len_ns: now.saturating_sub(begin),
                delta: diff(&s, &self.last),
            });
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(requests: u64) -> Snapshot {
        Snapshot {
            requests,
            ..Snapshot::default()
        }
    }

    #[test]
    fn fixed_steps_give_one_row_per_boundary_and_keep_totals() {
        let mut s = Sampler::new(1000, 10, Snapshot::default());
        assert!(!s.due(1009));
        s.record(1012, snap(3));
        s.record(1035, snap(7));
        let rows = s.finish(1041, snap(9));
        let ends: Vec<u64> = rows.iter().map(|r| r.end_ns).collect();
        assert_eq!(ends, [10, 20, 30, 41]);
        assert_eq!(rows.iter().map(|r| r.delta.requests).sum::<u64>(), 9);
    }

    #[test]
    fn adaptive_rows_stay_bounded_and_keep_totals() {
        let mut s = Sampler::new(0, 0, Snapshot::default());
        let mut t = 0;
        for i in 1..=50_000u64 {
            t += 7_919;
            if s.due(t) {
                s.record(t, snap(i - 1));
            }
        }
        let rows = s.finish(t, snap(50_000));
        assert!(rows.len() <= ADAPTIVE_MAX_ROWS && rows.len() >= ADAPTIVE_MAX_ROWS / 2 - 1);
        assert_eq!(rows.iter().map(|r| r.delta.requests).sum::<u64>(), 50_000);
        assert!(rows.windows(2).all(|w| w[0].end_ns < w[1].end_ns));
        assert_eq!(
            rows.iter().map(|r| r.len_ns).sum::<u64>(),
            rows.last().map_or(0, |r| r.end_ns)
        );
    }
}
