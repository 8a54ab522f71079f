//! The host of a zoned namespace (`host.interface = zns`): a
//! log-structured writer over the core's zone state machine, as a zoned
//! file system or key-value store is. Any workload runs on it: its
//! (application) blocks are appended to zones with Zone Append, one open
//! zone per stream (the request's placement identifier), reads follow the
//! host's map, and when empty zones run low the host compacts: the full
//! zone with the fewest live blocks is read, its live blocks appended to
//! the compaction stream's zone and the zone reset. Every zone command
//! passes [`Zones`] first; a refusal is counted by status, never sent.
//!
//! The device sees zone writes at write pointers, reads and resets (trims
//! of the written blocks) with each zone's placement handle, so it does no
//! GC for zoned data; the host's compaction is what end-to-end WAF adds
//! ([`ZoneHostStats`]).

use std::collections::{BTreeMap, VecDeque};

use firmware_core::tech::zns::zone::{ZoneAction, ZoneGeometry, ZoneStatus, Zones};

use crate::workload::{HostOp, HostRequest, RequestSource};
use crate::zone_front::ZoneFront;

const NONE: u32 = u32::MAX;

/// What the zone host did (report keys `zns.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ZoneHostStats {
    /// Blocks the application wrote.
    pub app_write_units: u64,
    /// Blocks the host's compaction moved (read and appended again).
    pub compaction_units: u64,
    /// Zone appends sent.
    pub appends: u64,
    /// Zones reset.
    pub resets: u64,
    /// Zones finished.
    pub finishes: u64,
    /// Zone commands [`Zones`] refused, by NVMe status code.
    pub refused: BTreeMap<u8, u64>,
}

/// A log-structured application over a zoned namespace (see the module).
pub struct ZoneLog<'z, S> {
    inner: S,
    front: ZoneFront<'z>,
    /// Application block -> zone LBA (`NONE`: never written).
    fwd: Vec<u32>,
    /// Zone LBA -> application block (`NONE`: none).
    rev: Vec<u32>,
    /// Live blocks per zone.
    live: Vec<u32>,
    /// Empty zones, lowest first.
    empty: VecDeque<u32>,
    /// Open zone per stream; the last stream is compaction's.
    open: Vec<Option<u32>>,
    /// Empty zones kept for compaction.
    reserve: u32,
    /// Application requests taken so far.
    seen: u64,
    /// The statistics restart after this many application requests.
    restart_at: u64,
    /// What the host did.
    pub stats: ZoneHostStats,
}

impl<'z, S: RequestSource> ZoneLog<'z, S> {
    /// The host over zones `table` of shape `geo` (all empty), for an
    /// application of [`Self::app_units_for`] blocks writing through
    /// `streams` streams (placement identifiers modulo `streams`).
    pub fn new(
        inner: S,
        geo: ZoneGeometry,
        table: &'z mut [firmware_core::tech::zns::zone::Zone],
        streams: u32,
        app_units: u32,
    ) -> Result<Self, String> {
        let front = ZoneFront::new(geo, table)?;
        // Streams plus compaction's zone must be open together.
        let streams = streams.clamp(1, geo.max_open.saturating_sub(1).max(1));
        let reserve = streams + 2;
        if app_units > Self::app_units_for(geo, streams) {
            return Err(format!(
                "zns: {app_units} application blocks do not fit {} zones of {} blocks with {reserve} spare zones",
                geo.zones, geo.cap
            ));
        }
        Ok(ZoneLog {
            inner,
            front,
            fwd: vec![NONE; app_units as usize],
            rev: vec![NONE; geo.data_blocks() as usize],
            live: vec![0; geo.zones as usize],
            empty: (0..geo.zones).collect(),
            open: vec![None; streams as usize + 1],
            reserve,
            seen: 0,
            restart_at: u64::MAX,
            stats: ZoneHostStats::default(),
        })
    }

    /// Application blocks the host offers on `geo` with `streams` streams:
    /// every zone's capacity but the spare zones compaction needs.
    pub fn app_units_for(geo: ZoneGeometry, streams: u32) -> u32 {
        let streams = streams.clamp(1, geo.max_open.saturating_sub(1).max(1));
        geo.zones.saturating_sub(streams + 2) * geo.cap
    }

    /// Restarts [`Self::stats`] once `requests` application requests were
    /// taken (the end of a warm-up that is not measured).
    pub fn restart_stats_after(&mut self, requests: u64) {
        self.restart_at = requests;
    }

    /// The zones now.
    pub fn zones(&self) -> &Zones<'z> {
        self.front.zones()
    }

    fn refused(&mut self, s: ZoneStatus) {
        *self.stats.refused.entry(s as u8).or_default() += 1;
    }

    /// The open zone of stream `s`, taking an empty one if needed.
    fn zone_of_stream(&mut self, s: usize, t: u64) -> Option<u32> {
        if let Some(z) = self.open[s] {
            return Some(z);
        }
        if s + 1 < self.open.len() {
            for _ in 0..self.zones().geometry().zones {
                if self.empty.len() >= self.reserve as usize || !self.compact(t) {
                    break;
                }
            }
        }
        let z = self.empty.pop_front()?;
        self.open[s] = Some(z);
        Some(z)
    }

    /// Appends application blocks `apps` (each `NONE` or a block) to
    /// stream `s`, splitting at zone ends.
    fn append(&mut self, s: usize, apps: &[u32], t: u64) {
        let cap = self.zones().geometry().cap;
        let mut i = 0;
        while i < apps.len() {
            let Some(z) = self.zone_of_stream(s, t) else {
                self.refused(ZoneStatus::ZoneIsFull);
                return;
            };
            let wp = self.zones().zone(z).map_or(cap, |e| e.wp);
            let n = (cap - wp).min((apps.len() - i) as u32);
            let zslba = self.zones().zslba(z);
            match self.front.append(zslba, n, t) {
                Ok(lba) => {
                    self.stats.appends += 1;
                    for (k, &a) in apps[i..i + n as usize].iter().enumerate() {
                        let at = lba as u32 + k as u32;
                        if let Some(old) = self.fwd.get(a as usize).copied() {
                            self.kill(old);
                            self.fwd[a as usize] = at;
                        }
                        self.rev[at as usize] = a;
                        self.live[z as usize] += 1;
                    }
                }
                Err(e) => {
                    self.refused(e);
                    self.open[s] = None;
                    continue;
                }
            }
            if wp + n >= cap {
                self.open[s] = None;
            }
            i += n as usize;
        }
    }

    fn kill(&mut self, lba: u32) {
        if lba == NONE {
            return;
        }
        self.rev[lba as usize] = NONE;
        if let Some(z) = self.zones().zone_of(u64::from(lba)) {
            self.live[z as usize] = self.live[z as usize].saturating_sub(1);
        }
    }

    /// Compacts the full zone with the fewest live blocks: reads its live
    /// runs, appends them to the compaction stream and resets it. Returns
    /// false when no zone can be compacted.
    fn compact(&mut self, t: u64) -> bool {
        let open: Vec<u32> = self.open.iter().flatten().copied().collect();
        let geo = self.zones().geometry();
        let victim = (0..geo.zones)
            .filter(|z| !open.contains(z))
            .filter(|&z| self.zones().zone(z).is_some_and(|e| e.wp > 0))
            .min_by_key(|&z| self.live[z as usize]);
        let Some(v) = victim else { return false };
        let base = self.zones().zslba(v) as u32;
        let wp = self.zones().zone(v).map_or(0, |e| e.wp);
        let mut run: Vec<u32> = Vec::new();
        let mut moved: Vec<u32> = Vec::new();
        let flush = |me: &mut Self, run: &mut Vec<u32>| {
            if let Some(&first) = run.first() {
                me.front
                    .emit(HostOp::Read, u64::from(first), run.len() as u32, 0, t);
                run.clear();
            }
        };
        for k in 0..wp {
            let lba = base + k;
            let a = self.rev[lba as usize];
            if a != NONE {
                run.push(lba);
                moved.push(a);
            } else {
                flush(self, &mut run);
            }
        }
        flush(self, &mut run);
        self.stats.compaction_units += moved.len() as u64;
        let gc = self.open.len() - 1;
        self.append(gc, &moved, t);
        self.reset(v, t);
        true
    }

    /// Resets zone `z`: trims its written blocks (and its finish marker).
    fn reset(&mut self, z: u32, t: u64) {
        let zslba = self.zones().zslba(z);
        match self.front.manage(zslba, ZoneAction::Reset, t) {
            Ok(written) => {
                for k in 0..written {
                    let lba = zslba as u32 + k;
                    let a = self.rev[lba as usize];
                    if a != NONE {
                        self.fwd[a as usize] = NONE;
                        self.rev[lba as usize] = NONE;
                    }
                }
                self.live[z as usize] = 0;
                self.stats.resets += 1;
                self.empty.push_back(z);
            }
            Err(e) => self.refused(e),
        }
    }

    /// Turns one application request into zone commands.
    fn translate(&mut self, r: HostRequest) {
        let t = r.time_ns;
        let first = self.front.queued();
        let n = self.fwd.len() as u32;
        let apps: Vec<u32> = (r.lpn..r.lpn.saturating_add(r.units))
            .map(|a| a % n.max(1))
            .collect();
        match r.op {
            HostOp::Write => {
                self.stats.app_write_units += apps.len() as u64;
                let s = usize::from(r.placement) % (self.open.len() - 1);
                self.append(s, &apps, t);
            }
            HostOp::Read => {
                let mut start = NONE;
                let mut len = 0u32;
                for a in apps {
                    let lba = self.fwd[a as usize];
                    if lba != NONE && start != NONE && lba == start + len {
                        len += 1;
                        continue;
                    }
                    if start != NONE {
                        self.front.emit(HostOp::Read, u64::from(start), len, 0, t);
                    }
                    (start, len) = if lba == NONE { (NONE, 0) } else { (lba, 1) };
                }
                if start != NONE {
                    self.front.emit(HostOp::Read, u64::from(start), len, 0, t);
                }
            }
            HostOp::Trim => {
                for a in apps {
                    let old = self.fwd[a as usize];
                    self.kill(old);
                    self.fwd[a as usize] = NONE;
                }
            }
            HostOp::Flush => self.front.push(r),
            HostOp::Copy { .. } => {}
        }
        if let Some(q) = self.front.queued_mut(first) {
            q.idle_ns = r.idle_ns;
        }
    }
}

impl<S: RequestSource> RequestSource for ZoneLog<'_, S> {
    fn next_request(&mut self) -> Option<HostRequest> {
        loop {
            if let Some(r) = self.front.pop() {
                return Some(r);
            }
            if self.seen == self.restart_at {
                self.stats = ZoneHostStats::default();
            }
            let r = self.inner.next_request()?;
            self.seen += 1;
            self.translate(r);
        }
    }

    fn len_hint(&self) -> Option<u64> {
        self.inner.len_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Pattern, Synth, SynthSpec};
    use firmware_core::tech::zns::zone::Zone;

    fn geo() -> ZoneGeometry {
        ZoneGeometry {
            zones: 16,
            size: 64,
            cap: 60,
            max_open: 4,
            max_active: 6,
        }
    }

    /// Random overwrites: every write lands at a write pointer, compaction
    /// keeps zones free, and the map stays a bijection onto live blocks.
    #[test]
    fn random_overwrites_append_compact_and_reset() {
        let g = geo();
        let mut table = vec![Zone::default(); g.zones as usize];
        let app = ZoneLog::<Synth>::app_units_for(g, 2);
        let synth = Synth::new(SynthSpec {
            pattern: Pattern::Random,
            read_pct: 20,
            units: 3,
            requests: 5000,
            footprint_units: app * 8 / 10,
            seed: 3,
            ..SynthSpec::default()
        });
        let mut zl = ZoneLog::new(synth, g, &mut table, 2, app).unwrap();
        let mut wp: Vec<u32> = vec![0; g.zones as usize];
        while let Some(r) = zl.next_request() {
            let z = (r.lpn / g.size) as usize;
            match r.op {
                HostOp::Write => {
                    assert_eq!(r.lpn % g.size, wp[z], "write not at the pointer");
                    wp[z] += r.units;
                    assert!(wp[z] <= g.cap);
                }
                HostOp::Trim if r.lpn < g.zones * g.size => {
                    assert_eq!((r.lpn % g.size, r.units), (0, wp[z]));
                    wp[z] = 0;
                }
                _ => {}
            }
        }
        assert!(zl.stats.refused.is_empty(), "{:?}", zl.stats.refused);
        assert!(zl.stats.resets > 0 && zl.stats.compaction_units > 0);
        for z in 0..g.zones {
            assert_eq!(zl.zones().zone(z).unwrap().wp, wp[z as usize]);
        }
        let live: u32 = zl.live.iter().sum();
        let mapped = zl.fwd.iter().filter(|&&l| l != NONE).count() as u32;
        assert_eq!(live, mapped);
        for (a, &l) in zl.fwd.iter().enumerate() {
            if l != NONE {
                assert_eq!(zl.rev[l as usize], a as u32);
            }
        }
    }
}
