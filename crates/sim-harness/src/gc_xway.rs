//! GC copies between ways of one channel in whole-drive runs (seed 002,
//! Sec. III.C and IV), when the core sends a victim's pages to another way
//! (`gc.destination = channel`, the core's `crossway` technique).
//!
//! Under GCB the read sends the page out to the controller and the program
//! sends it back in to the destination way: two transfers, timed by
//! [`Timing::schedule`] as any read and program. Under DGCB the pair is one
//! direct data transfer (DDT): the GC read only senses the page into the
//! source's register (command, tR); when the core issues the program, the
//! DDT master waits until the destination can take data (its array, or with
//! cache program its cache register, is free: `DIN_READY`), then the source
//! drives the page over the channel while the destination latches it and
//! the controller captures it for the ECC check (`DDT_BEGIN` .. `DDT_DONE`,
//! one page transfer plus tDL). The bytes the ECC corrected are sent again
//! (`ERR_RETRANSMIT`), each with a change-write-column burst, before the
//! confirmation command starts the program (`PROG_START`).
//!
//! The corrected bytes follow the reliability model: the medium reports the
//! largest raw bit-error count in any 1 KiB codeword of the page read, and
//! every codeword of each unit moved is taken to need that many bytes (each
//! error in its own byte; at the ECC limit this is eq. (3)'s worst case).
//! Between the sense and the DDT the page waits in the source die's
//! register while the die serves other operations (a cache-read register);
//! a page whose destination is on its own die crosses the channel once too,
//! as ICB's data out for the ECC check.

use firmware_core::NandCmd;

use crate::ddt_msgs::DdtMsg;
use crate::gc_merge::CopyMode;
use crate::timing::{OpRef, Timing};

impl Timing {
    /// Times GC operation `op` under a cross-way GC destination (the
    /// caller, `Timing::schedule_at`, asks only then) when it is half of a
    /// DGCB copy, and notes where GC reads put their pages; `None`: the
    /// usual timing applies.
    pub(crate) fn schedule_cross_way(&mut self, op: OpRef<'_>, now: u64, bits: u16) -> Option<u64> {
        let dgcb = self.p.gc_copy == CopyMode::Dgcb;
        match *op.cmd {
            NandCmd::Read { page, units, dst } => {
                let die = self.g.die_of(self.g.block_of(page)).0;
                let sensed = dgcb.then(|| self.sense(die as usize, now));
                for s in dst.iter().take(units.count() as usize) {
                    let i = usize::from(s.0);
                    if self.slot_src.len() <= i {
                        self.slot_src.resize(i + 1, (0, 0, 0));
                    }
                    self.slot_src[i] = (die, bits, sensed.unwrap_or(0));
                }
                sensed
            }
            NandCmd::Program { page, src, spare } if dgcb => {
                let n = spare.units.count() as usize;
                let (from, bytes, read_end) =
                    src.iter()
                        .take(n)
                        .fold((u32::MAX, 0u64, 0u64), |(d, b, r), s| {
                            let (die, bits, end) = self
                                .slot_src
                                .get(usize::from(s.0))
                                .copied()
                                .unwrap_or((0, 0, 0));
                            (
                                d.min(die),
                                b + u64::from(bits) * self.p.codewords_per_unit,
                                r.max(end),
                            )
                        });
                let src = (from, bytes, read_end);
                Some(self.direct_transfer(op, page, n.min(8), src, now))
            }
            _ => None,
        }
    }

    /// A DGCB GC read: command and read busy; the page stays in the die.
    /// The master's `READ_INIT` goes out when the core issues the read;
    /// the source reports `READ_START` after the read command and
    /// `READ_END` when the page is in its register.
    fn sense(&mut self, die: usize, now: u64) -> u64 {
        let ch = (die as u32 / u32::from(self.g.dies_per_channel)) as usize;
        let start = now.max(self.dies[die].free);
        self.ddt.post(DdtMsg::ReadInit, now);
        let busy = self.command(ch, start);
        self.ddt.post(DdtMsg::ReadStart, busy);
        let sensed = busy + self.p.t_read_ns;
        self.ddt.post(DdtMsg::ReadEnd, sensed);
        let d = &mut self.dies[die];
        d.free = sensed;
        d.busy += sensed - start;
        d.last_prog = false;
        self.account_gc(ch, true, start, sensed);
        sensed
    }

    /// The DDT of a GC program's page from die `from` (whose read busy
    /// ended at `read_end`) into the program's die, the retransmission of
    /// `bytes` corrected bytes, then tPROG, with the messages of Fig. 9.
    fn direct_transfer(
        &mut self,
        op: OpRef<'_>,
        page: firmware_core::Ppn,
        n: usize,
        (from, bytes, read_end): (u32, u64, u64),
        now: u64,
    ) -> u64 {
        let block = self.g.block_of(page);
        let die = self.g.die_of(block).0 as usize;
        let ch = self.g.channel_of_die(self.g.die_of(block)) as usize;
        // DIN_READY: the destination's register (cache register) is free.
        let ready = if self.continues_cache(op) {
            self.dies[die].reg_free
        } else {
            self.dies[die].free
        };
        self.ddt.post(DdtMsg::ProgInit, now);
        self.ddt.post(DdtMsg::DinReady, now.max(ready));
        // DDT_BEGIN once both READ_END and DIN_READY are in and the
        // channel is free.
        let cs = now.max(ready).max(read_end).max(self.chans[ch].free);
        let xs = self.command(ch, cs);
        self.ddt.post(DdtMsg::DdtBegin, xs);
        let x = self.chan_ns[n] + self.p.t_dl_ns;
        self.ddt.post(DdtMsg::DdtDone, xs + x);
        if bytes > 0 {
            self.ddt.post(DdtMsg::ErrRetransmit, xs + x);
        }
        // The controller captures the page for the ECC check meanwhile;
        // the corrected bytes follow the transfer at once (one hold).
        let ds = xs.max(self.dram_free);
        self.dram_free = ds + self.dram_ns[n];
        let re = self.hold_channel(ch, xs, x + bytes * self.p.retx_byte_ns);
        let busy_from = re.max(self.dies[die].free);
        self.ddt.post(DdtMsg::ProgStart, busy_from);
        let done = busy_from + self.p.t_prog_ns;
        self.ddt.post(DdtMsg::ProgEnd, done);
        let d = &mut self.dies[die];
        d.busy += done - cs.max(d.free);
        if let Some(b) = self
            .dies
            .get_mut(from as usize)
            .filter(|_| from as usize != die)
        {
            b.busy += x;
            self.ddt_pages += 1;
        }
        self.retx_bytes += bytes;
        let d = &mut self.dies[die];
        d.free = done;
        d.reg_free = busy_from;
        d.last_prog = true;
        self.prog_block[self.g.plane_of(block).0 as usize] = block.0;
        self.account_gc(ch, true, cs, done);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::tests::{geo, params};
    use crate::timing::TimingParams;
    use firmware_core::{NandOp, OpId, Origin, Ppn, Slot, Spare, UnitMask};

    /// One channel, two ways of one plane each, 4 KiB pages.
    fn timing(mode: CopyMode) -> Timing {
        Timing::new(
            geo(),
            TimingParams {
                t_cmd_ns: 100,
                spare_bytes: 96,
                t_dl_ns: 20,
                gc_copy: mode,
                gc_cross_way: true,
                retx_byte_ns: 170,
                ..params()
            },
        )
    }

    fn op(cmd: NandCmd) -> NandOp {
        NandOp {
            id: OpId(0),
            cmd,
            origin: Origin::Gc,
        }
    }

    /// A GC read of one unit of `page` into slot 3.
    fn read(page: u32) -> NandOp {
        op(NandCmd::Read {
            page: Ppn(page),
            units: UnitMask::full(1),
            dst: [Slot(3); 8],
        })
    }

    /// A program of one unit from slot 3 into `page`.
    fn program(page: u32, origin: Origin) -> NandOp {
        NandOp {
            origin,
            ..op(NandCmd::Program {
                page: Ppn(page),
                src: [Slot(3); 8],
                spare: Spare {
                    units: UnitMask::full(1),
                    ..Spare::default()
                },
            })
        }
    }

    /// A GC copy of a page with `bits` bit errors from way 0 (page 0) to
    /// way 1 (page 16): (end, channel busy, GC's own channel time).
    fn copy(t: &mut Timing, bits: u16) -> (u64, u64, u64) {
        let r = t.schedule_read(&read(0), 0, bits);
        let w = t.schedule(&program(16, Origin::Gc), r);
        (w, t.chans[0].busy, t.chans[0].gc_own)
    }

    #[test]
    fn dgcb_moves_the_page_once_and_resends_the_corrected_bytes() {
        // 4096 + 96 bytes at 0.4096 B/ns = 10235 ns per page transfer.
        let x = 10_235;
        let mut gcb = timing(CopyMode::Gcb);
        let g = copy(&mut gcb, 5);
        assert_eq!(g.0, 100 + 50_000 + x + 100 + x + 500_000);
        assert_eq!((g.1, g.2), (200 + 2 * x, 200 + 2 * x));
        assert_eq!((gcb.retx_bytes, gcb.ddt_pages), (0, 0));
        // DGCB: the read only senses; the program carries the direct
        // transfer, tDL, and 5 bits x 4 codewords resent at 170 ns each.
        let mut dgcb = timing(CopyMode::Dgcb);
        let d = copy(&mut dgcb, 5);
        let chan = 200 + x + 20 + 20 * 170;
        assert_eq!(d.0, 100 + 50_000 + chan - 100 + 500_000);
        assert_eq!((d.1, d.2), (chan, chan));
        assert_eq!((dgcb.retx_bytes, dgcb.ddt_pages), (20, 1));
        // Without bit errors nothing is resent: half of GCB's channel time
        // but the command stages.
        let mut clean = timing(CopyMode::Dgcb);
        assert_eq!(copy(&mut clean, 0).1, 200 + x + 20);
        assert_eq!(clean.retx_bytes, 0);
    }

    #[test]
    fn the_direct_transfer_waits_for_the_destination() {
        let mut t = timing(CopyMode::Dgcb);
        // Way 1 is programming until 10235 + 100 + 500_000.
        let until = t.schedule(&program(17, Origin::Host), 0);
        let (end, _, _) = copy(&mut t, 0);
        assert_eq!(end, until + 100 + 10_235 + 20 + 500_000);
    }

    /// Times of one DGCB copy from 0 with 5 bit errors: read command 100,
    /// tR 50000, page transfer 10235 + tDL 20, 20 bytes resent at 170 ns,
    /// tPROG 500000.
    fn logged(bits: u16) -> Timing {
        let mut t = timing(CopyMode::Dgcb);
        copy(&mut t, bits);
        t
    }

    fn once_at(t: &Timing, m: DdtMsg, at: u64) {
        assert_eq!(t.ddt.count(m), 1, "{}", m.name());
        assert_eq!(t.ddt.last(m), at, "{}", m.name());
    }

    #[test]
    fn read_init_goes_out_when_the_read_is_issued() {
        once_at(&logged(5), DdtMsg::ReadInit, 0);
    }

    #[test]
    fn read_start_follows_the_read_command() {
        once_at(&logged(5), DdtMsg::ReadStart, 100);
    }

    #[test]
    fn read_end_follows_read_busy() {
        once_at(&logged(5), DdtMsg::ReadEnd, 100 + 50_000);
    }

    #[test]
    fn prog_init_goes_out_when_the_program_is_issued() {
        once_at(&logged(5), DdtMsg::ProgInit, 50_100);
    }

    #[test]
    fn din_ready_waits_for_a_busy_destination() {
        once_at(&logged(5), DdtMsg::DinReady, 50_100);
        let mut t = timing(CopyMode::Dgcb);
        let until = t.schedule(&program(17, Origin::Host), 0);
        copy(&mut t, 0);
        once_at(&t, DdtMsg::DinReady, until);
        once_at(&t, DdtMsg::DdtBegin, until + 100);
    }

    #[test]
    fn err_retransmit_only_when_the_ecc_corrected_bytes() {
        once_at(&logged(5), DdtMsg::ErrRetransmit, 50_200 + 10_235 + 20);
        assert_eq!(logged(0).ddt.count(DdtMsg::ErrRetransmit), 0);
    }

    #[test]
    fn prog_start_follows_the_retransmission() {
        once_at(&logged(5), DdtMsg::ProgStart, 60_455 + 20 * 170);
        once_at(&logged(0), DdtMsg::ProgStart, 60_455);
    }

    #[test]
    fn prog_end_follows_program_busy() {
        once_at(&logged(5), DdtMsg::ProgEnd, 63_855 + 500_000);
    }

    #[test]
    fn ddt_begin_waits_for_read_end() {
        once_at(&logged(5), DdtMsg::DdtBegin, 50_100 + 100);
        // A program issued before the source's read busy ends still waits
        // for READ_END.
        let mut t = timing(CopyMode::Dgcb);
        t.schedule_read(&read(0), 0, 0);
        t.schedule(&program(16, Origin::Gc), 0);
        once_at(&t, DdtMsg::ProgInit, 0);
        once_at(&t, DdtMsg::DdtBegin, 50_100 + 100);
    }

    #[test]
    fn ddt_done_follows_one_page_transfer_and_tdl() {
        once_at(&logged(5), DdtMsg::DdtDone, 50_200 + 10_235 + 20);
    }

    #[test]
    fn gcb_exchanges_no_ddt_messages() {
        let mut t = timing(CopyMode::Gcb);
        copy(&mut t, 5);
        for m in DdtMsg::ALL {
            assert_eq!(t.ddt.count(m), 0, "{}", m.name());
        }
    }
}
