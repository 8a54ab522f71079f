//! The memory the caller lends to the core, and how much of it a configuration needs.
//!
//! Every large table is a slice the caller owns. [`TableSizes`] says how many
//! elements each slice must hold; [`Tables`] bundles the slices for
//! [`crate::Ftl::new`]. On a host the slices come from `Vec`s; on a
//! microcontroller from `static` arrays or a linker-placed RAM region.

use crate::config::Config;
use crate::error::Error;
use crate::ftl::lend::Lend;
use crate::medium::nand::{NandCmd, Origin};

/// Per-block state kept by the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum BlockState {
    /// Not yet seen by format.
    #[default]
    Unknown = 0,
    /// Erased and on its plane's free list.
    Free,
    /// Open for writes (an active block of some stream).
    Open,
    /// Fully written; candidate for GC (on a valid-count bucket list).
    Full,
    /// Chosen as a GC or wear-levelling victim; its data is being moved.
    Victim,
    /// Gone bad with live data still in it; being emptied, never erased again.
    Retiring,
    /// Retired for good (factory or grown bad).
    Bad,
    /// In the metadata region (translation pages, recovery records).
    Meta,
    /// An anchor block of the checkpoint (see `checkpoint.rs`).
    Anchor,
}

/// Per-block metadata (one entry per physical block, lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockMeta {
    /// Program/erase cycles completed.
    pub pe: u32,
    /// Intrusive list link (free list or valid-count bucket), `NIL` when unlinked.
    pub next: u32,
    /// Intrusive back link for bucket lists.
    pub prev: u32,
    /// Valid mapping units in the block.
    pub valid: u16,
    /// Next page to program.
    pub next_page: u16,
    /// Programs emitted but not yet completed.
    pub pending: u16,
    /// Lifecycle state.
    pub state: BlockState,
    /// Write stream that opened the block (see [`crate::Stream`]).
    pub stream: u8,
}

/// Intrusive-list terminator for block and plane links.
pub const NIL: u32 = u32::MAX;
/// Intrusive-list terminator for slot and operation links.
pub const NIL16: u16 = u16::MAX;

/// A FIFO threaded through the `next` links of slot or operation entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    /// Oldest entry (`NIL16` when empty).
    pub head: u16,
    /// Newest entry (`NIL16` when empty).
    pub tail: u16,
    /// Entries queued.
    pub len: u16,
}

impl Fifo {
    /// An empty queue.
    pub const EMPTY: Fifo = Fifo {
        head: NIL16,
        tail: NIL16,
        len: 0,
    };
}

/// Entries that carry an intrusive `next` link.
pub(crate) trait Linked {
    fn next(&self) -> u16;
    fn set_next(&mut self, n: u16);
}

impl Linked for SlotMeta {
    #[inline]
    fn next(&self) -> u16 {
        self.next
    }
    #[inline]
    fn set_next(&mut self, n: u16) {
        self.next = n;
    }
}

impl Linked for OpEntry {
    #[inline]
    fn next(&self) -> u16 {
        self.next
    }
    #[inline]
    fn set_next(&mut self, n: u16) {
        self.next = n;
    }
}

impl Fifo {
    /// Appends entry `i`.
    pub(crate) fn push_back<T: Linked>(&mut self, v: &mut [T], i: u16) -> Result<(), Error> {
        v.get_mut(usize::from(i))
            .ok_or(Error::Corrupt("fifo entry"))?
            .set_next(NIL16);
        if self.tail == NIL16 {
            self.head = i;
        } else {
            v.get_mut(usize::from(self.tail))
                .ok_or(Error::Corrupt("fifo tail"))?
                .set_next(i);
        }
        self.tail = i;
        self.len = self.len.saturating_add(1);
        Ok(())
    }

    /// Prepends entry `i` (it becomes the oldest).
    pub(crate) fn push_front<T: Linked>(&mut self, v: &mut [T], i: u16) -> Result<(), Error> {
        v.get_mut(usize::from(i))
            .ok_or(Error::Corrupt("fifo entry"))?
            .set_next(self.head);
        if self.head == NIL16 {
            self.tail = i;
        }
        self.head = i;
        self.len = self.len.saturating_add(1);
        Ok(())
    }

    /// Removes and returns the oldest entry.
    pub(crate) fn pop<T: Linked>(&mut self, v: &mut [T]) -> Result<Option<u16>, Error> {
        if self.head == NIL16 {
            return Ok(None);
        }
        let i = self.head;
        let n = v
            .get(usize::from(i))
            .ok_or(Error::Corrupt("fifo head"))?
            .next();
        self.head = n;
        if n == NIL16 {
            self.tail = NIL16;
        }
        self.len = self.len.saturating_sub(1);
        Ok(Some(i))
    }
}

/// A LIFO stack threaded through `next` links (free lists).
pub(crate) fn stack_push<T: Linked>(v: &mut [T], head: &mut u16, i: u16) -> Result<(), Error> {
    v.get_mut(usize::from(i))
        .ok_or(Error::Corrupt("stack entry"))?
        .set_next(*head);
    *head = i;
    Ok(())
}

/// Pops the top of a stack threaded through `next` links.
pub(crate) fn stack_pop<T: Linked>(v: &mut [T], head: &mut u16) -> Result<Option<u16>, Error> {
    if *head == NIL16 {
        return Ok(None);
    }
    let i = *head;
    *head = v
        .get(usize::from(i))
        .ok_or(Error::Corrupt("stack head"))?
        .next();
    Ok(Some(i))
}

/// Per-plane state: free list, active blocks, GC progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneState {
    /// Head of the free-block list.
    pub free_head: u32,
    /// Blocks on the free list.
    pub free_count: u32,
    /// Open block of the host stream (`NIL` if none).
    pub host_active: u32,
    /// Open block of the GC stream (`NIL` if none).
    pub gc_active: u32,
    /// Block being emptied by GC, wear levelling or retirement (`NIL` if none).
    pub victim: u32,
    /// Why the victim was chosen.
    pub victim_origin: Origin,
    /// Next page of the victim to scan.
    pub victim_cursor: u32,
    /// GC reads in flight for the victim.
    pub gc_reads: u16,
    /// GC slots holding relocated data, oldest first.
    pub hold: Fifo,
    /// Head of this plane's free GC slot stack.
    pub gc_free_head: u16,
    /// Erases since the last static wear-levelling check.
    pub erases_since_wl: u32,
    /// Block chosen by the wear-levelling check, waiting to be moved.
    pub wl_candidate: u32,
    /// Blocks that went bad with data in them, waiting to be emptied (list head).
    pub retire_head: u32,
    /// Link in the core's "plane needs attention" queue.
    pub attn_next: u32,
    /// Whether the plane is on that queue.
    pub in_attn: bool,
    /// Lowest non-empty valid-count bucket may be at or above this.
    pub min_bucket_hint: u16,
    /// Whether the host stream can take a page here now (counted in the core).
    pub host_ready: bool,
    /// Valid units in the plane's blocks.
    pub valid_units: u32,
    /// Blocks lost to failures (bad, or retiring with data still to move)
    /// or set aside for the metadata region.
    pub lost_blocks: u32,
    /// Open metadata-region block (`NIL` if none).
    pub meta_active: u32,
    /// Mapping units the plane's blocks cannot hold this cycle: wordlines
    /// a GuardedErase protected or BPM retired.
    pub skipped_units: u32,
}

impl Default for PlaneState {
    fn default() -> Self {
        PlaneState {
            free_head: NIL,
            free_count: 0,
            host_active: NIL,
            gc_active: NIL,
            victim: NIL,
            victim_origin: Origin::Gc,
            victim_cursor: 0,
            gc_reads: 0,
            hold: Fifo::EMPTY,
            gc_free_head: NIL16,
            erases_since_wl: 0,
            wl_candidate: NIL,
            retire_head: NIL,
            attn_next: NIL,
            in_attn: false,
            min_bucket_hint: 0,
            host_ready: false,
            valid_units: 0,
            lost_blocks: 0,
            meta_active: NIL,
            skipped_units: 0,
        }
    }
}

/// What a buffer slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum SlotState {
    /// On a free stack.
    #[default]
    Free = 0,
    /// Host data waiting in the write buffer.
    WbPending,
    /// Host data trimmed while waiting; freed when it reaches the queue head.
    WbDead,
    /// Host data being programmed.
    WbProgramming,
    /// Target of a host read in flight.
    Reading,
    /// A host read finished; waiting to be polled.
    ReadDone,
    /// A host read failed; waiting to be polled.
    ReadFailed,
    /// Handed to the host by a completion; freed on the next call into the core.
    ReadHandedOut,
    /// Target of a GC read in flight.
    GcReading,
    /// Relocated data waiting for a GC program.
    GcHolding,
    /// Relocated data being programmed.
    GcProgramming,
}

/// Per-slot metadata (one entry per buffer slot, lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SlotMeta {
    /// Logical unit held (or host tag for reads).
    pub lpn: u32,
    /// Source physical unit for GC data; admission sequence for write-buffer data.
    pub aux: u32,
    /// Intrusive link (free stack, pending FIFO, holding FIFO, completion FIFO).
    pub next: u16,
    /// What the slot holds.
    pub state: SlotState,
}

/// Bookkeeping the core keeps for an operation in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OpKind {
    /// Entry unused.
    #[default]
    Free,
    /// Host read into one slot.
    HostRead,
    /// Write-buffer flush program.
    HostProgram,
    /// GC (or WL / retire) read of victim units.
    GcRead,
    /// GC program of relocated units.
    GcProgram,
    /// Erase of a reclaimed victim.
    Erase,
    /// Erase issued by format.
    FormatErase,
    /// An in-plane copy a migration hook emitted (rcFTL: a GC copyback).
    Migrate,
    /// A read a migration hook emitted to measure a page (rcFTL: a
    /// block's BER class).
    Probe,
    /// Write-back of a dirty translation page.
    MapProgram,
    /// Rewrite of a live translation page out of a region block being cleaned.
    MapMove,
    /// Erase of an emptied metadata-region block.
    MapErase,
    /// Program of the power-cut flush (data, translation page or record).
    Cut,
    /// Mount: read of a block's first page.
    MountHead,
    /// Mount: read of a metadata-region page.
    MountRegion,
    /// Mount: read of the newest power-cut record.
    MountRecord,
    /// Mount: read of a page the last power-cut flush wrote.
    MountReplay,
    /// Mount: erase of a block whose erase the power cut tore.
    MountErase,
    /// Mount: read of an anchor page.
    MountAnchor,
    /// Mount: read of a block-table page.
    MountTable,
    /// Mount: program of the dirty marker after the checkpoint.
    MountSeal,
    /// Mount: erase of the other anchor block before the seal moves there.
    MountSealErase,
}

/// One entry of the in-flight operation table (lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpEntry {
    /// What the operation is for.
    pub kind: OpKind,
    /// Intrusive link (free stack or outbound FIFO).
    pub next: u16,
    /// The command as emitted.
    pub cmd: NandCmd,
    /// Why it was emitted.
    pub origin: Origin,
    /// Units carried (programs) or read (reads).
    pub count: u8,
    /// Host tag for host reads.
    pub tag: u32,
}

impl Default for OpEntry {
    fn default() -> Self {
        OpEntry {
            kind: OpKind::Free,
            next: NIL16,
            cmd: NandCmd::Erase {
                block: crate::medium::addr::BlockId(0),
            },
            origin: Origin::Meta,
            count: 0,
            tag: 0,
        }
    }
}

/// How many elements each lent slice needs for a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSizes {
    /// Logical-to-physical map entries (`u32` each).
    pub l2p: usize,
    /// Physical-to-logical map entries (`u32` each).
    pub p2l: usize,
    /// Block metadata entries.
    pub blocks: usize,
    /// Valid-count bucket heads (`u32` each).
    pub buckets: usize,
    /// Plane states.
    pub planes: usize,
    /// Buffer slot metadata entries (the driver needs as many data slots).
    pub slots: usize,
    /// In-flight operation entries.
    pub ops: usize,
    /// Translation pages (entries of each persistence table); 0 with persistence off.
    pub tps: usize,
    /// Bytes of metadata page buffers; 0 with persistence off.
    pub meta_bytes: usize,
}

impl TableSizes {
    /// Sizes for a validated configuration.
    pub fn for_config(cfg: &Config) -> Result<Self, Error> {
        cfg.validate()?;
        let g = &cfg.geometry;
        let ub = usize::try_from(g.units_per_block())
            .map_err(|_| Error::InvalidConfig("units per block"))?;
        Ok(TableSizes {
            l2p: cfg.logical_units as usize,
            p2l: g.total_units() as usize,
            blocks: g.total_blocks() as usize,
            buckets: (g.planes() as usize).saturating_mul(ub.saturating_add(1)),
            planes: g.planes() as usize,
            slots: cfg.total_slots() as usize,
            ops: cfg.max_inflight as usize,
            tps: crate::ftl::persist::sizes(&cfg.persist, cfg.logical_units).0,
            meta_bytes: crate::ftl::persist::sizes(&cfg.persist, cfg.logical_units).1,
        })
    }
}

/// The slices lent to the core. Contents on entry do not matter: the core initialises them.
pub struct Tables<'a> {
    /// Logical-to-physical map.
    pub l2p: &'a mut [u32],
    /// Physical-to-logical map (doubles as the valid bitmap).
    pub p2l: &'a mut [u32],
    /// Block metadata.
    pub blocks: &'a mut [BlockMeta],
    /// Valid-count bucket heads.
    pub buckets: &'a mut [u32],
    /// Plane states.
    pub planes: &'a mut [PlaneState],
    /// Buffer slot metadata.
    pub slots: &'a mut [SlotMeta],
    /// In-flight operations.
    pub ops: &'a mut [OpEntry],
    /// Generation of each operation entry; kept across a remount over the
    /// same memory, so a completion from before it is refused.
    pub generations: &'a mut [u16],
    /// Mapping persistence tables ([`crate::ftl::persist::PersistTables::none`] when off).
    pub persist: crate::ftl::persist::PersistTables<'a>,
}

impl<'a> Tables<'a> {
    /// Carves the tables `cfg` needs out of `l` (see [`crate::ftl::lend`]).
    pub(crate) fn lend<L: Lend<'a>>(cfg: &Config, l: &mut L) -> Result<Self, Error> {
        use crate::ftl::persist::PersistTables;
        let s = TableSizes::for_config(cfg)?;
        Ok(Tables {
            l2p: l.slice(s.l2p, 0u32, "l2p")?,
            p2l: l.slice(s.p2l, 0u32, "p2l")?,
            blocks: l.slice(s.blocks, BlockMeta::default(), "blocks")?,
            buckets: l.slice(s.buckets, 0u32, "buckets")?,
            planes: l.slice(s.planes, PlaneState::default(), "planes")?,
            slots: l.slice(s.slots, SlotMeta::default(), "slots")?,
            ops: l.slice(s.ops, OpEntry::default(), "ops")?,
            generations: l.slice_kept(s.ops, "ops")?,
            persist: PersistTables {
                gtd: l.slice(s.tps, 0u32, "gtd")?,
                tp_seq: l.slice(s.tps, 0u64, "tp_seq")?,
                tp_flags: l.slice(s.tps, 0u8, "tp_flags")?,
                tp_links: l.slice(s.tps, Default::default(), "tp_links")?,
                meta: l.slice(s.meta_bytes, 0u8, "meta")?,
                tp_inflight: l.slice(s.tps, 0u16, "tp_inflight")?,
            },
        })
    }
}
