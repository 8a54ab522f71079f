//! The most memory a run of a [`Plan`] can take, computed before anything
//! is allocated, so the command line can refuse a configuration that would
//! exhaust the machine (`--max-memory`) instead of aborting mid-run.

use firmware_core::{Error, TableSizes};
use nand_model::StorageSizes;

use crate::engine::{engine_bytes, CoreStore};
use crate::sim::Plan;

/// Bytes of wordline-model state per block (192 wordlines, a few words each).
const WORDLINE_BYTES_PER_BLOCK: u64 = 192 * 16;
/// Metadata pages the medium may hold per translation page (the live copy,
/// older copies awaiting cleaning and checkpoint copies).
const META_COPIES_PER_TP: u64 = 3;
/// Metadata blocks per plane beyond the translation pages (open blocks,
/// erased reserve, checkpoint and cut records).
const META_EXTRA_BLOCKS_PER_PLANE: u64 = 4;

impl Plan {
    /// The worst-case bytes a run (or a crash or serve session) of this
    /// plan allocates with `qd` host requests outstanding: the core's
    /// tables and slot pool, the engine, the medium's records (full
    /// payloads with `full_data`), its metadata pages and wordline state.
    pub fn worst_case_bytes(&self, qd: u32) -> Result<u64, Error> {
        let cfg = &self.core;
        let g = &cfg.geometry;
        let unit = u64::from(g.unit_bytes());
        let sizes = TableSizes::for_config(cfg)?;
        let mut total = CoreStore::<u64>::bytes_for(cfg)?;
        let medium = StorageSizes::for_geometry(g).bytes() as u64;
        total = total.saturating_add(medium);
        if self.full_data {
            let slots = sizes.slots as u64;
            total = total
                .saturating_add(slots.saturating_mul(unit))
                .saturating_add(u64::from(g.total_units()).saturating_mul(unit));
        }
        if cfg.persist.enabled() {
            let page = firmware_core::persist::tp::meta_page_bytes(&cfg.persist) as u64;
            let pages = (sizes.tps as u64)
                .saturating_mul(META_COPIES_PER_TP)
                .saturating_add(
                    u64::from(g.planes())
                        .saturating_mul(u64::from(g.pages_per_block))
                        .saturating_mul(META_EXTRA_BLOCKS_PER_PLANE),
                );
            total = total.saturating_add(pages.saturating_mul(page));
        }
        if self.wordline.is_some() {
            total = total.saturating_add(
                u64::from(g.total_blocks()).saturating_mul(WORDLINE_BYTES_PER_BLOCK),
            );
        }
        Ok(total.saturating_add(engine_bytes(cfg, qd, unit, self.engine.sample_step_ns != 0)))
    }
}
