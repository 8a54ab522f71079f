//! A trace's zone commands on a zoned namespace (`ftl replay` under
//! `host.interface = zns`): each request of the `ftl` trace format goes
//! through the zone front end ([`ZoneFront`]), as the zone host of `ftl
//! synth` does: `W` is a Zone Write (at the write pointer only), `A` a
//! Zone Append, `ZO`/`ZC`/`ZF`/`ZR` the Zone Send actions, `R` a read.
//! A command the zone state machine refuses sends nothing and is counted
//! by its NVMe status ([`ZoneReplayStats::refused`]); the replay goes on,
//! as a host does after an error completion.

use std::collections::BTreeMap;

use firmware_core::tech::zns::zone::{Zone, ZoneAction, ZoneGeometry, ZoneStatus, Zones};

use crate::trace::{TraceOp, TraceRequest, ZoneSend};
use crate::workload::{HostRequest, RequestSource};
use crate::zone_front::ZoneFront;

/// What the trace's zone commands did (report keys `zns.*` of a replay).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ZoneReplayStats {
    /// Zone Writes accepted.
    pub zone_writes: u64,
    /// Zone Appends accepted.
    pub appends: u64,
    /// Reads accepted.
    pub reads: u64,
    /// Zones opened explicitly.
    pub opens: u64,
    /// Zones closed.
    pub closes: u64,
    /// Zones finished.
    pub finishes: u64,
    /// Zones reset.
    pub resets: u64,
    /// Blocks written by accepted writes and appends.
    pub write_units: u64,
    /// Commands refused, by NVMe status code (trims and copies, which a
    /// zoned namespace does not take here, as Invalid Field).
    pub refused: BTreeMap<u8, u64>,
}

/// Trace requests in, core requests out (see the module).
pub struct ZoneReplay<'z, I> {
    inner: I,
    front: ZoneFront<'z>,
    unit: u64,
    len_hint: Option<u64>,
    /// What the commands did.
    pub stats: ZoneReplayStats,
}

impl<'z, I: Iterator<Item = TraceRequest>> ZoneReplay<'z, I> {
    /// Replays `inner` (byte requests, already within the zoned capacity)
    /// on zones `geo` over `table`, in mapping units of `unit` bytes;
    /// `len_hint` is the trace's request count.
    pub fn new(
        inner: I,
        geo: ZoneGeometry,
        table: &'z mut [Zone],
        unit: u64,
        len_hint: Option<u64>,
    ) -> Result<Self, String> {
        if unit == 0 {
            return Err("zone replay: mapping unit of 0 bytes".into());
        }
        Ok(ZoneReplay {
            inner,
            front: ZoneFront::new(geo, table)?,
            unit,
            len_hint,
            stats: ZoneReplayStats::default(),
        })
    }

    /// The zones now.
    pub fn zones(&self) -> &Zones<'z> {
        self.front.zones()
    }

    /// The trace source back (e.g. to collect its final statistics).
    pub fn into_inner(self) -> I {
        self.inner
    }

    /// Sends one trace request through the front end.
    fn translate(&mut self, r: TraceRequest) -> Result<(), ZoneStatus> {
        let lba = r.offset_bytes / self.unit;
        let n = ((r.end_bytes() - 1) / self.unit - lba + 1).min(u64::from(u32::MAX)) as u32;
        let t = r.time_ns;
        let s = &mut self.stats;
        match r.op {
            TraceOp::Read => self.front.read(lba, n, t).map(|_| s.reads += 1),
            TraceOp::Write | TraceOp::PlacedWrite { .. } => {
                self.front.write(lba, n, t)?;
                s.zone_writes += 1;
                s.write_units += u64::from(n);
                Ok(())
            }
            TraceOp::Append => {
                self.front.append(lba, n, t)?;
                s.appends += 1;
                s.write_units += u64::from(n);
                Ok(())
            }
            TraceOp::Zone(a) => {
                let (action, count) = match a {
                    ZoneSend::Open => (ZoneAction::Open, &mut s.opens),
                    ZoneSend::Close => (ZoneAction::Close, &mut s.closes),
                    ZoneSend::Finish => (ZoneAction::Finish, &mut s.finishes),
                    ZoneSend::Reset => (ZoneAction::Reset, &mut s.resets),
                };
                self.front.manage(lba, action, t)?;
                *count += 1;
                Ok(())
            }
            TraceOp::Trim | TraceOp::Copy { .. } => Err(ZoneStatus::InvalidField),
        }
    }
}

impl<I: Iterator<Item = TraceRequest>> RequestSource for ZoneReplay<'_, I> {
    fn next_request(&mut self) -> Option<HostRequest> {
        loop {
            if let Some(r) = self.front.pop() {
                return Some(r);
            }
            let r = self.inner.next()?;
            if let Err(status) = self.translate(r) {
                *self.stats.refused.entry(status as u8).or_default() += 1;
            }
        }
    }

    fn len_hint(&self) -> Option<u64> {
        self.len_hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{parse_bytes, TraceFormat, TraceOptions};
    use crate::workload::HostOp;

    /// Every op code of a small zone trace, and the statuses of refused
    /// ones: off the pointer, append not at a zone start, past capacity.
    #[test]
    fn zone_trace_commands_through_the_front_end() {
        let g = ZoneGeometry {
            zones: 4,
            size: 16,
            cap: 12,
            max_open: 2,
            max_active: 3,
        };
        let u = 4096u64;
        let text = format!(
            "0 W {z1} 8192\n1 A {z1} 4096\n2 R {z1} 12288\n3 W {z1} 4096\n\
             4 A {off} 4096\n5 ZO {z2}\n6 ZC {z2}\n7 ZF {z1}\n8 W {z1} 4096\n\
             9 ZR {z1}\n10 A {z1} 53248\n11 T 0 4096\n",
            z1 = 16 * u,
            z2 = 32 * u,
            off = 17 * u
        );
        let opts = TraceOptions {
            format: Some(TraceFormat::Ftl),
            ..TraceOptions::default()
        };
        let t = parse_bytes("z.trace", text.as_bytes(), &opts, 64 * u).unwrap();
        let mut table = vec![Zone::default(); 4];
        let mut zr = ZoneReplay::new(t.requests.into_iter(), g, &mut table, u, None).unwrap();
        let out: Vec<(HostOp, u32, u32)> = std::iter::from_fn(|| zr.next_request())
            .map(|r| (r.op, r.lpn, r.units))
            .collect();
        let m1 =
            zr.zones()
                .marker_lba(1, firmware_core::tech::zns::zone::Marker::Finished) as u32;
        assert_eq!(
            out,
            vec![
                (HostOp::Write, 16, 2),
                (HostOp::Write, 18, 1),
                (HostOp::Read, 16, 3),
                (HostOp::Write, m1, 1),
                (HostOp::Trim, 16, 3),
                (HostOp::Trim, m1, 1),
            ]
        );
        let s = &zr.stats;
        assert_eq!(
            (
                s.zone_writes,
                s.appends,
                s.reads,
                s.opens,
                s.closes,
                s.finishes,
                s.resets
            ),
            (1, 1, 1, 1, 1, 1, 1)
        );
        let refused: Vec<(u8, u64)> = s.refused.iter().map(|(k, v)| (*k, *v)).collect();
        // 02h Invalid Field (append off a zone start, the trim), B8h Zone
        // Boundary Error (13 blocks into a 12-block zone), B9h Zone Is Full
        // (a write after finish), BCh Zone Invalid Write (off the pointer).
        assert_eq!(refused, vec![(0x02, 2), (0xB8, 1), (0xB9, 1), (0xBC, 1)]);
    }
}
