//! The crash workload of a zoned namespace (`host.interface = zns`) and of
//! FDP (placement identifiers on every write).
//!
//! Zone epochs run writes at the write pointer, zone appends, resets,
//! finishes, opens, closes and reads through the zone state machine, each
//! accepted command turned into core writes (with the zone's placement
//! handle) and trims as the zone module says. After every mount the zones
//! are rebuilt from the mapping ([`Zones::recover`]) and every zone's
//! state and write pointer must equal what the acknowledged commands left
//! (open zones close at a cut; an open zone without data is empty).

use firmware_core::tech::placement::handles;
use firmware_core::tech::zns::zone::{Marker, Zone, ZoneAction, ZoneGeometry, ZoneState, Zones};
use firmware_core::{Error, FullFtl, Loc, Lpn, Slot};
use nand_model::SimMedium;

use super::{stamp, CrashReport, Drive, Rng};

/// A write of `lpn` with the FDP placement identifier the crash workload
/// gives it (the hot eighth of the span on handle 0, the rest spread over
/// the others), or a plain write without placement.
pub(super) fn place(ftl: &mut FullFtl<'_>, lpn: u32, span: u32, now: u64) -> Result<Slot, Error> {
    let n = ftl.config().placement.handles;
    if n == 0 {
        return ftl.write(Lpn(lpn), now);
    }
    let h = if lpn < span / 8 || n == 1 {
        0
    } else {
        1 + (lpn % u32::from(n - 1)) as u8
    };
    handles::write(ftl, Lpn(lpn), h, now)
}

/// Zone state kept across cuts: the table and what the acknowledged
/// commands left.
pub(super) struct ZoneWork {
    geo: ZoneGeometry,
    table: Vec<Zone>,
    /// (state, write pointer) every zone must be found in after the next mount.
    expect: Vec<(ZoneState, u32)>,
}

/// The core's mapping, with the oracle's per-unit records, as one epoch
/// uses them.
pub(super) struct Epoch<'e, 'f> {
    pub ftl: &'e mut FullFtl<'f>,
    pub medium: &'e mut SimMedium,
    pub data: &'e mut [u64],
    pub rng: &'e mut Rng,
    pub acked: &'e mut [u64],
    pub next_version: &'e mut [u32],
    pub touched: &'e mut Vec<u32>,
}

impl ZoneWork {
    /// Every zone empty, as after a format.
    pub(super) fn new(geo: ZoneGeometry) -> Self {
        ZoneWork {
            geo,
            table: vec![Zone::default(); geo.zones as usize],
            expect: vec![(ZoneState::Empty, 0); geo.zones as usize],
        }
    }

    /// After a mount: rebuilds the zones from the mapping, counts zones
    /// whose state or write pointer differ from the acknowledged ones,
    /// then runs `ops` zone commands (at least 100 acknowledged zone
    /// writes and appends) and records what a cut must leave.
    pub(super) fn epoch(
        &mut self,
        d: &mut Drive,
        e: Epoch<'_, '_>,
        ops: u64,
        rep: &mut CrashReport,
    ) -> Result<(), Error> {
        let Epoch {
            ftl,
            medium,
            data,
            rng,
            acked,
            next_version,
            touched,
        } = e;
        let mut zs = Zones::new(self.geo, &mut self.table)?;
        zs.recover(|lba| !matches!(ftl.location(Lpn(lba as u32)), Ok(Loc::Unmapped) | Err(_)))?;
        for (z, want) in self.expect.iter().enumerate() {
            let got = zs.zone(z as u32).map(|e| (e.state, e.wp));
            if got != Some(*want) {
                rep.zone_wp_mismatches += 1;
            }
        }
        let cap = self.geo.cap;
        let mut writes = 0u64;
        let mut i = 0u64;
        while i < ops || writes < 100 {
            i += 1;
            rep.host_commands += 1;
            let r = rng.below(100);
            // Mostly active zones for writes and full ones for resets, so
            // few commands hit the resource limits; any zone otherwise.
            let want = |e: &Zone| match r {
                0..=74 => e.state.is_active(),
                75..=82 => e.state == ZoneState::Full,
                _ => e.wp > 0,
            };
            let pool: Vec<u32> = (0..self.geo.zones)
                .filter(|&z| zs.zone(z).is_some_and(|e| want(&e)))
                .collect();
            let z = if !pool.is_empty() && rng.chance(0.85) {
                pool[rng.below(pool.len() as u64) as usize]
            } else {
                rng.below(u64::from(self.geo.zones)) as u32
            };
            let zslba = zs.zslba(z);
            let k = 1 + rng.below(4) as u32;
            let wrote = if r < 45 {
                let wp = zs.zone(z).map_or(0, |e| e.wp);
                // Now and then off the pointer (inside the zone, so no
                // other zone's pointer is hit): the refusal must come.
                let off = u64::from(wp + 1 < cap && rng.chance(0.05));
                match zs.write(zslba + u64::from(wp) + off, k) {
                    Ok(h) if off == 0 => Some((zslba + u64::from(wp), h)),
                    Ok(_) => return Err(Error::Corrupt(&"zone write off the pointer accepted")),
                    Err(_) => {
                        rep.zone_refusals += 1;
                        None
                    }
                }
            } else if r < 75 {
                let wp = zs.zone(z).map_or(0, |e| e.wp);
                match zs.append(zslba, k) {
                    Ok((at, h)) => {
                        if at != zslba + u64::from(wp) {
                            return Err(Error::Corrupt(&"zone append not at the pointer"));
                        }
                        rep.zone_appends += 1;
                        Some((at, h))
                    }
                    Err(_) => {
                        rep.zone_refusals += 1;
                        None
                    }
                }
            } else {
                let action = match r {
                    75..=82 => ZoneAction::Reset,
                    83..=87 => ZoneAction::Finish,
                    88..=92 => ZoneAction::Open,
                    _ => ZoneAction::Close,
                };
                match zs.manage(zslba, action) {
                    Ok(written) if action == ZoneAction::Reset => {
                        rep.zone_resets += 1;
                        // From the write pointer down, so the mapped blocks
                        // of the zone stay a prefix at any cut.
                        let m = zs.marker_lba(z, Marker::Finished);
                        let lbas = (zslba..zslba + u64::from(written)).rev().chain([m]);
                        for lba in lbas {
                            loop {
                                match ftl.trim(Lpn(lba as u32), d.now) {
                                    Ok(()) => break,
                                    Err(Error::Busy) => {
                                        if !d.step(ftl, medium, data, rng, true)? {
                                            return Err(Error::Corrupt(&"zone reset stuck"));
                                        }
                                    }
                                    Err(e) => return Err(e),
                                }
                            }
                            acked[lba as usize] = 0;
                            touched.push(lba as u32);
                        }
                    }
                    Ok(_) if action == ZoneAction::Finish => {
                        rep.zone_finishes += 1;
                        let m = zs.marker_lba(z, Marker::Finished);
                        write_units(d, ftl, medium, data, rng, (m, 1, 0), acked, next_version)?;
                        touched.push(m as u32);
                    }
                    Ok(_) => {}
                    Err(_) => rep.zone_refusals += 1,
                }
                None
            };
            if let Some((at, h)) = wrote {
                writes += 1;
                rep.zone_writes += 1;
                write_units(d, ftl, medium, data, rng, (at, k, h), acked, next_version)?;
                touched.extend(at as u32..at as u32 + k);
                debug_assert!(zs.zone(z).is_some_and(|e| e.wp <= cap));
            }
            for _ in 0..rng.below(4) {
                if !d.step(ftl, medium, data, rng, true)? {
                    break;
                }
            }
        }
        // What a cut leaves: open zones closed, zones without data empty.
        for (z, want) in self.expect.iter_mut().enumerate() {
            let e = zs.zone(z as u32).ok_or(Error::Corrupt(&"zone index"))?;
            *want = match e.state {
                ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => (e.state, e.wp),
                _ if e.wp == 0 => (ZoneState::Empty, 0),
                _ => (ZoneState::Closed, e.wp),
            };
        }
        Ok(())
    }
}

/// Writes `n` units from `lba` with placement handle `h`, each acknowledged.
#[allow(clippy::too_many_arguments)]
fn write_units(
    d: &mut Drive,
    ftl: &mut FullFtl<'_>,
    medium: &mut SimMedium,
    data: &mut [u64],
    rng: &mut Rng,
    (lba, n, h): (u64, u32, u8),
    acked: &mut [u64],
    next_version: &mut [u32],
) -> Result<(), Error> {
    for lba in lba as u32..lba as u32 + n {
        let slot = loop {
            match handles::write(ftl, Lpn(lba), h, d.now) {
                Ok(s) => break s,
                Err(Error::Busy) => {
                    if !d.step(ftl, medium, data, rng, true)? {
                        return Err(Error::Corrupt(&"zone write stuck"));
                    }
                }
                Err(e) => return Err(e),
            }
        };
        let v = next_version[lba as usize] + 1;
        next_version[lba as usize] = v;
        data[usize::from(slot.0)] = stamp(lba, v);
        acked[lba as usize] = stamp(lba, v);
    }
    Ok(())
}
