//! Bare-metal Cortex-M4 firmware: runs the shared FTL scenario
//! (`ftl_scenario::run`, the very function the host tests call) on QEMU's
//! `mps2-an386` board and reports over semihosting.
//!
//! Boot: cortex-m-rt starts `main` with the stack at the top of the 4 MiB data
//! RAM. `main` paints the unused stack, lends the scenario every array it needs
//! from `static`s placed in the 16 MiB PSRAM (`.lent`, see `memory.x`): the
//! core's tables with its mapping-persistence tables, the medium's records and
//! its metadata-page slots, the data pool and the oracle. It runs the scenario
//! (power cuts and remounts from flash included), measures the stack
//! high-water mark, prints the report and exits through semihosting: status 0
//! when every check passed, 1 otherwise. Panics and hard faults print what
//! happened and exit with status 1 too.
//!
//! Then it runs the second scenario, `ftl_scenario::multicore::run`: four
//! Reparo flash cores in this one image behind the master core's striping, one
//! die of core 2 failed, detected, identified from the block-level LBA lists on
//! flash and rewritten. Its memory comes from PSRAM statics too, the flash
//! cores themselves included (about 14 KiB each, kept off the stack). The
//! final `N passed, M failed` line counts the checks of both scenarios.
//!
//! Feature `corrupt` asks the first scenario to damage one block of the medium
//! after the workload; that build must fail.
#![no_std]
#![no_main]

use core::mem::{size_of, MaybeUninit};
use core::ptr::{addr_of, addr_of_mut};
use core::sync::atomic::{AtomicBool, Ordering};

use cortex_m_rt::{entry, exception, ExceptionFrame};
use cortex_m_semihosting::debug::{self, EXIT_FAILURE, EXIT_SUCCESS};
use cortex_m_semihosting::hprintln;
use firmware_core::ftl::tables::{BlockMeta, OpEntry, PlaneState, SlotMeta};
use firmware_core::{FullFtl, ReadValue};
use ftl_scenario::multicore::{self, CoreSlot, McMemory, McOptions, CORES};
use ftl_scenario::{sizes, Corruption, CutKind, Failure, Memory, Options, Report, GEOMETRY};
use nand_model::{BlockRec, PageRec, TornProgram, UnitRec};

/// Corruption requested at build time (feature `corrupt`).
const CORRUPTION: Corruption = if cfg!(feature = "corrupt") {
    Corruption::UnreadableBlock
} else {
    Corruption::None
};

/// Word painted over the unused stack at boot.
const PAINT: u32 = 0xDEAD_BEEF;

/// Space left unpainted below the painter's own stack pointer.
const PAINT_MARGIN: usize = 64;

extern "C" {
    /// Top of the stack (initial SP), from cortex-m-rt's `link.x`.
    static _stack_start: u32;
    /// Lowest address the stack may reach (end of `.bss`/`.uninit`), from `link.x`.
    static _stack_end: u32;
}

#[entry]
fn main() -> ! {
    paint_stack();
    let ok = run();
    debug::exit(if ok { EXIT_SUCCESS } else { EXIT_FAILURE });
    // Semihosting exit does not return on QEMU; park if a debugger ignores it.
    loop {
        cortex_m::asm::wfi();
    }
}

/// Fills the stack below the current frame with [`PAINT`].
#[inline(never)]
fn paint_stack() {
    let sp = cortex_m::register::msp::read() as usize;
    let bottom = addr_of!(_stack_end) as usize;
    let top = sp.saturating_sub(PAINT_MARGIN) & !3;
    let mut p = bottom;
    while p < top {
        // SAFETY: [bottom, top) lies between the end of the statics and this
        // function's own frame: nothing lives there yet, and no interrupt is
        // enabled that could push a frame into it.
        unsafe { (p as *mut u32).write_volatile(PAINT) };
        p += 4;
    }
}

/// Deepest stack use since [`paint_stack`], in bytes below the initial SP.
fn stack_high_water() -> usize {
    let top = addr_of!(_stack_start) as usize;
    let mut p = addr_of!(_stack_end) as usize;
    // SAFETY: reads of plain RAM words between the statics and the initial SP.
    while p < top && unsafe { (p as *const u32).read_volatile() } == PAINT {
        p += 4;
    }
    top - p
}

/// Writes `init` into each of the `n` elements at `p` and returns them as a slice.
///
/// # Safety
/// `p` must point to `n` writable, suitably aligned `T`s that nothing else
/// references for `'static`.
unsafe fn init_slice<T: Copy>(p: *mut T, n: usize, init: T) -> &'static mut [T] {
    for i in 0..n {
        p.add(i).write(init);
    }
    core::slice::from_raw_parts_mut(p, n)
}

/// Lends one `static` array from the `.lent` section, every element set to `init`.
macro_rules! lend {
    ($t:ty, $n:expr, $init:expr) => {{
        #[link_section = ".lent"]
        static mut CELL: MaybeUninit<[$t; $n]> = MaybeUninit::uninit();
        // SAFETY: `take_memory` runs at most once (guarded by `TAKEN`), so this
        // is the only reference ever made to `CELL`; every element is written
        // before the slice is formed.
        unsafe { init_slice(addr_of_mut!(CELL).cast::<$t>(), $n, $init) }
    }};
}

/// Set once the lent memory has been handed out.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// Hands out every array the scenario borrows (once per boot).
fn take_memory() -> Memory<'static> {
    if TAKEN.swap(true, Ordering::AcqRel) {
        panic!("lent memory taken twice");
    }
    Memory {
        core: lend!(u8, sizes::CORE_LENT_BYTES, 0),
        data: lend!(u64, sizes::DATA, 0),
        medium_blocks: lend!(BlockRec, sizes::MEDIUM_BLOCKS, BlockRec::INIT),
        medium_pages: lend!(PageRec, sizes::MEDIUM_PAGES, PageRec::INIT),
        medium_units: lend!(UnitRec, sizes::MEDIUM_UNITS, UnitRec::INIT),
        medium_meta: lend!(u8, sizes::MEDIUM_META_BYTES, 0),
        medium_meta_pages: lend!(u32, sizes::MEDIUM_META_SLOTS, 0),
        oracle: lend!(u32, sizes::ORACLE, 0),
    }
}

/// Set once the multi-core scenario's memory has been handed out.
static MC_TAKEN: AtomicBool = AtomicBool::new(false);

/// The slots the multi-core scenario builds its flash cores in.
#[link_section = ".lent"]
static mut MC_CORES: MaybeUninit<[CoreSlot<'static>; CORES]> = MaybeUninit::uninit();

/// Hands out every array the multi-core scenario borrows, and the slots its
/// flash cores are built in (once per boot).
fn take_mc_memory() -> (McMemory<'static>, &'static mut [CoreSlot<'static>]) {
    use multicore::sizes as mc;
    if MC_TAKEN.swap(true, Ordering::AcqRel) {
        panic!("multicore memory taken twice");
    }
    let p = addr_of_mut!(MC_CORES).cast::<CoreSlot<'static>>();
    // SAFETY: `MC_TAKEN` guards this block, so this is the only reference
    // ever made to `MC_CORES`; every slot is written before the slice is
    // formed.
    let cores = unsafe {
        for i in 0..CORES {
            p.add(i).write(None);
        }
        core::slice::from_raw_parts_mut(p, CORES)
    };
    let mem = McMemory {
        core: lend!(u8, CORES * mc::CORE_TABLES_BYTES, 0),
        data: lend!(u64, CORES * mc::DATA, 0),
        medium_blocks: lend!(BlockRec, CORES * mc::MEDIUM_BLOCKS, BlockRec::INIT),
        medium_pages: lend!(PageRec, CORES * mc::MEDIUM_PAGES, PageRec::INIT),
        medium_units: lend!(UnitRec, CORES * mc::MEDIUM_UNITS, UnitRec::INIT),
        medium_meta: lend!(u8, CORES * mc::MEDIUM_META_BYTES, 0),
        medium_meta_pages: lend!(u32, CORES * mc::MEDIUM_META_SLOTS, 0),
        entrust: lend!(u32, CORES * mc::ENTRUST, 0),
        marks: lend!(u32, CORES * mc::MARKS, 0),
        holders: lend!(u32, CORES * mc::HOLDERS, 0),
        list_bufs: lend!(u8, CORES * mc::LIST_BUF_BYTES, 0),
        oracle: lend!(u32, mc::ORACLE, 0),
        truth: lend!(u32, mc::TRUTH, 0),
    };
    (mem, cores)
}

/// PSRAM the `.lent` section takes, from the linker's `__slent`/`__elent`.
fn lent_section_bytes() -> usize {
    extern "C" {
        static __slent: u8;
        static __elent: u8;
    }
    (addr_of!(__elent) as usize).saturating_sub(addr_of!(__slent) as usize)
}

/// PSRAM size (see `memory.x`).
const PSRAM_BYTES: usize = 16 << 20;

/// Runs both scenarios and prints everything; true when every check passed.
#[inline(never)]
fn run() -> bool {
    let (p1, f1, ok1) = run_single();
    let (p2, f2, ok2) = run_multicore();
    let section = lent_section_bytes();
    hprintln!("lent section: {} B of {} B PSRAM", section, PSRAM_BYTES);
    let fits = section <= PSRAM_BYTES;
    let failed = f1 + f2 + u64::from(!fits);
    hprintln!(
        "stack high-water (both scenarios): {} bytes",
        stack_high_water()
    );
    hprintln!("{} passed, {} failed", p1 + p2, failed);
    ok1 && ok2 && fits
}

/// Runs the multi-core scenario and prints its report; returns its checks
/// passed and failed, and whether it was all good.
#[inline(never)]
fn run_multicore() -> (u64, u64, bool) {
    let (mem, cores) = take_mc_memory();
    let result = multicore::run(mem, cores, &McOptions::DEFAULT);
    let stack = stack_high_water();
    let g = multicore::GEOMETRY;
    hprintln!(
        "multicore geometry per core: {}; {} logical units per core",
        Shape(g),
        multicore::CORE_LOGICAL
    );
    match multicore::lent_bytes() {
        Ok(b) => hprintln!(
            "multicore lent memory (PSRAM): {} B, plus {} B of flash-core slots ({} B each)",
            b,
            size_of::<[CoreSlot<'static>; CORES]>(),
            size_of::<CoreSlot<'static>>()
        ),
        Err(e) => hprintln!("multicore lent memory: {}", e),
    }
    match result {
        Ok(r) => {
            hprintln!("{}", r);
            hprintln!("multicore stack high-water: {} bytes", stack);
            let ok = r.ok();
            // A report that is not ok with every check passed still fails.
            let failed = r.checks_failed + u64::from(!ok && r.checks_failed == 0);
            (r.checks_passed, failed, ok)
        }
        Err(e) => {
            hprintln!("multicore scenario stopped: {}", e);
            hprintln!("multicore stack high-water: {} bytes", stack);
            (0, 1, false)
        }
    }
}

/// Runs the single-core scenario and prints its report; returns its checks
/// passed and failed, and whether it was all good.
#[inline(never)]
fn run_single() -> (u64, u64, bool) {
    let opts = Options {
        corruption: CORRUPTION,
        ..Options::DEFAULT
    };
    let result = ftl_scenario::run(take_memory(), &opts);
    let stack = stack_high_water();

    hprintln!("qemu-m4: FTL core on a Cortex-M4 (QEMU mps2-an386), bare metal");
    let g = GEOMETRY;
    hprintln!("geometry: {}; {} logical units", Shape(g), sizes::L2P);
    hprintln!("corruption: {:?}", opts.corruption);
    match ftl_scenario::lent_bytes() {
        Ok(b) => hprintln!(
            "lent memory (PSRAM): core tables {} B, data pool {} B, medium {} B, medium metadata pages {} B, oracle {} B; {} B in all",
            b.core_tables,
            b.data_pool,
            b.medium,
            b.medium_meta,
            b.oracle,
            b.total()
        ),
        Err(e) => hprintln!("lent memory: {}", e),
    }
    hprintln!("size_of::<Ftl>: {} bytes", size_of::<FullFtl<'static>>());
    hprintln!(
        "table elements: BlockMeta {} B, PlaneState {} B, SlotMeta {} B, OpEntry {} B",
        size_of::<BlockMeta>(),
        size_of::<PlaneState>(),
        size_of::<SlotMeta>(),
        size_of::<OpEntry>()
    );

    match result {
        Ok(r) => {
            print_report(&r);
            hprintln!("stack high-water: {} bytes", stack);
            hprintln!(
                "scenario checks: {} passed, {} failed",
                r.checks_passed,
                r.checks_failed
            );
            (r.checks_passed, r.checks_failed, r.ok())
        }
        Err(e) => {
            hprintln!("scenario stopped: {}", e);
            hprintln!("stack high-water: {} bytes", stack);
            (0, 1, false)
        }
    }
}

/// A geometry as `C ch x D dies x P plane x B blocks x N pages x S B, U units/page`.
struct Shape(firmware_core::Geometry);

impl core::fmt::Display for Shape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let g = &self.0;
        write!(
            f,
            "{} ch x {} dies x {} plane x {} blocks x {} pages x {} B, {} units/page",
            g.channels,
            g.dies_per_channel,
            g.planes_per_die,
            g.blocks_per_plane,
            g.pages_per_block,
            g.page_bytes,
            g.units_per_page
        )
    }
}

/// `num / den` with two decimals, without floating-point formatting.
struct Ratio(u64, u64);

impl core::fmt::Display for Ratio {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let hundredths = self.0.saturating_mul(100).checked_div(self.1).unwrap_or(0);
        write!(f, "{}.{:02}", hundredths / 100, hundredths % 100)
    }
}

/// A read result, with a data stamp shown as its `lpn << 32 | version` parts.
struct Value(ReadValue<u64>);

impl core::fmt::Display for Value {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            ReadValue::Data(s) => write!(f, "data (lpn {}, version {})", s >> 32, s & 0xFFFF_FFFF),
            ReadValue::Unmapped => f.write_str("unmapped"),
            ReadValue::Error => f.write_str("a media error"),
        }
    }
}

fn print_report(r: &Report) {
    let c = &r.core;
    hprintln!(
        "workload: {} host writes ({}x capacity), {} trims, {} flushes, {} checks during churn",
        r.host_writes,
        Ratio(r.host_writes, u64::from(r.logical_units)),
        r.trims,
        r.flushes,
        r.churn_checks
    );
    hprintln!(
        "core: {} gc victims, {} wl moves, {} gc units, {} pad units, write amplification {}",
        c.gc_victims,
        c.wl_moves,
        c.gc_program_units,
        c.pad_units,
        Ratio(
            c.host_program_units
                .saturating_add(c.gc_program_units)
                .saturating_add(c.pad_units),
            c.host_write_units
        )
    );
    hprintln!(
        "nand: {} reads, {} programs, {} erases; max bit errors {}; P/E {}..{}",
        r.medium.reads,
        r.medium.programs,
        r.medium.erases,
        r.medium.max_bit_errors,
        r.pe_range.0,
        r.pe_range.1
    );
    hprintln!(
        "core errors: {} lost units, {} host read errors, {} bad blocks",
        c.lost_units,
        c.host_read_errors,
        c.bad_blocks
    );
    if let Some(d) = r.corrupted {
        hprintln!(
            "corrupted: block {} made unreadable with {} live units",
            d.block,
            d.live_units
        );
    }
    print_cuts(r);
    hprintln!(
        "remount: {:?} (orderly power-off, then the core rebuilt and mounted from the medium)",
        r.remount
    );
    match r.first_failure {
        None => hprintln!("verify: every logical unit matched the oracle; audit clean"),
        Some(Failure::Read { lpn, expected, got }) => hprintln!(
            "first failure: lpn {} expected {}, got {}",
            lpn,
            Value(expected),
            Value(got)
        ),
        Some(Failure::Audit(e)) => hprintln!("first failure: audit: {}", e),
    }
}

/// The power cuts and the mounts after them. The `label: N` lines are
/// checked by `cargo xtask qemu`.
fn print_cuts(r: &Report) {
    hprintln!(
        "power cuts: {} (an operation torn on the medium each time, then the capacitor flush and a mount from flash)",
        r.cuts
    );
    for (i, c) in r.cut_reports().enumerate() {
        hprintln!(
            "  cut {}: torn {:?} ({}) at host write {}; capacitor flush {} programs; mount {} ops, steps {}; write in flight read back {}",
            i + 1,
            c.plan.kind,
            if c.plan.kind == CutKind::Erase {
                "half erased"
            } else {
                match c.plan.outcome {
                    TornProgram::Unprogrammed => "left unprogrammed",
                    TornProgram::Uncorrectable => "left unreadable",
                    TornProgram::Intact => "left intact",
                }
            },
            c.at_host_writes,
            c.flush_programs,
            c.mount_ops,
            c.mount_steps,
            if c.in_flight_new { "new" } else { "old" }
        );
    }
    hprintln!(
        "remounts: {} from flash, {} mount ops in all",
        r.mounts,
        r.mount_ops
    );
    hprintln!(
        "capacitor: {} programs at most per flush, {} paid for",
        r.cut_programs_max,
        r.cut_capacity
    );
    hprintln!(
        "translation pages: {} written while running, {} power-cut flush programs",
        r.core.map_programs,
        r.core.cut_programs
    );
    hprintln!(
        "metadata pages held: {} at most, of {} lent slots",
        r.meta_slots_peak,
        sizes::MEDIUM_META_SLOTS
    );
    hprintln!("checks after cuts: {}", r.cut_checks);
    hprintln!("lost acknowledged: {}", r.lost_acknowledged);
    hprintln!("invalid reads: {}", r.invalid_reads);
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic: {}", info);
    hprintln!("0 passed, 1 failed");
    debug::exit(EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

#[exception]
unsafe fn HardFault(ef: &ExceptionFrame) -> ! {
    hprintln!("hard fault at pc {:#010x}", ef.pc());
    hprintln!("0 passed, 1 failed");
    debug::exit(EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
