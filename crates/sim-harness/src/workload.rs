//! Host requests and synthetic workload generators.
//!
//! Requests are produced lazily, so a run of tens of millions of requests
//! costs no memory for the workload itself.

/// What a host request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    /// Read units.
    Read,
    /// Write units.
    Write,
    /// Discard units.
    Trim,
    /// Make every write admitted before it durable (one request, no units).
    Flush,
    /// Copy `units` units from `src` to the request's `lpn` (the ranges
    /// must not overlap). The core remaps where its copy mode allows; other
    /// units are read and written again inside the device.
    Copy {
        /// First source mapping unit.
        src: u32,
    },
}

/// One host request in mapping units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRequest {
    /// Arrival time in ns (the engine never issues it earlier).
    pub time_ns: u64,
    /// Operation.
    pub op: HostOp,
    /// First mapping unit.
    pub lpn: u32,
    /// Number of mapping units (at least 1).
    pub units: u32,
    /// Placement handle of a write (FDP placement identifier, or the
    /// zone's handle under ZNS); 0 without host-guided placement.
    pub placement: u8,
    /// Idle time (ns) between the completion of every earlier request and
    /// the issue of this one, like fio's `thinktime`; 0 = none.
    pub idle_ns: u64,
    /// Closes a host window of this many grouped user writes (seed 003
    /// Sec. IV): the window opened at the issue of the first request after
    /// the previous closing request, and every user write in it completes
    /// with this request. The engine records the window's duration once per
    /// user write in its window latency. 0 = closes nothing.
    pub window: u32,
}

/// A stream of host requests in arrival order.
pub trait RequestSource {
    /// Next request, or `None` at the end.
    fn next_request(&mut self) -> Option<HostRequest>;
    /// Total requests if known (for progress reporting).
    fn len_hint(&self) -> Option<u64> {
        None
    }
    /// Several concurrent flows instead of one stream (see
    /// [`crate::engine::FlowSet`]); `None` for a single stream.
    fn flows(&mut self) -> Option<&mut dyn crate::engine::Flows> {
        None
    }
    /// What a host-side scheme did beyond the requests (for the report);
    /// `None` for a plain stream.
    fn summary(&self) -> Option<serde_json::Value> {
        None
    }
}

impl<T: RequestSource + ?Sized> RequestSource for &mut T {
    fn next_request(&mut self) -> Option<HostRequest> {
        (**self).next_request()
    }
    fn len_hint(&self) -> Option<u64> {
        (**self).len_hint()
    }
    fn flows(&mut self) -> Option<&mut dyn crate::engine::Flows> {
        (**self).flows()
    }
    fn summary(&self) -> Option<serde_json::Value> {
        (**self).summary()
    }
}

/// A pre-built list of requests (trace replay).
pub struct VecSource {
    reqs: Vec<HostRequest>,
    pos: usize,
}

impl VecSource {
    /// Wraps a list; requests are replayed in order.
    pub fn new(reqs: Vec<HostRequest>) -> Self {
        VecSource { reqs, pos: 0 }
    }
}

impl RequestSource for VecSource {
    fn next_request(&mut self) -> Option<HostRequest> {
        let r = self.reqs.get(self.pos).copied();
        self.pos += 1;
        r
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.reqs.len() as u64)
    }
}

/// Access pattern of a synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Uniformly random aligned offsets over the footprint.
    Random,
    /// Consecutive offsets, wrapping at the end of the footprint.
    Sequential,
    /// `hot_access_pct` of requests go to the first `hot_space_pct` of the footprint.
    HotCold {
        /// Share of requests aimed at the hot region, in percent.
        hot_access_pct: u32,
        /// Size of the hot region, in percent of the footprint.
        hot_space_pct: u32,
    },
    /// The JESD219 enterprise skew over the footprint, uniform inside each
    /// zone: see [`JESD219_ZONES`].
    Jesd219,
}

/// Zones of the JESD219 enterprise workload's address skew, as
/// (percent of requests, percent of the footprint), from the start of the
/// footprint: 50 % of the accesses go to the first 5 %, 30 % to the next
/// 15 % and 20 % to the remaining 80 %.
pub const JESD219_ZONES: [(u64, u64); 3] = [(50, 5), (30, 15), (20, 80)];

/// JESD219 enterprise transfer sizes on a 4 KiB mapping unit, as (KiB,
/// percent of requests): 4 KiB 67 %, 8 KiB 10 %, 16 KiB 7 %, 32 KiB 3 %,
/// 64 KiB 3 %; the 10 % of transfers from 512 B to 3.5 KiB are counted as
/// whole 4 KiB units (a sub-unit write costs a whole unit program).
pub const JESD219_SIZES_KIB: [(u32, u32); 5] = [(4, 77), (8, 10), (16, 7), (32, 3), (64, 3)];

/// A slot in `0..slots` drawn with the JESD219 zone skew.
fn jesd219_slot(slots: u64, rng: &mut Rng) -> u64 {
    let mut x = rng.below(100);
    let mut start = 0;
    for (access, space) in JESD219_ZONES {
        let end = (start + space).min(100);
        if x < access {
            let lo = slots * start / 100;
            let hi = (slots * end / 100).clamp(lo + 1, slots.max(lo + 1));
            return (lo + rng.below(hi - lo)).min(slots.saturating_sub(1));
        }
        x -= access;
        start = end;
    }
    rng.below(slots)
}

/// Parameters of a synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SynthSpec {
    /// Access pattern.
    pub pattern: Pattern,
    /// Percentage of reads (the rest are writes).
    pub read_pct: u32,
    /// Request size in mapping units.
    pub units: u32,
    /// Number of requests.
    pub requests: u64,
    /// Logical units addressed (the footprint).
    pub footprint_units: u32,
    /// Inter-arrival time in ns (0 = closed loop: every request is ready at once).
    pub interarrival_ns: u64,
    /// Generator seed.
    pub seed: u64,
    /// Request sizes mixed in besides `units`; empty means every request is `units` long.
    pub sizes: SizeMix,
    /// Idle gaps between requests on top of `interarrival_ns`.
    pub idle: IdleModel,
}

impl Default for SynthSpec {
    /// One-unit uniform random writes over one unit, closed loop; callers set what they need.
    fn default() -> Self {
        SynthSpec {
            pattern: Pattern::Random,
            read_pct: 0,
            units: 1,
            requests: 0,
            footprint_units: 1,
            interarrival_ns: 0,
            seed: 0,
            sizes: SizeMix::default(),
            idle: IdleModel::None,
        }
    }
}

/// Most distinct request sizes a [`SizeMix`] holds.
pub const MAX_SIZES: usize = 5;

/// A discrete request-size distribution: sizes in mapping units with integer
/// weights. Fixed-size, so a [`SynthSpec`] stays `Copy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeMix {
    entries: [(u32, u32); MAX_SIZES],
    len: usize,
}

impl SizeMix {
    /// A mix of `(units, weight)` pairs; `None` if there are more than
    /// [`MAX_SIZES`], a size of 0 units, or no positive weight.
    pub fn new(pairs: &[(u32, u32)]) -> Option<SizeMix> {
        if pairs.len() > MAX_SIZES
            || pairs.iter().any(|&(u, _)| u == 0)
            || pairs.iter().all(|&(_, w)| w == 0)
        {
            return None;
        }
        let mut m = SizeMix::default();
        m.entries[..pairs.len()].copy_from_slice(pairs);
        m.len = pairs.len();
        Some(m)
    }

    /// The `(units, weight)` pairs.
    pub fn entries(&self) -> &[(u32, u32)] {
        &self.entries[..self.len]
    }

    /// Whether the mix is empty (every request has the base size).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Largest size in units, or `None` when empty.
    pub fn max_units(&self) -> Option<u32> {
        self.entries().iter().map(|e| e.0).max()
    }

    /// Draws one size; `base` when the mix is empty.
    fn pick(&self, base: u32, rng: &mut Rng) -> u32 {
        let total: u64 = self.entries().iter().map(|e| u64::from(e.1)).sum();
        if total == 0 {
            return base;
        }
        let mut x = rng.below(total);
        for &(units, w) in self.entries() {
            if x < u64::from(w) {
                return units;
            }
            x -= u64::from(w);
        }
        base
    }
}

/// When requests arrive, beyond a fixed inter-arrival time.
///
/// `Bursty` models the fio-style intensity mixes of seed 000 Sec. 5.2 and
/// seed 001 Sec. 4.4.2 ("70% of I/O requests were issued without
/// inter-request idle times while 30% were issued with some idle times"):
/// requests come in periods of `period` requests; the first `busy_pct`
/// percent of a period are issued without idle time (the queue depth alone
/// paces them), each of the rest is issued `idle_ns` after every earlier
/// request has completed ([`HostRequest::idle_ns`], fio's `thinktime`).
/// Grouping the busy requests lets the write buffer fill, and the idle run
/// lets it drain, which is the fluctuation the mode selector is evaluated
/// on. Because the gaps follow completions, a faster drive finishes a
/// period sooner and its throughput shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdleModel {
    /// No idle gaps.
    #[default]
    None,
    /// Busy runs without idle time, then requests spaced by idle gaps.
    Bursty {
        /// Percentage of the requests of each period issued without idle time.
        busy_pct: u32,
        /// Requests per period (at least 1).
        period: u32,
        /// Idle gap before each of the remaining requests, in ns.
        idle_ns: u64,
    },
}

impl IdleModel {
    /// Idle time inserted before request number `i` (0-based).
    fn gap_before(&self, i: u64) -> u64 {
        match *self {
            IdleModel::None => 0,
            IdleModel::Bursty {
                busy_pct,
                period,
                idle_ns,
            } => {
                let period = u64::from(period.max(1));
                let busy = period * u64::from(busy_pct.min(100)) / 100;
                if i % period < busy {
                    0
                } else {
                    idle_ns
                }
            }
        }
    }
}

/// The workload's generator: xorshift128+ seeded from splitmix64 (the
/// stream every synthetic workload has drawn from; see `test_kit::rng`).
pub use test_kit::rng::XorShift128Plus as Rng;

/// Lazily generated synthetic requests.
pub struct Synth {
    spec: SynthSpec,
    rng: Rng,
    issued: u64,
    seq_pos: u64,
}

impl Synth {
    /// A generator for `spec`.
    pub fn new(spec: SynthSpec) -> Self {
        Synth {
            spec,
            rng: Rng::new(spec.seed),
            issued: 0,
            seq_pos: 0,
        }
    }
}

impl RequestSource for Synth {
    fn next_request(&mut self) -> Option<HostRequest> {
        let s = &self.spec;
        if self.issued >= s.requests {
            return None;
        }
        let units = s.sizes.pick(s.units, &mut self.rng).max(1);
        let slots = u64::from((s.footprint_units / units).max(1));
        let slot = match s.pattern {
            Pattern::Sequential => {
                let v = self.seq_pos % slots;
                self.seq_pos += 1;
                v
            }
            Pattern::Random => self.rng.below(slots),
            Pattern::HotCold {
                hot_access_pct,
                hot_space_pct,
            } => {
                let hot = (slots * u64::from(hot_space_pct) / 100).clamp(1, slots);
                if self.rng.below(100) < u64::from(hot_access_pct) {
                    self.rng.below(hot)
                } else if hot < slots {
                    hot + self.rng.below(slots - hot)
                } else {
                    self.rng.below(slots)
                }
            }
            Pattern::Jesd219 => jesd219_slot(slots, &mut self.rng),
        };
        let op = if self.rng.below(100) < u64::from(s.read_pct) {
            HostOp::Read
        } else {
            HostOp::Write
        };
        let idle_ns = s.idle.gap_before(self.issued);
        let time_ns = self.issued * s.interarrival_ns;
        self.issued += 1;
        Some(HostRequest {
            time_ns,
            op,
            lpn: (slot * u64::from(units)) as u32,
            units: units.min(s.footprint_units.max(1)),
            idle_ns,
            window: 0,
            placement: 0,
        })
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.spec.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: Pattern) -> SynthSpec {
        SynthSpec {
            pattern,
            read_pct: 30,
            units: 2,
            requests: 10_000,
            footprint_units: 1000,
            interarrival_ns: 0,
            seed: 7,
            ..SynthSpec::default()
        }
    }

    #[test]
    fn synth_stays_in_footprint_and_mixes_reads() {
        let mut s = Synth::new(spec(Pattern::Random));
        let mut reads = 0;
        let mut n = 0;
        while let Some(r) = s.next_request() {
            assert!(r.lpn + r.units <= 1000 && r.lpn % 2 == 0);
            reads += u32::from(r.op == HostOp::Read);
            n += 1;
        }
        assert_eq!(n, 10_000);
        assert!((2700..3300).contains(&reads), "{reads}");
    }

    #[test]
    fn sequential_wraps_and_hotcold_skews() {
        let mut s = Synth::new(spec(Pattern::Sequential));
        let lpns: Vec<u32> = (0..501).map(|_| s.next_request().unwrap().lpn).collect();
        assert_eq!(&lpns[..3], &[0, 2, 4]);
        assert_eq!(lpns[500], 0);
        let mut h = Synth::new(spec(Pattern::HotCold {
            hot_access_pct: 80,
            hot_space_pct: 20,
        }));
        let mut hot = 0;
        for _ in 0..10_000 {
            hot += u32::from(h.next_request().unwrap().lpn < 200);
        }
        assert!((7600..8400).contains(&hot), "{hot}");
    }

    #[test]
    fn jesd219_skews_into_three_zones() {
        let mut s = Synth::new(SynthSpec {
            units: 1,
            read_pct: 0,
            ..spec(Pattern::Jesd219)
        });
        let mut zones = [0u32; 3];
        for _ in 0..10_000 {
            let lpn = s.next_request().unwrap().lpn;
            assert!(lpn < 1000);
            zones[usize::from(lpn >= 50) + usize::from(lpn >= 200)] += 1;
        }
        assert!((4700..5300).contains(&zones[0]), "{zones:?}");
        assert!((2700..3300).contains(&zones[1]), "{zones:?}");
        assert!((1700..2300).contains(&zones[2]), "{zones:?}");
        let mix = JESD219_SIZES_KIB.iter().map(|s| s.1).sum::<u32>();
        assert_eq!(mix, 100);
        assert!(SizeMix::new(&JESD219_SIZES_KIB).is_some());
    }

    #[test]
    fn size_mix_draws_by_weight_and_stays_aligned() {
        let mut s = Synth::new(SynthSpec {
            sizes: SizeMix::new(&[(2, 3), (8, 1)]).unwrap(),
            ..spec(Pattern::Random)
        });
        let mut large = 0;
        for _ in 0..8000 {
            let r = s.next_request().unwrap();
            assert!(r.units == 2 || r.units == 8, "{}", r.units);
            assert!(r.lpn / r.units * r.units == r.lpn && r.lpn + r.units <= 1000);
            large += u32::from(r.units == 8);
        }
        assert!((1800..2200).contains(&large), "{large}");
        assert!(SizeMix::new(&[(0, 1)]).is_none());
        assert!(SizeMix::new(&[(1, 0)]).is_none());
    }

    #[test]
    fn bursty_arrivals_idle_only_after_the_busy_share() {
        let mut s = Synth::new(SynthSpec {
            idle: IdleModel::Bursty {
                busy_pct: 70,
                period: 10,
                idle_ns: 1000,
            },
            ..spec(Pattern::Random)
        });
        let gaps: Vec<u64> = (0..20).map(|_| s.next_request().unwrap().idle_ns).collect();
        assert_eq!(&gaps[..10], &[0, 0, 0, 0, 0, 0, 0, 1000, 1000, 1000]);
        assert_eq!(&gaps[10..], &gaps[..10]);
    }
}
