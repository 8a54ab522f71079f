//! NAND, channel and DRAM-bus timing by resource reservation.
//!
//! Each die, each channel and the shared DRAM bus keeps the time it becomes
//! free. An operation reserves them in the order it uses them, starting no
//! earlier than its issue time, so contention between dies sharing a channel
//! and between channels sharing DRAM falls out of the reservations. The cost
//! per operation is a handful of additions, so tens of millions of operations
//! run in seconds.
//!
//! Stages of an operation: the command/address stage holds the channel
//! (`t_cmd_ns`), then read busy and data out, or data in and program busy;
//! every page transfer carries the spare area. GC page copies follow
//! `gc_copy` (seed 002): with ICB and DGCB the program of a GC page takes no
//! data-in, because the page is already in the destination's register (ICB:
//! read internally; DGCB: latched while the source drove it out, tDL
//! longer). With `gc.destination = plane` the core keeps GC inside one
//! plane, so GCB and LCB cost the same here; with `channel` GC pages move
//! between ways and a DGCB pair is one direct transfer (`crate::gc_xway`).
//! The way-to-way pipelining of a GC transaction is in [`crate::gc_copy`].
//! Channel time inside GC windows (from the start to the end of GC
//! operations on the channel) is counted apart, for the channel utilisation
//! during GC, and so is GC's own channel time (`gc_own`).

use firmware_core::{Geometry, NandCmd, NandOp, Origin};

use crate::gc_merge::CopyMode;
use crate::place::{Decoder, Place};

/// An operation as the timing model reads it: its command and origin,
/// borrowed from a [`NandOp`] or from the core's operation table while the
/// operation is in flight (`Ftl::op_in_flight`), so a driver need not keep
/// a copy of every operation it has queued on a die.
#[derive(Clone, Copy, Debug)]
pub struct OpRef<'a> {
    /// The command.
    pub cmd: &'a NandCmd,
    /// Why it was issued.
    pub origin: Origin,
}

impl<'a> From<&'a NandOp> for OpRef<'a> {
    #[inline(always)]
    fn from(op: &'a NandOp) -> Self {
        OpRef {
            cmd: &op.cmd,
            origin: op.origin,
        }
    }
}

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
    /// Spare bytes moved with every page transfer.
    pub spare_bytes: u64,
    /// RE-to-WE skew of a direct data transfer (DGCB), tDL.
    pub t_dl_ns: u64,
    /// How GC page copies cross the channel.
    pub gc_copy: CopyMode,
    /// Cache program: data-in of the next page of a block overlaps the
    /// program busy of the one before.
    pub cache_program: bool,
    /// GC pages go to other ways of the channel (`gc.destination =
    /// channel` with `gcb` or `dgcb`): a DGCB copy is then timed as a
    /// direct transfer between the two ways ([`crate::gc_xway`]).
    pub gc_cross_way: bool,
    /// Channel time of one retransmitted corrected byte (change-write-column
    /// command, two column cycles, tADL, one data cycle).
    pub retx_byte_ns: u64,
    /// ECC codewords (1 KiB each) per mapping unit.
    pub codewords_per_unit: u64,
}

/// Busy-until times of every resource, and how long each was busy.
#[derive(Clone, Debug)]
pub struct Timing {
    pub(crate) p: TimingParams,
    pub(crate) g: Geometry,
    /// Places of operations, decoded without divisions.
    dec: Decoder,
    /// Transfer ns of 0..=8 units on a channel and on the DRAM bus.
    pub(crate) chan_ns: [u64; 9],
    pub(crate) dram_ns: [u64; 9],
    /// Per die: its reservations and busy time, one record.
    pub(crate) dies: Vec<DieTime>,
    /// Per channel: its reservation, busy time and GC window, one record.
    pub(crate) chans: Vec<ChanTime>,
    pub(crate) dram_free: u64,
    host_free: u64,
    /// Corrected bytes sent again to destinations after direct transfers.
    pub retx_bytes: u64,
    /// Direct data transfers between two ways (DGCB, cross-way GC).
    pub ddt_pages: u64,
    /// DDT master/slave messages of cross-way DGCB copies.
    pub ddt: crate::ddt_msgs::DdtLog,
    /// Per GC slot: the die its page was read from, the read's bit errors
    /// and when the source's read busy ended (`crate::gc_xway`).
    pub(crate) slot_src: Vec<(u32, u16, u64)>,
    /// Per plane: block of the plane's last program (`u32::MAX`: none).
    pub(crate) prog_block: Vec<u32>,
    /// Channel holds of the operation being scheduled.
    holds: Holds,
    /// The last host transfer's size and duration: requests mostly have
    /// one size, and the duration is a floating-point division and ceiling.
    last_host: (u64, u64),
}

/// One die's timing state. What one operation reads and writes of a die
/// sits in one record, so scheduling it looks the die up once.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DieTime {
    /// When the die is free.
    pub(crate) free: u64,
    /// When the last program's array busy began (cache register free).
    pub(crate) reg_free: u64,
    /// Total ns busy (array time plus register occupancy).
    pub(crate) busy: u64,
    /// Whether its last operation was a program.
    pub(crate) last_prog: bool,
}

/// One channel's timing state, one record as [`DieTime`] is.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChanTime {
    /// When the channel is free.
    pub(crate) free: u64,
    /// Total ns transferring.
    pub(crate) busy: u64,
    /// ns inside GC windows.
    pub(crate) gc_window: u64,
    /// Transfer ns inside GC windows.
    pub(crate) gc_busy: u64,
    /// GC's own channel holds (command and data cycles of GC operations
    /// only, not host transfers inside GC windows).
    pub(crate) gc_own: u64,
    /// The current GC window, (start, end).
    pub(crate) gc_open: (u64, u64),
}

/// The channel holds of the operation being scheduled: (start, end).
#[derive(Clone, Copy, Debug, Default)]
struct Holds {
    at: [(u64, u64); 2],
    n: usize,
}

impl ChanTime {
    /// Holds the channel for `ns` from `start` (at or after it is free);
    /// returns the end.
    #[inline]
    fn hold(&mut self, holds: &mut Holds, start: u64, ns: u64) -> u64 {
        if ns == 0 {
            return start;
        }
        let end = start + ns;
        self.free = end;
        self.busy += ns;
        if let Some(h) = holds.at.get_mut(holds.n) {
            *h = (start, end);
            holds.n += 1;
        }
        end
    }

    /// The command/address stage of `t_cmd` ns from `start`: on the
    /// channel when it has a length, else nothing. Returns when it ends.
    #[inline]
    fn command(&mut self, holds: &mut Holds, t_cmd: u64, start: u64) -> u64 {
        if t_cmd == 0 {
            return start;
        }
        let s = start.max(self.free);
        self.hold(holds, s, t_cmd)
    }

    /// Books the channel holds of the operation just scheduled against GC
    /// windows: a GC operation spanning `[start, end)` opens or extends the
    /// window and all its holds count; another operation's holds count where
    /// they overlap the window open now.
    #[inline]
    fn account_gc(&mut self, holds: &mut Holds, gc: bool, start: u64, end: u64) {
        let held = holds.at.get(..holds.n).unwrap_or(&[]);
        let (from, until) = self.gc_open;
        if gc {
            let own = held.iter().map(|(s, e)| e - s).sum::<u64>();
            self.gc_busy += own;
            self.gc_own += own;
            if start >= until {
                self.gc_open = (start, end);
                self.gc_window += end - start;
            } else if end > until {
                self.gc_open = (from, end);
                self.gc_window += end - until;
            }
        } else {
            for &(s, e) in held {
                self.gc_busy += e.min(until).saturating_sub(s.max(from));
            }
        }
        holds.n = 0;
    }
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
            dec: Decoder::new(&g),
            chan_ns: core::array::from_fn(|n| {
                let spare = if n > 0 { p.spare_bytes } else { 0 };
                xfer_ns(
                    n as u64 * u64::from(g.unit_bytes()) + spare,
                    p.channel_bytes_per_ns,
                )
            }),
            dram_ns: core::array::from_fn(|n| {
                xfer_ns(n as u64 * u64::from(g.unit_bytes()), p.dram_bytes_per_ns)
            }),
            dies: vec![DieTime::default(); dies],
            chans: vec![ChanTime::default(); usize::from(g.channels)],
            dram_free: 0,
            host_free: 0,
            retx_bytes: 0,
            ddt_pages: 0,
            ddt: crate::ddt_msgs::DdtLog::default(),
            slot_src: Vec::new(),
            holds: Holds::default(),
            last_host: (0, 0),
            prog_block: vec![u32::MAX; g.planes() as usize],
        }
    }

    /// Total ns each channel spent transferring.
    pub fn chan_busy(&self) -> Vec<u64> {
        self.chans.iter().map(|c| c.busy).collect()
    }

    /// Total ns each die spent busy (array time plus register occupancy).
    pub fn die_busy(&self) -> Vec<u64> {
        self.dies.iter().map(|d| d.busy).collect()
    }

    /// Per channel: ns inside GC windows.
    pub fn gc_window(&self) -> Vec<u64> {
        self.chans.iter().map(|c| c.gc_window).collect()
    }

    /// Per channel: transfer ns inside GC windows.
    pub fn gc_busy(&self) -> Vec<u64> {
        self.chans.iter().map(|c| c.gc_busy).collect()
    }

    /// Per channel: GC's own channel holds (command and data cycles of GC
    /// operations only, not host transfers inside GC windows).
    pub fn gc_own(&self) -> Vec<u64> {
        self.chans.iter().map(|c| c.gc_own).collect()
    }

    /// Holds channel `ch` for `ns` from `start` (at or after it is free);
    /// returns the end.
    pub(crate) fn hold_channel(&mut self, ch: usize, start: u64, ns: u64) -> u64 {
        self.chans[ch].hold(&mut self.holds, start, ns)
    }

    /// The command/address stage on channel `ch` from `start`: on the
    /// channel when it has a length, else nothing. Returns when it ends.
    pub(crate) fn command(&mut self, ch: usize, start: u64) -> u64 {
        self.chans[ch].command(&mut self.holds, self.p.t_cmd_ns, start)
    }

    /// [`ChanTime::account_gc`] on channel `ch`.
    pub(crate) fn account_gc(&mut self, ch: usize, gc: bool, start: u64, end: u64) {
        self.chans[ch].account_gc(&mut self.holds, gc, start, end);
    }

    /// Whether `op` is a program that continues a cache-program sequence:
    /// cache program on, the die's last operation a program, and the last
    /// program of `op`'s plane one of the same block (planes of a die take
    /// turns, each filling its own block).
    pub fn continues_cache<'a>(&self, op: impl Into<OpRef<'a>>) -> bool {
        let op = op.into();
        self.continues_cache_at(op, self.place(op))
    }

    /// [`Self::continues_cache`] for `op` at `at` (its [`Self::place`]).
    #[inline]
    pub fn continues_cache_at<'a>(&self, op: impl Into<OpRef<'a>>, at: Place) -> bool {
        let op = op.into();
        self.p.cache_program
            && matches!(op.cmd, NandCmd::Program { .. })
            && self.dies.get(at.die as usize).is_some_and(|d| d.last_prog)
            && self.prog_block.get(at.plane as usize) == Some(&at.block)
    }

    /// After scheduling `op` at `at` (its [`Self::place`]): with cache
    /// program, when the die can take the next program of the same block
    /// (its array has started `op`).
    #[inline]
    pub fn cache_accept_at<'a>(&self, op: impl Into<OpRef<'a>>, at: Place) -> Option<u64> {
        let op = op.into();
        if !(self.p.cache_program && matches!(op.cmd, NandCmd::Program { .. })) {
            return None;
        }
        self.dies.get(at.die as usize).map(|d| d.reg_free)
    }

    /// Where `op` runs: its block, plane, die and channel. A driver that
    /// schedules an operation later than it queues it can decode this once
    /// and pass it to the `_at` methods.
    #[inline]
    pub fn place<'a>(&self, op: impl Into<OpRef<'a>>) -> Place {
        self.dec.op(op.into().cmd)
    }

    /// Parameters in force.
    pub fn params(&self) -> &TimingParams {
        &self.p
    }

    /// Reserves the resources `op` needs from `now` on; returns its completion time.
    pub fn schedule<'a>(&mut self, op: impl Into<OpRef<'a>>, now: u64) -> u64 {
        self.schedule_read(op, now, 0)
    }

    /// [`Self::schedule`] for an operation whose read found `bit_errors`
    /// (the largest count in any codeword; 0 for other operations).
    pub fn schedule_read<'a>(
        &mut self,
        op: impl Into<OpRef<'a>>,
        now: u64,
        bit_errors: u16,
    ) -> u64 {
        let op = op.into();
        self.schedule_at(op, self.place(op), now, bit_errors)
    }

    /// [`Self::schedule_read`] for `op` at `at` (its [`Self::place`]).
    pub fn schedule_at<'a>(
        &mut self,
        op: impl Into<OpRef<'a>>,
        at: Place,
        now: u64,
        bit_errors: u16,
    ) -> u64 {
        let op = op.into();
        let gc = op.origin == Origin::Gc;
        if gc && self.p.gc_cross_way {
            if let Some(done) = self.schedule_cross_way(op, now, bit_errors) {
                return done;
            }
        }
        let units = match *op.cmd {
            NandCmd::Read { units, .. } => u64::from(units.count()),
            NandCmd::Program { spare, .. } => u64::from(spare.units.count()),
            NandCmd::Erase { .. } | NandCmd::GuardedErase { .. } | NandCmd::Copyback { .. } => 0,
            // Metadata pages move a whole page.
            NandCmd::ProgramMeta { .. } | NandCmd::ReadMeta { .. } => {
                u64::from(self.g.units_per_page)
            }
        };
        let n = (units as usize).min(8);
        // Without data-in: the page is in the destination's register already.
        let latched = gc && matches!(self.p.gc_copy, CopyMode::Icb | CopyMode::Dgcb);
        let mut chan_x = self.chan_ns[n];
        let mut dram_x = self.dram_ns[n];
        let cached = self.continues_cache_at(op, at);
        let p = self.p;
        let program = matches!(op.cmd, NandCmd::Program { .. });
        if program {
            self.prog_block[at.plane as usize] = at.block;
        }
        let d = &mut self.dies[at.die as usize];
        let c = &mut self.chans[at.ch as usize];
        let holds = &mut self.holds;
        // A cached program's data-in waits only for the cache register.
        let start = if cached {
            now.max(d.reg_free)
        } else {
            now.max(d.free)
        };
        let done = match *op.cmd {
            NandCmd::Read { .. } | NandCmd::ReadMeta { .. } => {
                if gc && p.gc_copy == CopyMode::Dgcb {
                    chan_x += p.t_dl_ns;
                }
                // Command, array read, then data out over the channel into DRAM.
                let sensed = c.command(holds, p.t_cmd_ns, start) + p.t_read_ns;
                let cs = sensed.max(c.free);
                let ce = c.hold(holds, cs, chan_x);
                let ds = cs.max(self.dram_free);
                let de = ds + dram_x;
                self.dram_free = de;
                d.free = ce;
                d.busy += ce - start.min(ce);
                ce.max(de)
            }
            NandCmd::Program { .. } | NandCmd::ProgramMeta { .. } => {
                if latched {
                    chan_x = 0;
                    dram_x = 0;
                }
                // Data from DRAM over the channel into the die's register, then tPROG.
                let ds = now.max(self.dram_free);
                let de = ds + dram_x;
                self.dram_free = de;
                let cs = start.max(c.free);
                let xs = c.command(holds, p.t_cmd_ns, cs).max(ds);
                let ce = c.hold(holds, xs, chan_x);
                let busy_from = ce.max(de).max(d.free);
                let done = busy_from + p.t_prog_ns;
                d.busy += done - cs.max(d.free);
                d.free = done;
                d.reg_free = busy_from;
                done
            }
            NandCmd::Erase { .. } | NandCmd::GuardedErase { .. } => {
                let done = c.command(holds, p.t_cmd_ns, start) + p.t_erase_ns;
                d.busy += done - start;
                d.free = done;
                done
            }
            NandCmd::Copyback { .. } => {
                // Read into the page register and program from it: no data
                // transfer, no DRAM; two command stages.
                let sensed = c.command(holds, p.t_cmd_ns, start) + p.t_read_ns;
                let done = c.command(holds, p.t_cmd_ns, sensed) + p.t_prog_ns;
                d.busy += done - start;
                d.free = done;
                done
            }
        };
        d.last_prog = program;
        c.account_gc(holds, gc, start, done);
        done
    }

    /// Reserves the host link for `bytes` from `now` on; returns when the transfer ends.
    pub fn host_transfer(&mut self, bytes: u64, now: u64) -> u64 {
        let x = if self.last_host.0 == bytes {
            self.last_host.1
        } else {
            let x = xfer_ns(bytes, self.p.host_bytes_per_ns);
            self.last_host = (bytes, x);
            x
        };
        let s = now.max(self.host_free);
        self.host_free = s + x;
        s + x
    }

    /// Reserves the DRAM bus for `bytes` from `now` on (a controller core
    /// reading or copying a table); returns when the transfer ends.
    pub fn dram_transfer(&mut self, bytes: u64, now: u64) -> u64 {
        let s = now.max(self.dram_free);
        self.dram_free = s + xfer_ns(bytes, self.p.dram_bytes_per_ns);
        self.dram_free
    }

    /// Resets the busy accounting (after preconditioning), keeping reservations.
    pub fn reset_busy(&mut self) {
        for c in &mut self.chans {
            c.busy = 0;
            c.gc_window = 0;
            c.gc_busy = 0;
            c.gc_own = 0;
        }
        self.dies.iter_mut().for_each(|d| d.busy = 0);
        self.retx_bytes = 0;
        self.ddt_pages = 0;
        self.ddt = crate::ddt_msgs::DdtLog::default();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use firmware_core::{BlockId, OpId, Origin, Ppn, Slot, Spare, UnitMask};

    /// One channel, two dies of one plane, 4 KiB pages.
    pub(crate) fn geo() -> Geometry {
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

    /// 10 us page transfers, no command stage.
    pub(crate) fn params() -> TimingParams {
        TimingParams {
            t_read_ns: 50_000,
            t_prog_ns: 500_000,
            t_erase_ns: 3_000_000,
            t_cmd_ns: 0,
            channel_bytes_per_ns: 0.4096, // 4096 B in 10 us
            dram_bytes_per_ns: 100.0,
            host_bytes_per_ns: 100.0,
            spare_bytes: 0,
            t_dl_ns: 0,
            gc_copy: CopyMode::Gcb,
            cache_program: false,
            gc_cross_way: false,
            retx_byte_ns: 0,
            codewords_per_unit: 4,
        }
    }

    fn program(page: u32) -> NandOp {
        program_from(page, Origin::Host)
    }

    fn program_from(page: u32, origin: Origin) -> NandOp {
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
            origin,
        }
    }

    fn read_from(page: u32, origin: Origin) -> NandOp {
        NandOp {
            id: OpId(0),
            cmd: NandCmd::Read {
                page: Ppn(page),
                units: UnitMask::full(1),
                dst: [Slot(0); 8],
            },
            origin,
        }
    }

    /// A GC copy (read of page 0, program of page 1) under `mode`, with a
    /// 100 ns command stage and 96 spare bytes: (end, channel busy, GC
    /// window, GC busy).
    fn gc_copy(mode: CopyMode) -> (u64, u64, u64, u64) {
        let p = TimingParams {
            t_cmd_ns: 100,
            spare_bytes: 96,
            t_dl_ns: 20,
            gc_copy: mode,
            ..params()
        };
        let mut t = Timing::new(geo(), p);
        let r = t.schedule(&read_from(0, Origin::Gc), 0);
        let w = t.schedule(&program_from(1, Origin::Gc), r);
        (w, t.chans[0].busy, t.chans[0].gc_window, t.chans[0].gc_busy)
    }

    #[test]
    fn gc_copy_modes_put_the_page_on_the_channel_once_or_twice() {
        // 4096 + 96 bytes at 0.4096 B/ns = 10235 ns per page transfer.
        let x = 10_235;
        let gcb = gc_copy(CopyMode::Gcb);
        assert_eq!(gcb.0, 100 + 50_000 + x + 100 + x + 500_000);
        assert_eq!(gcb.1, 200 + 2 * x);
        let icb = gc_copy(CopyMode::Icb);
        assert_eq!(icb.0, 100 + 50_000 + x + 100 + 500_000);
        assert_eq!(icb.1, 200 + x);
        let dgcb = gc_copy(CopyMode::Dgcb);
        assert_eq!(dgcb.1, 200 + x + 20, "one transfer, tDL longer");
        assert_eq!(gc_copy(CopyMode::Lcb), gcb);
        // The whole copy is GC time, and all its channel time is inside it.
        assert_eq!((gcb.2, gcb.3), (gcb.0, gcb.1));
    }

    #[test]
    fn cache_program_overlaps_data_in_with_the_previous_program_of_the_block() {
        let p = TimingParams {
            cache_program: true,
            ..params()
        };
        let mut t = Timing::new(geo(), p);
        let a = t.schedule(&program(0), 0);
        assert_eq!(a, 10_000 + 500_000);
        // The die takes the next page of the block once the array started.
        let at = t
            .cache_accept_at(&program(0), t.place(&program(0)))
            .unwrap();
        assert_eq!(at, 10_000);
        assert!(t.continues_cache(&program(1)));
        let b = t.schedule(&program(1), at);
        assert_eq!(b, a + 500_000, "data-in hidden under the first tPROG");
        // Another block, or a read in between, ends the sequence.
        assert!(!t.continues_cache(&program(4)));
        t.schedule(&read_from(2, Origin::Host), b);
        assert!(!t.continues_cache(&program(3)));
        // Without cache program the second page waits for the first.
        let mut plain = Timing::new(geo(), params());
        let a = plain.schedule(&program(0), 0);
        assert!(!plain.continues_cache(&program(1)));
        assert_eq!(
            plain.cache_accept_at(&program(0), plain.place(&program(0))),
            None
        );
        assert_eq!(plain.schedule(&program(1), a), a + 10_000 + 500_000);
    }

    #[test]
    fn host_transfers_count_toward_gc_only_inside_a_gc_window() {
        let mut t = Timing::new(geo(), params());
        // GC read on die 0: window [0, 60 us).
        let r = t.schedule(&read_from(0, Origin::Gc), 0);
        assert_eq!(r, 60_000);
        // Host program on die 1 at 0: waits for the channel (50-60 us is
        // the GC data out), transfers 60-70 us: outside the window.
        t.schedule(&program(16), 0);
        assert_eq!(t.chans[0].gc_window, 60_000);
        assert_eq!(t.chans[0].gc_busy, 10_000);
        // A host read on die 1 inside a GC program's window counts.
        let mut t = Timing::new(geo(), params());
        assert_eq!(t.schedule(&program_from(0, Origin::Gc), 0), 510_000);
        assert_eq!(t.schedule(&read_from(16, Origin::Host), 0), 60_000);
        assert_eq!(
            (t.chans[0].gc_window, t.chans[0].gc_busy),
            (510_000, 20_000)
        );
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
        assert_eq!(t.chans[0].busy, 0);
        let e = NandOp {
            id: OpId(0),
            cmd: NandCmd::Erase { block: BlockId(1) },
            origin: Origin::Gc,
        };
        assert_eq!(t.schedule(&e, 0), 550_000 + 3_000_000);
    }
}
