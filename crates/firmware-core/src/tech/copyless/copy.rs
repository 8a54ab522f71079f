//! Copyless copy in the data path: the [`crate::ftl::hooks::Ownership`]
//! hook over reference counts and the shadow OOB.
//!
//! [`Ftl::copy`] serves a copy of `len` mapping units. With
//! [`CopyMode::Remap`](crate::config::CopyMode::Remap) each destination unit
//! is remapped to its source's physical unit ([`crate::tech::copyless::refcount`]): the
//! unit's reference count grows, the tag goes to the shadow OOB, and no NAND
//! operation is emitted. The destination's L2P entry changes like a write's,
//! so its translation page turns dirty and reaches flash by the same path.
//!
//! A unit that cannot be remapped stops the command with
//! [`CopyStop::Physical`]: the driver copies that unit itself (read the
//! source, write the destination through the write buffer) and calls again
//! for the rest. That happens
//!
//! * for every unit with [`CopyMode::Physical`](crate::config::CopyMode::Physical);
//! * when the source's count is already `2^n - 1`;
//! * when the shadow OOB has no free record for the new tag (records are
//!   never evicted: they are a shared unit's only reverse mapping);
//! * when the source is still in the write buffer. Its data is not on flash
//!   yet, so there is no physical unit to share; the driver's copy of the
//!   buffered data costs one buffer slot and, later, one unit program, which
//!   is what the host would pay without copyless copy. A remap that waited
//!   for the flush instead would stall the host behind the whole buffer.
//!
//! Copy-on-write: an overwrite or trim of a tag releases it ([`Ftl::write`],
//! [`Ftl::trim`]); the unit stays valid (and in its block's valid count)
//! until its count reaches zero. The P2L entry of a shared unit names one of
//! its tags; GC and wear levelling relocate a shared unit once and remap
//! every tag the shadow OOB lists. Mount rebuilds counts and shadow records
//! from the recovered L2P table: every logical unit mapped to a physical one
//! is one tag of it.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::host::{CopyFallback, CopyStop};
use crate::ftl::tables::BlockState;
use crate::ftl::Ftl;
use crate::map::loc::Loc;
use crate::medium::addr::{Lpn, Pun};
use crate::tech::copyless::refcount::{CopyOutcome, CopylessMap, Release};

/// A hook set that carries copyless copy (the assembly implements it).
pub trait HasCopyless<'a> {
    /// The copy tables, if copies remap.
    fn copyless(&self) -> Option<&CopylessMap<'a>>;
    /// The same, mutable.
    fn copyless_mut(&mut self) -> Option<&mut CopylessMap<'a>>;
}

/// One unit of [`Ftl::copy`]; `Some` stops the command.
pub(crate) fn copy_unit<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    s: Lpn,
    d: Lpn,
) -> Result<Option<CopyStop>, Error> {
    let Some(cc) = f.h.copyless() else {
        return Ok(Some(CopyStop::Physical(CopyFallback::Mode)));
    };
    if s == d {
        return Ok(None);
    }
    let from = f.loc(s)?;
    if let Loc::Flash(p) = from {
        if f.loc(d)? == Loc::Flash(p) {
            return Ok(None);
        }
        let c = cc.count(p)?;
        if c >= cc.counts().max() || u32::from(c) >= tag_limit(f) {
            return Ok(Some(CopyStop::Physical(CopyFallback::CountOverflow)));
        }
        if partial(f) {
            let state = f.blk(f.g.block_of(f.g.page_of_unit(p)))?.state;
            if matches!(state, BlockState::Victim | BlockState::Retiring) {
                return Ok(Some(CopyStop::Physical(CopyFallback::Relocating)));
            }
        }
        let need = if c == 1 { 2 } else { 1 };
        if cc.shadow().free() < need {
            return Ok(Some(CopyStop::Physical(CopyFallback::ShadowFull)));
        }
    }
    if matches!(from, Loc::Buffer(_)) {
        return Ok(Some(CopyStop::Physical(CopyFallback::SourceBuffered)));
    }
    if !f.map_may_touch(d)? {
        return Ok(Some(CopyStop::Busy));
    }
    f.release_loc(d)?;
    match from {
        Loc::Flash(p) => {
            let primary = f.p2l(p)?.or_rare(Error::Corrupt(&"copy source not live"))?;
            let cc = f.h.copyless_mut().or_rare(Error::Corrupt(&"copy tables"))?;
            let src_tag = if cc.count(p)? == 1 { primary } else { s };
            match cc.copy(p, src_tag, d)? {
                CopyOutcome::Remapped(_) => {}
                CopyOutcome::Fallback(_) => {
                    return Err(rare(Error::Corrupt(&"copy refused after its checks")))
                }
            }
            f.set_loc(d, Loc::Flash(p))?;
        }
        other => f.set_loc(d, other)?,
    }
    Ok(None)
}

/// Whether the capacitor protects only part of the translation pages:
/// then relocating a shared unit, which dirties one translation page per
/// tag, must fit the dirty budget like a page program does.
fn partial<'a, H: Hooks + HasCopyless<'a>>(f: &Ftl<'_, H>) -> bool {
    f.h.copyless().is_some() && f.ps.on && f.ps.budget < f.ps.n_tp
}

/// Most tags a unit may have: with partial protection, few enough that
/// relocating it (a page's translation pages plus one per other tag)
/// always fits the dirty budget once write-backs have emptied it.
fn tag_limit<'a, H: Hooks + HasCopyless<'a>>(f: &Ftl<'_, H>) -> u32 {
    if partial(f) {
        let upp = u32::from(f.g.units_per_page);
        f.ps.budget.saturating_sub(upp).wrapping_add(1).max(1)
    } else {
        u32::MAX
    }
}

/// Translation pages beyond the P2L tag's that relocating `p` may
/// dirty (its other tags), with partial protection; else 0.
pub(crate) fn extra_tps<'a, H: Hooks + HasCopyless<'a>>(
    f: &Ftl<'_, H>,
    p: Pun,
) -> Result<u32, Error> {
    let Some(cc) = f.h.copyless().filter(|_| partial(f)) else {
        return Ok(0);
    };
    Ok(u32::from(cc.count(p)?.saturating_sub(1)))
}

/// Whether `extra` translation pages beyond a data page's fit the dirty
/// budget now (see [`partial`]); if not, write-backs start.
pub(crate) fn room_for_extra<H: Hooks>(f: &mut Ftl<'_, H>, extra: u32) -> Result<bool, Error> {
    if extra == 0 {
        return Ok(true);
    }
    let upp = u32::from(f.g.units_per_page);
    let need = f.ps.used().wrapping_add(upp).wrapping_add(extra);
    if need <= f.ps.budget {
        return Ok(true);
    }
    f.ps.waiting = true;
    // Write-backs stop once a page fits; here a page and `extra` more
    // must, so they run against a budget short by `extra`.
    let budget = f.ps.budget;
    f.ps.budget = budget.saturating_sub(extra);
    let r = f.map_write_back();
    f.ps.budget = budget;
    r?;
    Ok(false)
}

/// Reserves (`true`) or releases `n` translation pages for the extra tags
/// of a relocation in flight.
pub(crate) fn reserve_extra<H: Hooks>(f: &mut Ftl<'_, H>, n: u32, take: bool) {
    f.ps.reserved = if take {
        f.ps.reserved.wrapping_add(n)
    } else {
        f.ps.reserved.saturating_sub(n)
    };
}

/// Tag `lpn` of physical unit `p` is overwritten or trimmed. Without
/// copyless copy (or when `lpn` was its last tag) the unit dies; else
/// it loses one reference and the P2L names a remaining tag.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn release<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    p: Pun,
    lpn: Lpn,
) -> Result<(), Error> {
    let Some(cc) = f.h.copyless_mut() else {
        return f.invalidate_unit(p);
    };
    match cc.release(p, lpn)? {
        Release::Reclaimable => f.invalidate_unit(p),
        Release::Sole(t) => f.set_p2l(p, t),
        Release::Shared(_) => {
            let t = cc
                .tags(p)
                .next()
                .or_rare(Error::Corrupt(&"shared unit without shadow tags"))?;
            if f.p2l(p)? == Some(lpn) {
                f.set_p2l(p, t)?;
            }
            Ok(())
        }
    }
}

/// A unit was programmed with new data for one logical unit.
pub(crate) fn programmed_unit<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    p: Pun,
) -> Result<(), Error> {
    match f.h.copyless_mut() {
        Some(cc) => cc.program(p),
        None => Ok(()),
    }
}

/// The tag a relocation of `from` must follow when the tag it was read for
/// has been released meanwhile while others still share the unit: the
/// unit's current P2L tag.
pub(crate) fn reloc_other<'a, H: Hooks + HasCopyless<'a>>(
    f: &Ftl<'_, H>,
    from: Pun,
) -> Result<Option<Lpn>, Error> {
    if f.h.copyless().is_none() {
        return Ok(None);
    }
    Ok(match f.p2l(from)? {
        Some(l) if f.loc(l)? == Loc::Flash(from) => Some(l),
        _ => None,
    })
}

/// Live unit `from` (P2L tag `lpn`) moved to `to`: counts and shadow
/// records move along and every other tag maps there too.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn unit_moved<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    from: Pun,
    to: Pun,
    lpn: Lpn,
) -> Result<(), Error> {
    let Some(cc) = f.h.copyless_mut() else {
        return Ok(());
    };
    cc.relocate(from, to)?;
    let mut c = cc.cursor(to);
    while let Some(t) = f.h.copyless().and_then(|cc| cc.next_tag(&mut c)) {
        if t != lpn {
            f.set_loc(t, Loc::Flash(to))?;
        }
    }
    Ok(())
}

/// Live unit `from` (P2L tag `lpn`) could not be read during relocation:
/// every other tag of it is lost too.
pub(crate) fn unit_lost<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    from: Pun,
    lpn: Lpn,
) -> Result<(), Error> {
    let Some(cc) = f.h.copyless() else {
        return Ok(());
    };
    let mut c = cc.cursor(from);
    while let Some(t) = f.h.copyless().and_then(|cc| cc.next_tag(&mut c)) {
        if t != lpn {
            f.set_loc(t, Loc::Lost)?;
            f.stats.lost_units = f.stats.lost_units.wrapping_add(1);
        }
    }
    if let Some(cc) = f.h.copyless_mut() {
        cc.forget(from)?;
    }
    Ok(())
}

/// Mount: logical unit `lpn` maps to `p`, which another logical unit
/// (`first`, its P2L tag) already claimed: another tag of a shared unit
/// (count and shadow record rebuilt).
pub(crate) fn mount_share<'a, H: Hooks + HasCopyless<'a>>(
    f: &mut Ftl<'_, H>,
    p: Pun,
    first: Lpn,
    lpn: Lpn,
) -> Result<(), Error> {
    let cc =
        f.h.copyless_mut()
            .or_rare(Error::Corrupt(&"unit validated twice"))?;
    match cc.copy(p, first, lpn)? {
        CopyOutcome::Remapped(_) => Ok(()),
        CopyOutcome::Fallback(_) => Err(rare(Error::Corrupt(
            &"mount: shared units exceed the copy tables",
        ))),
    }
}

/// Audit of one L2P entry `lpn -> p`: the P2L names it, or the shadow OOB
/// lists it as a tag of the shared unit.
pub(crate) fn audit<'a, H: Hooks + HasCopyless<'a>>(
    f: &Ftl<'_, H>,
    p: Pun,
    lpn: Lpn,
) -> Result<bool, Error> {
    let primary = f.p2l(p)?;
    match f.h.copyless() {
        None => Ok(primary == Some(lpn)),
        Some(cc) => {
            let c = cc.count(p)?;
            if primary.is_none() || c == 0 {
                return Ok(false);
            }
            if c == 1 {
                return Ok(primary == Some(lpn));
            }
            let shadow = cc.shadow();
            Ok(shadow.contains(p, lpn)? && primary.map_or(Ok(false), |l| shadow.contains(p, l))?)
        }
    }
}

#[cfg(test)]
mod tests {
    //! Copyless copy over the mechanism: a real core on the test medium.
    use super::HasCopyless;
    use crate::config::{Config, CopyConfig, CopyMode};
    use crate::test_nand::{small_geometry, with_core};
    use crate::{CopyStop, FullFtl, Lpn, ReadValue};
    use std::vec;

    fn config(mode: CopyMode) -> Config {
        let mut cfg = Config::with_op_ratio(small_geometry(2), 0.6).unwrap();
        cfg.write_buffer_units = 8;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        cfg.copy = CopyConfig {
            mode,
            refcount_bits: 2,
            shadow_entries: 64,
        };
        cfg
    }

    #[test]
    fn a_remapped_copy_shares_the_unit_and_an_overwrite_releases_one_owner() {
        let cfg = config(CopyMode::Remap);
        with_core(cfg, |ftl, drv| {
            drv.write(ftl, Lpn(3), 33).unwrap();
            drv.flush(ftl).unwrap();
            let programs = ftl.stats().nand_programs;
            drv.copy(ftl, Lpn(3), Lpn(20), 1).unwrap();
            assert_eq!(
                ftl.stats().nand_programs,
                programs,
                "a remap programs nothing"
            );
            assert_eq!(ftl.stats().copy_remapped_units, 1);
            assert_eq!(ftl.location(Lpn(3)), ftl.location(Lpn(20)));
            let crate::Loc::Flash(p) = ftl.location(Lpn(3)).unwrap() else {
                panic!("copied unit not on flash");
            };
            assert_eq!(ftl.hooks().copyless().unwrap().count(p).unwrap(), 2);
            // Copy-on-write: the source's overwrite leaves the copy alone.
            drv.write(ftl, Lpn(3), 44).unwrap();
            drv.flush(ftl).unwrap();
            assert_eq!(ftl.hooks().copyless().unwrap().count(p).unwrap(), 1);
            assert_eq!(drv.read(ftl, Lpn(20)).unwrap(), ReadValue::Data(33));
            assert_eq!(drv.read(ftl, Lpn(3)).unwrap(), ReadValue::Data(44));
            ftl.audit().unwrap();
        })
    }

    #[test]
    fn physical_copies_build_no_copy_tables() {
        let cfg = config(CopyMode::Physical);
        let mut mem = vec![0u8; FullFtl::lend_bytes(&cfg).unwrap()];
        let mut ftl = FullFtl::new(cfg, &mut mem).unwrap();
        assert!(ftl.hooks().copyless().is_none());
        ftl.format(0).unwrap();
        while let Some(op) = ftl.poll_op() {
            ftl.complete(op.id, Ok(Default::default()), 0).unwrap();
        }
        let p = ftl.copy(Lpn(1), Lpn(2), 1, 0).unwrap();
        assert!(matches!(p.stop, CopyStop::Physical(_)));
    }
}
