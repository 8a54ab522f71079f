//! The zone front end of a zoned namespace (`host.interface = zns`): every
//! zone command passes the zone state machine ([`Zones`]) first, and an
//! accepted one becomes the core requests it stands for, queued in order:
//! a write or append is a write of its blocks with the zone's placement
//! handle, a reset trims the blocks written and the zone's finish marker,
//! a finish writes that marker; open and close change state only. A
//! refused command sends nothing and returns the NVMe status.
//!
//! The zone host of `ftl synth` ([`crate::zns_host::ZoneLog`]) and trace
//! replay ([`crate::zone_replay::ZoneReplay`]) both drive the device
//! through it, so a zone command means the same core requests whoever
//! sends it.

use std::collections::VecDeque;

use firmware_core::tech::zns::zone::{Marker, Zone, ZoneAction, ZoneGeometry, ZoneStatus, Zones};

use crate::workload::{HostOp, HostRequest};

/// Zone commands in, core requests out (see the module).
pub struct ZoneFront<'z> {
    zones: Zones<'z>,
    out: VecDeque<HostRequest>,
}

impl<'z> ZoneFront<'z> {
    /// Zones of shape `geo` over `table` (one entry per zone), all empty.
    pub fn new(geo: ZoneGeometry, table: &'z mut [Zone]) -> Result<Self, String> {
        Ok(ZoneFront {
            zones: Zones::new(geo, table).map_err(|e| e.to_string())?,
            out: VecDeque::new(),
        })
    }

    /// The zones now.
    pub fn zones(&self) -> &Zones<'z> {
        &self.zones
    }

    /// The next queued core request.
    pub fn pop(&mut self) -> Option<HostRequest> {
        self.out.pop_front()
    }

    /// Core requests queued now.
    pub fn queued(&self) -> usize {
        self.out.len()
    }

    /// The `i`-th queued core request, to adjust (e.g. its idle time).
    pub fn queued_mut(&mut self, i: usize) -> Option<&mut HostRequest> {
        self.out.get_mut(i)
    }

    /// Queues a core request as it is (a flush, or a read the caller has
    /// checked).
    pub fn push(&mut self, r: HostRequest) {
        self.out.push_back(r);
    }

    /// Queues a core request of `units` blocks from `lba`.
    pub fn emit(&mut self, op: HostOp, lba: u64, units: u32, placement: u8, t: u64) {
        self.out.push_back(HostRequest {
            time_ns: t,
            op,
            lpn: lba as u32,
            units,
            placement,
            idle_ns: 0,
            window: 0,
        });
    }

    /// A Write of `n` blocks at `slba` (only at the zone's write pointer).
    pub fn write(&mut self, slba: u64, n: u32, t: u64) -> Result<(), ZoneStatus> {
        let h = self.zones.write(slba, n)?;
        self.emit(HostOp::Write, slba, n, h, t);
        Ok(())
    }

    /// A Zone Append of `n` blocks to the zone starting at `zslba`;
    /// returns the first LBA written.
    pub fn append(&mut self, zslba: u64, n: u32, t: u64) -> Result<u64, ZoneStatus> {
        let (lba, h) = self.zones.append(zslba, n)?;
        self.emit(HostOp::Write, lba, n, h, t);
        Ok(lba)
    }

    /// A Read of `n` blocks at `slba`.
    pub fn read(&mut self, slba: u64, n: u32, t: u64) -> Result<(), ZoneStatus> {
        self.zones.read(slba, n)?;
        self.emit(HostOp::Read, slba, n, 0, t);
        Ok(())
    }

    /// A Zone Send `action` on the zone starting at `zslba`. Returns the
    /// blocks a reset discarded (0 for the other actions).
    pub fn manage(&mut self, zslba: u64, action: ZoneAction, t: u64) -> Result<u32, ZoneStatus> {
        let written = self.zones.manage(zslba, action)?;
        let Some(z) = self.zones.zone_of(zslba) else {
            return Ok(written);
        };
        let marker = self.zones.marker_lba(z, Marker::Finished);
        match action {
            ZoneAction::Reset => {
                if written > 0 {
                    self.emit(HostOp::Trim, zslba, written, 0, t);
                }
                self.emit(HostOp::Trim, marker, 1, 0, t);
            }
            ZoneAction::Finish => self.emit(HostOp::Write, marker, 1, 0, t),
            _ => {}
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> ZoneGeometry {
        ZoneGeometry {
            zones: 4,
            size: 16,
            cap: 12,
            max_open: 2,
            max_active: 3,
        }
    }

    fn ops(f: &mut ZoneFront<'_>) -> Vec<(HostOp, u32, u32)> {
        std::iter::from_fn(|| f.pop())
            .map(|r| (r.op, r.lpn, r.units))
            .collect()
    }

    /// Each command's core requests, and refusals that send nothing.
    #[test]
    fn commands_become_core_requests() {
        let g = geo();
        let mut table = vec![Zone::default(); g.zones as usize];
        let mut f = ZoneFront::new(g, &mut table).unwrap();
        let m1 = f.zones().marker_lba(1, Marker::Finished) as u32;
        f.write(16, 3, 0).unwrap();
        assert_eq!(f.append(16, 2, 0), Ok(19));
        assert_eq!(f.write(16, 1, 0), Err(ZoneStatus::ZoneInvalidWrite));
        assert_eq!(f.append(17, 1, 0), Err(ZoneStatus::InvalidField));
        assert_eq!(f.write(16 + 5, 8, 0), Err(ZoneStatus::ZoneBoundaryError));
        f.read(16, 5, 0).unwrap();
        assert_eq!(
            ops(&mut f),
            vec![
                (HostOp::Write, 16, 3),
                (HostOp::Write, 19, 2),
                (HostOp::Read, 16, 5)
            ]
        );
        f.manage(16, ZoneAction::Finish, 0).unwrap();
        assert_eq!(ops(&mut f), vec![(HostOp::Write, m1, 1)]);
        assert_eq!(f.write(21, 1, 0), Err(ZoneStatus::ZoneIsFull));
        assert_eq!(f.manage(16, ZoneAction::Reset, 0), Ok(5));
        assert_eq!(
            ops(&mut f),
            vec![(HostOp::Trim, 16, 5), (HostOp::Trim, m1, 1)]
        );
        f.manage(32, ZoneAction::Open, 0).unwrap();
        f.manage(32, ZoneAction::Close, 0).unwrap();
        assert!(ops(&mut f).is_empty());
        assert_eq!(
            f.manage(32, ZoneAction::Offline, 0),
            Err(ZoneStatus::InvalidZoneStateTransition)
        );
    }
}
