//! rcFTL's state: its lent per-block, per-plane and per-page slices and
//! the copyback state machine.

use super::copyback::{CopybackMode, CopybackState, MAX_LEVELS};
use super::ctt::BerClass;
use super::epm::Quota;
use crate::config::Config;
use crate::error::{Error, OrRare};
use crate::ftl::lend::Lend;
use crate::ftl::tables::NIL;
use crate::medium::addr::{BlockId, PlaneId};

/// rcFTL's state of one block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcBlock {
    /// Copyback quota every page of the block carries (per-block EPM).
    pub quota: Quota,
    /// BER class measured after the block's first program since erase
    /// (`None`: not yet, counted as the worst).
    pub ber: Option<BerClass>,
}

/// rcFTL's state of one plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcPlane {
    /// GC active blocks of the lower quota levels (`NIL` if none); the
    /// core's GC active block is the level of the full quota.
    pub levels: [u32; MAX_LEVELS - 1],
    /// Whether the current victim moves its pages by copyback where the EPM allows.
    pub victim_copyback: bool,
    /// GC copybacks in flight.
    pub inflight: u16,
}

impl Default for RcPlane {
    fn default() -> Self {
        RcPlane {
            levels: [NIL; MAX_LEVELS - 1],
            victim_copyback: false,
            inflight: 0,
        }
    }
}

/// The slices rcFTL keeps its state in.
pub struct RcTables<'a> {
    /// One entry per block.
    pub blocks: &'a mut [RcBlock],
    /// One entry per plane.
    pub planes: &'a mut [RcPlane],
    /// One EPM byte per page (per-page modes only; empty otherwise).
    pub pages: &'a mut [u8],
}

impl<'a> RcTables<'a> {
    /// Carves the slices `cfg` needs (none when GC copies off-chip).
    pub fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<Self, Error> {
        let g = &cfg.geometry;
        let on = cfg.copyback.mode != CopybackMode::OffChip;
        let pages = if cfg.copyback.mode.per_page() {
            g.total_pages() as usize
        } else {
            0
        };
        Ok(RcTables {
            blocks: l.slice(
                if on { g.total_blocks() as usize } else { 0 },
                RcBlock::default(),
                &"rcftl blocks",
            )?,
            planes: l.slice(
                if on { g.planes() as usize } else { 0 },
                RcPlane::default(),
                &"rcftl planes",
            )?,
            pages: l.slice(pages, 0u8, &"rcftl pages")?,
        })
    }
}

/// rcFTL: the copyback state machine and its tables.
pub struct RcFtl<'a> {
    pub(crate) st: CopybackState,
    pub(crate) t: RcTables<'a>,
}

impl<'a> RcFtl<'a> {
    /// rcFTL for `cfg` over its tables, or `None` when GC copies off-chip
    /// (the baseline, which needs no state).
    pub fn new(cfg: &Config, t: RcTables<'a>) -> Result<Option<Self>, Error> {
        if cfg.copyback.mode == CopybackMode::OffChip {
            return Ok(None);
        }
        let st = CopybackState::new(&cfg.copyback)?;
        let q = st.epm.q_init();
        for b in t.blocks.iter_mut() {
            *b = RcBlock {
                quota: q,
                ber: None,
            };
        }
        Ok(Some(RcFtl { st, t }))
    }

    pub(crate) fn block(&self, b: BlockId) -> Result<&RcBlock, Error> {
        self.t
            .blocks
            .get(b.0 as usize)
            .or_rare(Error::Corrupt(&"rcftl block"))
    }

    pub(crate) fn block_mut(&mut self, b: BlockId) -> Result<&mut RcBlock, Error> {
        self.t
            .blocks
            .get_mut(b.0 as usize)
            .or_rare(Error::Corrupt(&"rcftl block"))
    }

    pub(crate) fn plane(&self, p: PlaneId) -> Result<&RcPlane, Error> {
        self.t
            .planes
            .get(p.0 as usize)
            .or_rare(Error::Corrupt(&"rcftl plane"))
    }

    pub(crate) fn plane_mut(&mut self, p: PlaneId) -> Result<&mut RcPlane, Error> {
        self.t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::Corrupt(&"rcftl plane"))
    }
}

/// A hook set that carries rcFTL (the assembly implements it).
pub trait HasRcftl<'a> {
    /// rcFTL's state, if the configuration turned it on.
    fn rcftl(&self) -> Option<&RcFtl<'a>>;
    /// The same, mutable.
    fn rcftl_mut(&mut self) -> Option<&mut RcFtl<'a>>;
}
