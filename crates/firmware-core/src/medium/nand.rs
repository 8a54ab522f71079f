//! The NAND operation set, the spare-area layout, and the medium contract.
//!
//! The core never touches hardware: it emits [`NandOp`]s and is told their
//! [`NandResult`]s. A driver executes them, either against a real controller
//! or against anything implementing [`Nand`] (the simulation medium, the
//! RAM-backed medium of the bare-metal example).
//!
//! # Contract every medium must honour
//!
//! * **Program order.** Pages of a block are programmed in strictly increasing
//!   page order, each exactly once between erases. A medium rejects an
//!   out-of-order program or a second program of a page with
//!   [`NandError::ProgramOrder`]; the core never issues one.
//! * **Erased pages.** Reading a page that has not been programmed since the
//!   last erase returns [`NandError::Erased`]; its data is all ones.
//! * **Per-die order.** Operations addressed to one die execute in the order the
//!   core emitted them. Operations on different dies may complete in any order.
//! * **Torn program.** A program interrupted by power loss leaves the page either
//!   unprogrammed or programmed with data that reads back
//!   [`NandError::Uncorrectable`] (or, rarely, correctly). The page still counts as
//!   written: the next program must go to the following page.
//! * **Torn erase.** An erase interrupted by power loss leaves the block neither
//!   erased nor intact: any page may read back uncorrectable or erased. Only a
//!   completed erase makes the block programmable again.
//! * **Program and erase failures** ([`NandError::ProgramFailed`],
//!   [`NandError::EraseFailed`]) mean the block has gone bad; data already in the
//!   block stays readable (with its normal error rate) so it can be moved out.
//! * **Die failure.** A whole die may fail. From then on every operation on it
//!   fails and its data is lost: either with [`NandError::DieFailed`] (the die
//!   stops answering) or with the status errors above on every block
//!   ([`NandError::Uncorrectable`] reads and copybacks,
//!   [`NandError::ProgramFailed`], [`NandError::EraseFailed`]), the way a die
//!   whose blocks go bad together looks to the FTL.
//! * **Copyback** reads a page into the plane's page register and programs it to
//!   another page **of the same plane** without crossing the channel. Bit errors
//!   are not corrected on the way: they accumulate in the destination. The
//!   destination obeys the program-order rule. The spare area is rewritten with
//!   the given [`Spare`].
//! * **Metadata pages.** [`Nand::program_meta`] and [`Nand::read_meta`] move
//!   raw bytes (translation pages, recovery records) instead of mapping units;
//!   they obey the same program-order, erase, torn-program and failure rules as
//!   data pages. A medium keeps at least as many bytes per page as the core's
//!   metadata page size (see [`crate::config::PersistConfig`]).
//! * **Guarded erase.** [`NandCmd::GuardedErase`] erases a block like
//!   [`NandCmd::Erase`], except that the wordlines in its [`WlSet`] get the
//!   low-stress erase (less wear, seed 001 §3.2.2) and hold no data until the
//!   next erase. The core never programs a page of such a wordline: program
//!   order then skips them (the next program of the block goes to the next
//!   page of a usable wordline; the skipped pages stay erased), and a medium
//!   may reject a program of a protected wordline with
//!   [`NandError::ProgramOrder`]. The command's second set names wordlines
//!   the core retired for good (bad-page management): erased normally and
//!   skipped the same way.
//! * **Worn-out blocks.** An erase fails with [`NandError::EraseFailed`]
//!   when a wordline the block will hold data on in the next cycle (not
//!   low-stress erased, not retired) has worn past its endurance: the block
//!   has reached the end of its life and holds no data, so the core just
//!   marks it bad. A medium without
//!   the low-stress mode may erase normally ([`Nand::guarded_erase`]'s
//!   default): the core's bookkeeping is the same.
//! * **Worn wordlines.** A program of a page whose wordline has worn past its
//!   endurance fails with [`NandError::ProgramFailed`], like any program
//!   status failure (a backstop; the erase check above comes first).
//! * **ECC report.** A successful read reports the largest number of raw bit
//!   errors corrected in any codeword of the page; above the ECC limit the read
//!   fails with [`NandError::Uncorrectable`].

use crate::medium::addr::{BlockId, Lpn, Ppn, UnitMask, MAX_UNITS_PER_PAGE};

/// What a page holds, recorded in its spare area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[repr(u8)]
pub enum PageKind {
    /// Host or relocated user data.
    #[default]
    Data = 0,
    /// Mapping-table (translation) page.
    Map = 1,
    /// Checkpoint / metadata page.
    Meta = 2,
    /// Padding written to keep program order (no live data).
    Pad = 3,
}

/// The spare (OOB) area the FTL writes with every page.
///
/// `lpns[i]` is meaningful only where `units.contains(i)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Spare {
    /// Global program sequence number (newest wins at recovery).
    pub seq: u64,
    /// What the page holds.
    pub kind: PageKind,
    /// Which units of the page carry data.
    pub units: UnitMask,
    /// Logical unit stored in each unit slot.
    pub lpns: [Lpn; MAX_UNITS_PER_PAGE],
    /// Program/erase count of the block when the page was written: mount
    /// reads it back from each block's first page, so wear levelling
    /// survives a power cut (an erase-count header, as in UBI).
    pub erase_count: u32,
    /// An opaque byte of the technique that placed the block's data (its
    /// [`crate::ftl::hooks::Placement::block_tag`], e.g. a placement
    /// handle; 0 without one), written with every program as the erase
    /// count is: mount reads it back from each block's first page.
    pub tag: u8,
    /// Which entries of `entrusted` hold an LBA.
    pub entrusted_units: UnitMask,
    /// LBAs of the neighbour page in the same superpage, on another die
    /// (Reparo's page-level P2L entrustment, written by a flash core;
    /// empty otherwise): entry `i` is the LBA of that page's unit `i`.
    pub entrusted: [Lpn; MAX_UNITS_PER_PAGE],
}

/// Most wordlines per block a [`WlSet`] can name.
pub const MAX_WLS: usize = 256;

/// A set of wordlines of one block (bit `i` is wordline `i`): the wordlines a
/// [`NandCmd::GuardedErase`] erases in low-stress mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct WlSet(pub [u64; MAX_WLS / 64]);

impl WlSet {
    /// The empty set.
    pub const EMPTY: WlSet = WlSet([0; MAX_WLS / 64]);

    /// Adds wordline `wl` (ignored beyond [`MAX_WLS`]).
    pub fn insert(&mut self, wl: u16) {
        if let Some(w) = self.0.get_mut(usize::from(wl / 64)) {
            *w |= 1u64 << (wl % 64);
        }
    }

    /// Whether wordline `wl` is in the set.
    pub fn contains(&self, wl: u16) -> bool {
        self.0
            .get(usize::from(wl / 64))
            .is_some_and(|w| w & (1u64 << (wl % 64)) != 0)
    }

    /// Number of wordlines in the set.
    pub fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The wordlines in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..MAX_WLS as u16).filter(|&wl| self.contains(wl))
    }
}

/// An index into the driver's data buffer pool; each slot holds one mapping unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Slot(pub u16);

/// An index into the core's metadata page buffers (see [`crate::Ftl::meta_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct MetaBuf(pub u16);

/// Identifies an operation in flight; unique among operations not yet completed.
/// The core's ids are `generation << 16 | index` with an index below
/// `max_inflight` (at most [`OpId::CORE_INDEXES`]), so the index `0xffff`
/// is never the core's: ids with it are reserved for a wrapper around the
/// core that issues operations of its own ([`OpId::wrapper`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct OpId(pub u32);

impl OpId {
    /// Operation indexes the core may use (`max_inflight` is at most this).
    pub const CORE_INDEXES: u32 = 0xffff;

    /// Wrapper id number `n`: never an id of the core's.
    pub const fn wrapper(n: u16) -> OpId {
        OpId(((n as u32) << 16) | Self::CORE_INDEXES)
    }

    /// Whether this id is a wrapper's (see [`OpId::wrapper`]).
    pub const fn is_wrapper(self) -> bool {
        self.0 & 0xffff == Self::CORE_INDEXES
    }
}

/// Why an operation was issued (for accounting and timing models).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Host read or write-buffer flush.
    Host,
    /// Garbage collection.
    Gc,
    /// Static wear levelling.
    WearLevel,
    /// Moving data out of a grown bad block.
    Retire,
    /// Format, mount, metadata.
    Meta,
}

/// A NAND command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NandCmd {
    /// Read `units` of `page`; unit `i` of the mask goes to the i-th entry of `dst`, in mask order.
    Read {
        /// Page to read.
        page: Ppn,
        /// Units wanted.
        units: UnitMask,
        /// Destination slots, one per set bit of `units`, lowest bit first.
        dst: [Slot; MAX_UNITS_PER_PAGE],
    },
    /// Program a page from buffer slots; the j-th set bit of `spare.units` comes from `src[j]`.
    Program {
        /// Page to program (next in its block).
        page: Ppn,
        /// Source slots, one per set bit of `spare.units`, lowest bit first.
        src: [Slot; MAX_UNITS_PER_PAGE],
        /// Spare area to write.
        spare: Spare,
    },
    /// Erase a block.
    Erase {
        /// Block to erase.
        block: BlockId,
    },
    /// Program a metadata page (translation page or recovery record) from a
    /// metadata buffer.
    ProgramMeta {
        /// Page to program (next in its block).
        page: Ppn,
        /// Buffer holding the bytes.
        buf: MetaBuf,
        /// Spare area to write.
        spare: Spare,
    },
    /// Read a metadata page into a metadata buffer.
    ReadMeta {
        /// Page to read.
        page: Ppn,
        /// Buffer receiving the bytes.
        buf: MetaBuf,
    },
    /// Erase a block with the wordlines of `low_stress` in the low-stress
    /// mode (GuardedErase): they wear less and stay unusable until the next
    /// erase.
    GuardedErase {
        /// Block to erase.
        block: BlockId,
        /// Wordlines erased in low-stress mode.
        low_stress: WlSet,
        /// Wordlines retired for good: erased normally, never programmed.
        retired: WlSet,
    },
    /// On-chip copy within one plane.
    Copyback {
        /// Source page.
        src: Ppn,
        /// Destination page (same plane, next in its block).
        dst: Ppn,
        /// New spare area for the destination.
        spare: Spare,
    },
}

/// An operation the core asks the driver to perform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NandOp {
    /// Identifier to pass back with the result.
    pub id: OpId,
    /// The command.
    pub cmd: NandCmd,
    /// Why it was issued.
    pub origin: Origin,
}

/// Errors a medium reports for one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NandError {
    /// The page was never programmed since its last erase.
    Erased,
    /// Bit errors beyond the ECC limit (or a torn page).
    Uncorrectable,
    /// Program status fail: the block has gone bad.
    ProgramFailed,
    /// Erase status fail: the block has gone bad.
    EraseFailed,
    /// The command broke the program-order rule (a driver or core bug).
    ProgramOrder,
    /// Address outside the array, or a copyback across planes.
    BadAddress,
    /// The die no longer answers.
    DieFailed,
    /// Factory-marked bad block.
    FactoryBad,
}

/// Outcome of a successful read or copyback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadReport {
    /// Largest raw bit-error count corrected in any codeword of the page.
    pub bit_errors: u16,
    /// The page's spare area.
    pub spare: Spare,
}

/// Result of one operation, handed back to the core.
pub type NandResult = Result<ReadReport, NandError>;

/// A synchronous NAND medium. Data moves in mapping units of type `Self::Unit`.
///
/// See the module documentation for the contract.
pub trait Nand {
    /// One mapping unit's content (a stamp in simulation, bytes on hardware).
    type Unit: Copy + Default;

    /// Reads the units in `units` of `page` into `out` (in mask order).
    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [Self::Unit]) -> NandResult;
    /// Programs `page` with `data` (one entry per set bit of `spare.units`, in order).
    fn program(&mut self, page: Ppn, data: &[Self::Unit], spare: &Spare) -> NandResult;
    /// Erases `block`.
    fn erase(&mut self, block: BlockId) -> NandResult;
    /// Erases `block` with the wordlines of `low_stress` in low-stress mode;
    /// `retired` wordlines are erased normally and will not be programmed
    /// (see the contract). The default erases normally, for media without
    /// the low-stress mode or wear model; the core skips both sets anyway.
    fn guarded_erase(&mut self, block: BlockId, low_stress: &WlSet, retired: &WlSet) -> NandResult {
        let _ = (low_stress, retired);
        self.erase(block)
    }
    /// Copies `src` to `dst` inside one plane, rewriting the spare area.
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult;
    /// Programs metadata page `page` with `bytes`.
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult;
    /// Reads metadata page `page` into `out` (its first `out.len()` bytes).
    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult;
}
