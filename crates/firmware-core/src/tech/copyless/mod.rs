//! Copyless copy (seed 003): copy by remapping, with reference counts and a
//! shadow OOB.

pub mod copy;
pub mod refcount;

use crate::config::Config;
use crate::error::Error;
use crate::ftl::lend::Lend;
use refcount::{CopylessMap, CopylessTables, RefCounts, ShadowEntry};

/// Carves the copy tables `cfg` needs: reference count words, shadow OOB
/// bucket heads (about one per record keeps the chains short) and records;
/// none unless copies remap.
pub fn lend<'a>(cfg: &Config, l: &mut Lend<'a>) -> Result<CopylessTables<'a>, Error> {
    let on = cfg.copy.remap();
    let counts = if on {
        RefCounts::words_for(cfg.geometry.total_units(), cfg.copy.refcount_bits)?
    } else {
        0
    };
    let records = if on {
        cfg.copy.shadow_entries as usize
    } else {
        0
    };
    Ok(CopylessTables {
        counts: l.slice(counts, 0u32, &"cc_counts")?,
        shadow_heads: l.slice(if on { records.max(1) } else { 0 }, 0u32, &"cc_heads")?,
        shadow: l.slice(records, ShadowEntry::default(), &"cc_shadow")?,
    })
}

/// The copy tables for `cfg`, or `None` when copies are physical.
pub fn build<'a>(cfg: &Config, t: CopylessTables<'a>) -> Result<Option<CopylessMap<'a>>, Error> {
    if !cfg.copy.remap() {
        return Ok(None);
    }
    Ok(Some(CopylessMap::new(
        t,
        cfg.geometry.total_units(),
        cfg.copy.refcount_bits,
    )?))
}
