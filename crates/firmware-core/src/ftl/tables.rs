//! The memory the caller lends to the core, and how much of it a configuration needs.
//!
//! Every large table is a slice the caller owns. [`TableSizes`] says how many
//! elements each slice must hold; [`Tables`] bundles the slices for
//! [`crate::Ftl::new`]. On a host the slices come from `Vec`s; on a
//! microcontroller from `static` arrays or a linker-placed RAM region.

use crate::config::Config;
use crate::error::Error;
use crate::ftl::lend::Lend;
pub use crate::list::{stack_pop, stack_push, stack_push_entry, Fifo, Linked, NIL, NIL16};
pub use crate::map::slot::{SlotMeta, SlotState};
use crate::medium::nand::{NandCmd, Origin};
pub use crate::space::block::{BlockMeta, BlockState, PlaneState};

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
    /// Write of a translation page a relocation outside the budget made
    /// stale (`deferred.rs`).
    MapSweep,
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
    /// Generation of the entry: the high half of the ids it is handed out
    /// under, moved on each time it is freed. It survives a remount over
    /// the same memory ([`Lend::slice_renewed`] keeps it), so a completion from
    /// before one is refused. It sits in the entry's padding and is read
    /// with the entry, one lookup for both.
    pub generation: u16,
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
            generation: 0,
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
            .map_err(|_| Error::InvalidConfig(&"units per block"))?;
        Ok(TableSizes {
            l2p: cfg.logical_units as usize,
            p2l: g.total_units() as usize,
            blocks: g.total_blocks() as usize,
            buckets: (g.planes() as usize).saturating_mul(ub.saturating_add(1)),
            planes: g.planes() as usize,
            slots: cfg.total_slots() as usize,
            ops: cfg.max_inflight as usize,
            tps: crate::persist::tp::sizes(&cfg.persist, cfg.logical_units).0,
            meta_bytes: crate::persist::tp::sizes(&cfg.persist, cfg.logical_units).1,
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
    /// In-flight operations, each with its generation.
    pub ops: &'a mut [OpEntry],
    /// Mapping persistence tables ([`crate::persist::tp::PersistTables::none`] when off).
    pub persist: crate::persist::tp::PersistTables<'a>,
}

impl<'a> Tables<'a> {
    /// Carves the tables `cfg` needs out of `l` (see [`crate::ftl::lend`]).
    pub(crate) fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<Self, Error> {
        use crate::persist::tp::PersistTables;
        let s = TableSizes::for_config(cfg)?;
        Ok(Tables {
            l2p: l.slice(s.l2p, 0u32, &"l2p")?,
            p2l: l.slice(s.p2l, 0u32, &"p2l")?,
            blocks: l.slice(s.blocks, BlockMeta::default(), &"blocks")?,
            buckets: l.slice(s.buckets, 0u32, &"buckets")?,
            planes: l.slice(s.planes, PlaneState::default(), &"planes")?,
            slots: l.slice(s.slots, SlotMeta::default(), &"slots")?,
            ops: l.slice_renewed(
                s.ops,
                core::mem::offset_of!(OpEntry, generation),
                |generation| OpEntry {
                    generation,
                    ..OpEntry::default()
                },
                &"ops",
            )?,
            persist: PersistTables {
                gtd: l.slice(s.tps, 0u32, &"gtd")?,
                tp_seq: l.slice(s.tps, 0u64, &"tp_seq")?,
                tp_flags: l.slice(s.tps, 0u8, &"tp_flags")?,
                tp_links: l.slice(s.tps, Default::default(), &"tp_links")?,
                meta: l.slice(s.meta_bytes, 0u8, &"meta")?,
                tp_inflight: l.slice(s.tps, 0u16, &"tp_inflight")?,
            },
        })
    }
}
