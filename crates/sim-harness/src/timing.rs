//! NAND, channel and DRAM-bus timing by resource reservation.
//!
//! Each die, each channel and the shared DRAM bus keeps the time it becomes
//! free. An operation reserves them in the order it uses them, starting no
//! earlier than its issue time, so contention between dies sharing a channel
//! and between channels sharing DRAM falls out of the reservations. The cost
//! per operation is a handful of additions, so tens of millions of operations
//! run in seconds.

use firmware_core::{Geometry, NandCmd, NandOp};

/// Timing parameters in nanoseconds and bytes per nanosecond.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimingParams {
    /// Array read time tR.
    pub t_read_ns: u64,
    /// Program time tPROG.
    pub t_prog_ns: u64,
    /// Block erase time tBERS.
    pub t_erase_ns: u64,
    /// Command and address cycles per operation.
    pub t_cmd_ns: u64,
    /// Channel rate in bytes per ns (MT/s on an 8-bit bus / 1000).
    pub channel_bytes_per_ns: f64,
    /// DRAM bus rate in bytes per ns.
    pub dram_bytes_per_ns: f64,
    /// Host interface rate in bytes per ns.
    pub host_bytes_per_ns: f64,
}

/// Busy-until times of every resource, and how long each was busy.
#[derive(Clone, Debug)]
pub struct Timing {
    p: TimingParams,
    g: Geometry,
    /// Transfer ns of 0..=8 units on a channel and on the DRAM bus.
    chan_ns: [u64; 9],
    dram_ns: [u64; 9],
    die_free: Vec<u64>,
    chan_free: Vec<u64>,
    dram_free: u64,
    host_free: u64,
    /// Total ns each channel spent transferring.
    pub chan_busy: Vec<u64>,
    /// Total ns each die spent busy (array time plus register occupancy).
    pub die_busy: Vec<u64>,
}

fn xfer_ns(bytes: u64, rate: f64) -> u64 {
    if rate <= 0.0 {
        return 0;
    }
    (bytes as f64 / rate).ceil() as u64
}

impl Timing {
    /// Idle resources for a geometry.
    pub fn new(g: Geometry, p: TimingParams) -> Self {
        let dies = g.dies() as usize;
        Timing {
            p,
            g,
            chan_ns: core::array::from_fn(|n| {
                xfer_ns(n as u64 * u64::from(g.unit_bytes()), p.channel_bytes_per_ns)
            }),
            dram_ns: core::array::from_fn(|n| {
                xfer_ns(n as u64 * u64::from(g.unit_bytes()), p.dram_bytes_per_ns)
            }),
            die_free: vec![0; dies],
            chan_free: vec![0; usize::from(g.channels)],
            dram_free: 0,
            host_free: 0,
            chan_busy: vec![0; usize::from(g.channels)],
            die_busy: vec![0; dies],
        }
    }

    /// Parameters in force.
    pub fn params(&self) -> &TimingParams {
        &self.p
    }

    /// Reserves the resources `op` needs from `now` on; returns its completion time.
    pub fn schedule(&mut self, op: &NandOp, now: u64) -> u64 {
        let (block, units) = match op.cmd {
            NandCmd::Read { page, units, .. } => (self.g.block_of(page), u64::from(units.count())),
            NandCmd::Program { page, spare, .. } => {
                (self.g.block_of(page), u64::from(spare.units.count()))
            }
            NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => (block, 0),
            NandCmd::Copyback { src, .. } => (self.g.block_of(src), 0),
        };
        let die = self.g.die_of(block).0 as usize;
        let ch = self.g.channel_of_die(self.g.die_of(block)) as usize;
        let n = (units as usize).min(8);
        let chan_x = self.chan_ns[n];
        let dram_x = self.dram_ns[n];
        let die_free = self.die_free[die];
        match op.cmd {
            NandCmd::Read { .. } => {
                // Array read, then data out over the channel into DRAM.
                let start = now.max(die_free) + self.p.t_cmd_ns;
                let sensed = start + self.p.t_read_ns;
                let cs = sensed.max(self.chan_free[ch]);
                let ce = cs + chan_x;
                self.chan_free[ch] = ce;
                self.chan_busy[ch] += chan_x;
                let ds = cs.max(self.dram_free);
                let de = ds + dram_x;
                self.dram_free = de;
                self.die_free[die] = ce;
                self.die_busy[die] += ce - start.min(ce);
                ce.max(de)
            }
            NandCmd::Program { .. } => {
                // Data from DRAM over the channel into the die's register, then tPROG.
                let ds = now.max(self.dram_free);
                let de = ds + dram_x;
                self.dram_free = de;
                let cs = now.max(self.chan_free[ch]).max(die_free) + self.p.t_cmd_ns;
                let ce = cs.max(ds) + chan_x;
                self.chan_free[ch] = ce;
                self.chan_busy[ch] += chan_x;
                let done = ce.max(de) + self.p.t_prog_ns;
                self.die_busy[die] += done - cs;
                self.die_free[die] = done;
                done
            }
            NandCmd::Erase { .. } | NandCmd::GuardedErase { .. } => {
                let start = now.max(die_free) + self.p.t_cmd_ns;
                let done = start + self.p.t_erase_ns;
                self.die_busy[die] += done - start;
                self.die_free[die] = done;
                done
            }
            NandCmd::Copyback { .. } => {
                // Read into the page register and program from it: no channel, no DRAM.
                let start = now.max(die_free) + 2 * self.p.t_cmd_ns;
                let done = start + self.p.t_read_ns + self.p.t_prog_ns;
                self.die_busy[die] += done - start;
                self.die_free[die] = done;
                done
            }
        }
    }

    /// Reserves the host link for `bytes` from `now` on; returns when the transfer ends.
    pub fn host_transfer(&mut self, bytes: u64, now: u64) -> u64 {
        let x = xfer_ns(bytes, self.p.host_bytes_per_ns);
        let s = now.max(self.host_free);
        self.host_free = s + x;
        s + x
    }

    /// Resets the busy accounting (after preconditioning), keeping reservations.
    pub fn reset_busy(&mut self) {
        self.chan_busy.iter_mut().for_each(|b| *b = 0);
        self.die_busy.iter_mut().for_each(|b| *b = 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firmware_core::{BlockId, OpId, Origin, Ppn, Slot, Spare, UnitMask};

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            dies_per_channel: 2,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_bytes: 4096,
            pages_per_wordline: 1,
            units_per_page: 1,
        }
    }

    fn params() -> TimingParams {
        TimingParams {
            t_read_ns: 50_000,
            t_prog_ns: 500_000,
            t_erase_ns: 3_000_000,
            t_cmd_ns: 0,
            channel_bytes_per_ns: 0.4096, // 4096 B in 10 us
            dram_bytes_per_ns: 100.0,
            host_bytes_per_ns: 100.0,
        }
    }

    fn program(page: u32) -> NandOp {
        let spare = Spare {
            units: UnitMask::full(1),
            ..Spare::default()
        };
        NandOp {
            id: OpId(0),
            cmd: NandCmd::Program {
                page: Ppn(page),
                src: [Slot(0); 8],
                spare,
            },
            origin: Origin::Host,
        }
    }

    #[test]
    fn programs_on_two_dies_share_the_channel_but_overlap_tprog() {
        let mut t = Timing::new(geo(), params());
        let a = t.schedule(&program(0), 0); // die 0
        let b = t.schedule(&program(16), 0); // die 1 (block 4)
        assert_eq!(a, 10_000 + 500_000); // 10 us on the channel (DRAM overlaps), then tPROG
        assert_eq!(b, 20_000 + 500_000); // waits for the channel, then programs in parallel
                                         // A second program on die 0 waits for tPROG of the first.
        let c = t.schedule(&program(1), 0);
        assert_eq!(c, a + 10_000 + 500_000);
    }

    #[test]
    fn copyback_uses_no_channel() {
        let mut t = Timing::new(geo(), params());
        let op = NandOp {
            id: OpId(0),
            cmd: NandCmd::Copyback {
                src: Ppn(0),
                dst: Ppn(1),
                spare: Spare::default(),
            },
            origin: Origin::Gc,
        };
        assert_eq!(t.schedule(&op, 0), 550_000);
        assert_eq!(t.chan_busy[0], 0);
        let e = NandOp {
            id: OpId(0),
            cmd: NandCmd::Erase { block: BlockId(1) },
            origin: Origin::Gc,
        };
        assert_eq!(t.schedule(&e, 0), 550_000 + 3_000_000);
    }
}
