//! The zone state machine against a plain model of the NVMe ZNS rules:
//! random writes, appends, reads, management actions, device-initiated
//! read-only zones and power cuts (the zones rebuilt from what the host
//! interface made durable); every status and every zone must agree.
#![cfg(feature = "zns")]

use std::collections::BTreeSet;

use firmware_core::tech::zns::zone::{
    Marker, ReportFilter, Zone, ZoneAction, ZoneDescriptor, ZoneGeometry, ZoneState as S,
    ZoneStatus as E, Zones,
};
use proptest::prelude::*;

/// The model: a state and a write pointer per zone, limits counted afresh.
#[derive(Clone, Debug)]
struct Model {
    geo: ZoneGeometry,
    st: Vec<S>,
    wp: Vec<u32>,
}

impl Model {
    fn new(geo: ZoneGeometry) -> Self {
        Model {
            geo,
            st: vec![S::Empty; geo.zones as usize],
            wp: vec![0; geo.zones as usize],
        }
    }
    fn count(&self, f: impl Fn(S) -> bool) -> u32 {
        self.st.iter().filter(|s| f(**s)).count() as u32
    }
    fn open(&self) -> u32 {
        self.count(|s| s == S::ImplicitlyOpen || s == S::ExplicitlyOpen)
    }
    fn active(&self) -> u32 {
        self.count(|s| matches!(s, S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed))
    }
    /// Room to open a zone; closes the lowest implicitly open one at the limit.
    fn room(&mut self, activate: bool) -> Result<(), E> {
        if activate && self.active() >= self.geo.max_active {
            return Err(E::TooManyActiveZones);
        }
        if self.open() < self.geo.max_open {
            return Ok(());
        }
        match self.st.iter().position(|&s| s == S::ImplicitlyOpen) {
            Some(i) => {
                self.st[i] = S::Closed;
                Ok(())
            }
            None => Err(E::TooManyOpenZones),
        }
    }
    fn put(&mut self, z: usize, n: u32) -> Result<u64, E> {
        match self.st[z] {
            S::Full => return Err(E::ZoneIsFull),
            S::ReadOnly => return Err(E::ZoneIsReadOnly),
            S::Offline => return Err(E::ZoneIsOffline),
            _ => {}
        }
        if self.wp[z] + n > self.geo.cap {
            return Err(E::ZoneBoundaryError);
        }
        match self.st[z] {
            S::Empty | S::Closed => {
                self.room(self.st[z] == S::Empty)?;
                self.st[z] = S::ImplicitlyOpen;
            }
            _ => {}
        }
        let at = z as u64 * u64::from(self.geo.size) + u64::from(self.wp[z]);
        self.wp[z] += n;
        if self.wp[z] == self.geo.cap {
            self.st[z] = S::Full;
        }
        Ok(at)
    }
    fn check_range(&self, lba: u64, n: u32) -> Result<usize, E> {
        if n == 0 {
            return Err(E::InvalidField);
        }
        if lba + u64::from(n) > u64::from(self.geo.zones) * u64::from(self.geo.size) {
            return Err(E::LbaOutOfRange);
        }
        Ok((lba / u64::from(self.geo.size)) as usize)
    }
    fn write(&mut self, lba: u64, n: u32) -> Result<(), E> {
        let z = self.check_range(lba, n)?;
        let start = z as u64 * u64::from(self.geo.size);
        if !matches!(self.st[z], S::Full | S::ReadOnly | S::Offline)
            && lba != start + u64::from(self.wp[z])
        {
            return Err(E::ZoneInvalidWrite);
        }
        self.put(z, n).map(|_| ())
    }
    fn append(&mut self, zslba: u64, n: u32) -> Result<u64, E> {
        let z = self.check_range(zslba, n)?;
        if !zslba.is_multiple_of(u64::from(self.geo.size)) {
            return Err(E::InvalidField);
        }
        self.put(z, n)
    }
    fn manage(&mut self, zslba: u64, a: ZoneAction) -> Result<u32, E> {
        if zslba >= u64::from(self.geo.zones) * u64::from(self.geo.size) {
            return Err(E::LbaOutOfRange);
        }
        if !zslba.is_multiple_of(u64::from(self.geo.size)) {
            return Err(E::InvalidField);
        }
        let z = (zslba / u64::from(self.geo.size)) as usize;
        let s = self.st[z];
        let bad = Err(E::InvalidZoneStateTransition);
        match a {
            ZoneAction::Open => match s {
                S::ExplicitlyOpen => {}
                S::ImplicitlyOpen => self.st[z] = S::ExplicitlyOpen,
                S::Empty | S::Closed => {
                    self.room(s == S::Empty)?;
                    self.st[z] = S::ExplicitlyOpen;
                }
                _ => return bad,
            },
            ZoneAction::Close => match s {
                S::Closed => {}
                S::ImplicitlyOpen | S::ExplicitlyOpen => self.st[z] = S::Closed,
                _ => return bad,
            },
            ZoneAction::Finish => match s {
                S::Full => {}
                S::Empty | S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed => {
                    self.st[z] = S::Full
                }
                _ => return bad,
            },
            ZoneAction::Reset => match s {
                S::Empty => {}
                S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed | S::Full => {
                    self.st[z] = S::Empty;
                    let w = self.wp[z];
                    self.wp[z] = 0;
                    return Ok(w);
                }
                _ => return bad,
            },
            ZoneAction::Offline => match s {
                S::ReadOnly | S::Offline => self.st[z] = S::Offline,
                _ => return bad,
            },
        }
        Ok(0)
    }
    fn read_only(&mut self, z: usize) {
        if !matches!(self.st[z], S::Offline | S::ReadOnly) {
            self.st[z] = S::ReadOnly;
        }
    }
    /// A power cut: open zones close, a closed zone without data is empty.
    fn cut(&mut self) {
        for z in 0..self.st.len() {
            if matches!(
                self.st[z],
                S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed
            ) {
                self.st[z] = if self.wp[z] == 0 { S::Empty } else { S::Closed };
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Cmd {
    /// Write at the zone's write pointer plus `skew` (often 0).
    Write {
        zone: u32,
        skew: i8,
        n: u32,
    },
    Append {
        zone: u32,
        misalign: bool,
        n: u32,
    },
    Manage {
        zone: u32,
        action: u8,
    },
    Read {
        lba: u64,
        n: u32,
    },
    ReadOnly {
        zone: u32,
    },
    Cut,
}

fn cmd(zones: u32) -> impl Strategy<Value = Cmd> {
    let z = 0..zones + 1; // one past the last zone: out of range
    prop_oneof![
        6 => (z.clone(), prop_oneof![4 => Just(0i8), 1 => -2i8..3], 0u32..6)
            .prop_map(|(zone, skew, n)| Cmd::Write { zone, skew, n }),
        4 => (z.clone(), proptest::bool::weighted(0.1), 0u32..6)
            .prop_map(|(zone, misalign, n)| Cmd::Append { zone, misalign, n }),
        4 => (z.clone(), 0u8..5).prop_map(|(zone, action)| Cmd::Manage { zone, action }),
        1 => (0u64..200, 0u32..20).prop_map(|(lba, n)| Cmd::Read { lba, n }),
        1 => z.clone().prop_map(|zone| Cmd::ReadOnly { zone }),
        1 => Just(Cmd::Cut),
    ]
}

fn geo() -> impl Strategy<Value = ZoneGeometry> {
    (2u32..9, 4u32..17, 1u32..5, 0u32..4).prop_flat_map(|(zones, size, open, extra)| {
        (1..=size).prop_map(move |cap| ZoneGeometry {
            zones,
            size,
            cap,
            max_open: open,
            max_active: open + extra,
        })
    })
}

const ACTIONS: [ZoneAction; 5] = [
    ZoneAction::Open,
    ZoneAction::Close,
    ZoneAction::Finish,
    ZoneAction::Reset,
    ZoneAction::Offline,
];

/// Applies the durable side of a command as a host interface does: data
/// blocks mapped on write, trimmed from the write pointer down on reset,
/// markers for finish, read only and offline.
struct Durable(BTreeSet<u64>);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn zones_match_the_model(g in geo(), cmds in prop::collection::vec(cmd(8), 1..120)) {
        let mut table = vec![Zone::default(); g.zones as usize];
        let mut zs = Zones::new(g, &mut table).unwrap();
        let mut m = Model::new(g);
        let mut d = Durable(BTreeSet::new());
        let mut mismatches = 0u32;
        for c in cmds {
            match c {
                Cmd::Write { zone, skew, n } => {
                    let zone = zone.min(g.zones);
                    let wp = m.wp.get(zone as usize).copied().unwrap_or(0);
                    let lba = (u64::from(zone) * u64::from(g.size) + u64::from(wp))
                        .saturating_add_signed(i64::from(skew));
                    let want = m.write(lba, n);
                    let got = zs.write(lba, n).map(|_| ());
                    prop_assert_eq!(got, want, "write {} +{}", lba, n);
                    if got.is_ok() {
                        d.0.extend(lba..lba + u64::from(n));
                    }
                }
                Cmd::Append { zone, misalign, n } => {
                    let zslba = u64::from(zone) * u64::from(g.size) + u64::from(misalign);
                    let want = m.append(zslba, n);
                    let got = zs.append(zslba, n).map(|(at, _)| at);
                    prop_assert_eq!(got, want, "append {} +{}", zslba, n);
                    if let Ok(at) = got {
                        d.0.extend(at..at + u64::from(n));
                    }
                }
                Cmd::Manage { zone, action } => {
                    let a = ACTIONS[action as usize];
                    let zslba = u64::from(zone) * u64::from(g.size);
                    let want = m.manage(zslba, a);
                    let got = zs.manage(zslba, a);
                    prop_assert_eq!(got, want, "{:?} zone {}", a, zone);
                    if got.is_ok() {
                        let fin = zs.marker_lba(zone, Marker::Finished);
                        match a {
                            ZoneAction::Reset => {
                                for l in (zslba..zslba + u64::from(got.unwrap())).rev() {
                                    d.0.remove(&l);
                                }
                                d.0.remove(&fin);
                            }
                            ZoneAction::Finish if m.st[zone as usize] == S::Full => {
                                d.0.insert(fin);
                            }
                            ZoneAction::Offline => {
                                d.0.insert(fin);
                            }
                            _ => {}
                        }
                    }
                }
                Cmd::Read { lba, n } => {
                    let want = m.check_range(lba, n).and_then(|z0| {
                        let z1 = ((lba + u64::from(n) - 1) / u64::from(g.size)) as usize;
                        if (z0..=z1).any(|z| m.st[z] == S::Offline) {
                            Err(E::ZoneIsOffline)
                        } else {
                            Ok(())
                        }
                    });
                    prop_assert_eq!(zs.read(lba, n), want);
                }
                Cmd::ReadOnly { zone } => {
                    if zone < g.zones {
                        m.read_only(zone as usize);
                        if zs.make_read_only(zone).unwrap() {
                            d.0.remove(&zs.marker_lba(zone, Marker::Finished));
                            d.0.insert(zs.marker_lba(zone, Marker::ReadOnly));
                        }
                    }
                }
                Cmd::Cut => {
                    m.cut();
                    // Nothing of the old state survives but the durable blocks.
                    table.iter_mut().for_each(|z| *z = Zone { state: S::Full, wp: 7, handle: 9 });
                    zs = Zones::new(g, &mut table).unwrap();
                    zs.recover(|l| d.0.contains(&l)).unwrap();
                }
            }
            // Every zone, the counts and the handles agree after every command.
            let mut handles = BTreeSet::new();
            for z in 0..g.zones {
                let e = zs.zone(z).unwrap();
                if e.state != m.st[z as usize] || e.wp != m.wp[z as usize] {
                    mismatches += 1;
                }
                if e.state.is_active() {
                    prop_assert!(handles.insert(e.handle), "handle {} twice", e.handle);
                    prop_assert!(u32::from(e.handle) < g.max_active);
                }
            }
            prop_assert_eq!(zs.open_count(), m.open());
            prop_assert_eq!(zs.active_count(), m.active());
            prop_assert!(m.open() <= g.max_open && m.active() <= g.max_active);
            prop_assert_eq!(mismatches, 0);
        }
        // The report lists what the zones hold.
        let mut out = vec![ZoneDescriptor { state: S::Empty, zslba: 0, wp: 0, cap: 0 }; 16];
        let n = zs.report(0, ReportFilter::All, &mut out);
        prop_assert_eq!(n, g.zones as usize);
        for (z, r) in out[..n].iter().enumerate() {
            prop_assert_eq!(r.state, m.st[z]);
            prop_assert_eq!(r.wp, z as u64 * u64::from(g.size) + u64::from(m.wp[z]));
        }
        let full = zs.report(0, ReportFilter::State(S::Full), &mut out);
        prop_assert_eq!(full as u32, m.count(|s| s == S::Full));
    }
}

/// Every status of the specification the machine returns, each where a
/// hand-built sequence expects it.
#[test]
fn each_status_where_the_specification_puts_it() {
    let g = ZoneGeometry {
        zones: 4,
        size: 8,
        cap: 6,
        max_open: 1,
        max_active: 2,
    };
    let mut t = vec![Zone::default(); 4];
    let mut z = Zones::new(g, &mut t).unwrap();
    assert_eq!(z.write(1, 1), Err(E::ZoneInvalidWrite));
    assert_eq!(z.write(0, 7), Err(E::ZoneBoundaryError));
    assert_eq!(z.write(0, 0), Err(E::InvalidField));
    assert_eq!(z.write(31, 2), Err(E::LbaOutOfRange));
    assert_eq!(z.append(1, 1), Err(E::InvalidField));
    z.write(0, 2).unwrap();
    assert_eq!(z.zone(0).unwrap().state, S::ImplicitlyOpen);
    // Opening zone 1 implicitly closes zone 0 (open limit 1).
    assert_eq!(z.append(8, 1), Ok((8, 1)));
    assert_eq!(z.zone(0).unwrap().state, S::Closed);
    // Two active zones: a third cannot open.
    assert_eq!(z.write(16, 1), Err(E::TooManyActiveZones));
    z.manage(8, ZoneAction::Open).unwrap();
    // Zone 0 needs the open resource zone 1 holds explicitly.
    assert_eq!(z.write(2, 1), Err(E::TooManyOpenZones));
    assert_eq!(z.manage(0, ZoneAction::Open), Err(E::TooManyOpenZones));
    z.manage(8, ZoneAction::Finish).unwrap();
    assert_eq!(z.append(8, 1), Err(E::ZoneIsFull));
    assert_eq!(
        z.manage(8, ZoneAction::Close),
        Err(E::InvalidZoneStateTransition)
    );
    assert_eq!(z.manage(8, ZoneAction::Reset), Ok(1));
    z.make_read_only(3).unwrap();
    assert_eq!(z.write(24, 1), Err(E::ZoneIsReadOnly));
    z.manage(24, ZoneAction::Offline).unwrap();
    assert_eq!(z.write(24, 1), Err(E::ZoneIsOffline));
    assert_eq!(z.read(20, 8), Err(E::ZoneIsOffline));
    assert_eq!(
        z.manage(24, ZoneAction::Reset),
        Err(E::InvalidZoneStateTransition)
    );
}
