//! Reparo's *Identifier* (seed 001, Sec. 5.3) on the timed engine's
//! resources: each flash core gets a [`Timing`] over its own dies, channels
//! and DRAM bus, and a clock its identification work advances.
//!
//! * NAND reads of list pages (block-level entrustment) and of neighbour
//!   spare areas (page-level) are scheduled on that `Timing` as the core
//!   emits them: command, tR, data out over the channel into DRAM.
//! * L2P passes (IDR's scan, CDR's copy into the shared area and its
//!   split scan, CDR*'s mark bits and candidate checks) stream their
//!   entries over the DRAM bus (`timing.dram_mib_s`) while the core spends
//!   a measured number of cycles on each ([`CoreCosts`]); a pass ends when
//!   both have.
//! * Every failed LBA reported goes to the host as one 16-byte LBA status
//!   descriptor (NVMe Get LBA Status) over the host link.

use crate::timing::{Timing, TimingParams};
use firmware_core::Geometry;

/// Per-entry work of a flash core and its clock.
///
/// The cycle figures are x86_64 instructions per entry counted by callgrind
/// (`examples/identify_cost.rs`, the difference of a 1-pass and a 2-pass
/// run, `docs/results.md`), taken as cycles at one instruction per cycle.
/// The clock is an assumption: seed 001 names a quad-core ARM controller
/// but no frequency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoreCosts {
    /// Core clock, Hz.
    pub core_hz: f64,
    /// IDR: checking one L2P entry in place (`FlashCore::scan`), cycles.
    pub scan_cycles: f64,
    /// CDR: copying one L2P entry into the shared area, cycles.
    pub copy_cycles: f64,
    /// CDR: checking one entry of the shared area (`FailureView::scan_region`), cycles.
    pub region_cycles: f64,
    /// CDR*: checking one mark bit of a range query (`FlashCore::scan_marks`), cycles.
    pub mark_cycles: f64,
    /// Bytes of one L2P entry in DRAM.
    pub entry_bytes: u64,
    /// Bytes of one LBA status descriptor sent to the host.
    pub descriptor_bytes: u64,
}

impl Default for CoreCosts {
    /// The figures measured for this core at build 35480b9
    /// (`docs/results.md`, "Identifier work per entry (callgrind)") at an
    /// assumed 800 MHz.
    fn default() -> Self {
        CoreCosts {
            core_hz: 800e6,
            scan_cycles: 83.0,
            copy_cycles: 21.0,
            region_cycles: 22.0,
            mark_cycles: 18.0,
            entry_bytes: 4,
            descriptor_bytes: 16,
        }
    }
}

/// One flash core's identification clock.
#[derive(Clone, Debug)]
pub struct IdentifyClock {
    /// The core's dies, channels and DRAM bus.
    pub timing: Timing,
    /// Time the core's identification work has reached, ns.
    pub now: u64,
    costs: CoreCosts,
}

impl IdentifyClock {
    /// An idle core of geometry `g`.
    pub fn new(g: Geometry, p: TimingParams, costs: CoreCosts) -> Self {
        IdentifyClock {
            timing: Timing::new(g, p),
            now: 0,
            costs,
        }
    }

    /// The costs in force.
    pub fn costs(&self) -> &CoreCosts {
        &self.costs
    }

    fn cpu_ns(&self, cycles: f64) -> u64 {
        (cycles / self.costs.core_hz * 1e9).ceil() as u64
    }

    /// A streamed pass over `entries` entries, `bytes` of them read over
    /// DRAM, `cycles` spent on each, the work split over `cores` cores
    /// that share the bus: ends when the slowest core and the bus have.
    pub fn stream(&mut self, entries: u64, bytes: u64, cycles: f64, cores: u32) {
        if entries == 0 {
            return;
        }
        let per_core = entries.div_ceil(u64::from(cores.max(1)));
        let cpu = self.now + self.cpu_ns(per_core as f64 * cycles);
        let bus = self.timing.dram_transfer(bytes, self.now);
        self.now = cpu.max(bus);
    }

    /// IDR: the victim scans `entries` L2P entries in place.
    pub fn scan(&mut self, entries: u64) {
        let c = self.costs;
        self.stream(entries, entries * c.entry_bytes, c.scan_cycles, 1);
    }

    /// CDR: the victim copies `entries` L2P entries into the shared area
    /// (read and write over DRAM), then `cores` cores scan a region each.
    pub fn copy_and_split(&mut self, entries: u64, cores: u32) {
        let c = self.costs;
        self.stream(entries, 2 * entries * c.entry_bytes, c.copy_cycles, 1);
        self.stream(entries, entries * c.entry_bytes, c.region_cycles, cores);
    }

    /// CDR*: `bits` mark bits of a range query, and `candidates` L2P checks
    /// of the LBAs read from entrusted lists.
    pub fn marks(&mut self, bits: u64, candidates: u64) {
        let c = self.costs;
        self.stream(candidates, candidates * c.entry_bytes, c.scan_cycles, 1);
        self.stream(bits, bits.div_ceil(8), c.mark_cycles, 1);
    }

    /// The answer: `found` LBA status descriptors over the host link.
    pub fn answer(&mut self, found: u64) {
        if found > 0 {
            let bytes = found * self.costs.descriptor_bytes;
            self.now = self.timing.host_transfer(bytes, self.now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> IdentifyClock {
        let g = crate::timing::tests::geo();
        let mut p = crate::timing::tests::params();
        p.dram_bytes_per_ns = 1.0;
        p.host_bytes_per_ns = 1.0;
        let costs = CoreCosts {
            core_hz: 1e9,
            scan_cycles: 10.0,
            copy_cycles: 2.0,
            region_cycles: 4.0,
            mark_cycles: 1.0,
            entry_bytes: 4,
            descriptor_bytes: 16,
        };
        IdentifyClock::new(g, p, costs)
    }

    /// A scan is bound by the core when its cycles outlast the bus, and
    /// by the bus otherwise.
    #[test]
    fn stream_ends_with_the_slower_of_core_and_bus() {
        let mut c = clock();
        c.scan(1000);
        assert_eq!(c.now, 10_000, "10 cycles at 1 GHz beat 4 bytes at 1 B/ns");
        let mut c = clock();
        c.stream(1000, 8000, 1.0, 1);
        assert_eq!(c.now, 8000);
    }

    /// Splitting the scan over four cores divides the core time, not the
    /// bus time; the copy moves every entry twice over the bus.
    #[test]
    fn cdr_split_divides_core_time_and_pays_the_copy() {
        // Bus-bound: copy max(4000 * 2 ns, 32000 B), scan max(16000 / c, 16000 B).
        for cores in [1, 4] {
            let mut c = clock();
            c.copy_and_split(4000, cores);
            assert_eq!(c.now, 32_000 + 16_000, "{cores} cores");
        }
        // Core-bound: 40 cycles per entry.
        let split = |cores| {
            let mut c = clock();
            c.costs.region_cycles = 40.0;
            c.copy_and_split(4000, cores);
            c.now
        };
        assert_eq!(split(1), 32_000 + 160_000);
        assert_eq!(split(4), 32_000 + 40_000);
    }

    /// Answers cost host-link time per descriptor.
    #[test]
    fn answers_use_the_host_link() {
        let mut c = clock();
        c.answer(10);
        assert_eq!(c.now, 160);
        c.answer(0);
        assert_eq!(c.now, 160);
    }
}
