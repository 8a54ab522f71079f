//! The zone state machine of the NVMe Zoned Namespace Command Set: zone
//! states, write pointers, open and active resources, and the status
//! codes of every refused command. Pure state over a lent slice: no I/O,
//! no heap, no panic.
//!
//! Addresses are logical blocks of the zoned namespace (the core's mapping
//! units). Zone `z` covers `[z * size, (z + 1) * size)`; its first `cap`
//! blocks are writable. `zones * size` data blocks are followed by the
//! marker blocks ([`Zones::marker_lba`]) the host interface keeps hidden.

use crate::error::{rare, Error, OrRare};

/// Zone states, numbered as in the zone descriptor's state field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ZoneState {
    /// ZSE: no data, write pointer at the zone start.
    #[default]
    Empty = 0x1,
    /// ZSIO: opened by a write.
    ImplicitlyOpen = 0x2,
    /// ZSEO: opened by an Open Zone command.
    ExplicitlyOpen = 0x3,
    /// ZSC: active, not open.
    Closed = 0x4,
    /// ZSRO: readable, no longer writable (device-initiated).
    ReadOnly = 0xD,
    /// ZSF: no more writes until a reset.
    Full = 0xE,
    /// ZSO: neither readable nor writable.
    Offline = 0xF,
}

impl ZoneState {
    /// Open (implicitly or explicitly): holds an open and an active resource.
    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen)
    }

    /// Open or closed: holds an active resource.
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// Why a zone command was refused: the NVMe status (generic or zoned
/// command-specific, status code type 1h) the specification names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ZoneStatus {
    /// Generic 02h: a field is invalid (no blocks, an append not at a zone
    /// start, a management command not at a zone start).
    InvalidField = 0x02,
    /// Generic 80h: the range goes past the namespace.
    LbaOutOfRange = 0x80,
    /// B8h: the write crosses the zone's writable capacity.
    ZoneBoundaryError = 0xB8,
    /// B9h: the zone is full.
    ZoneIsFull = 0xB9,
    /// BAh: the zone is read only.
    ZoneIsReadOnly = 0xBA,
    /// BBh: the zone is offline.
    ZoneIsOffline = 0xBB,
    /// BCh: the write does not start at the write pointer.
    ZoneInvalidWrite = 0xBC,
    /// BDh: the zone would exceed the active resources.
    TooManyActiveZones = 0xBD,
    /// BEh: the zone would exceed the open resources.
    TooManyOpenZones = 0xBE,
    /// BFh: the zone's state does not allow the management action.
    InvalidZoneStateTransition = 0xBF,
}

/// Shape and limits of a zoned namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneGeometry {
    /// Zones.
    pub zones: u32,
    /// Blocks per zone (ZSZE).
    pub size: u32,
    /// Writable blocks per zone (ZCAP), `1..=size`.
    pub cap: u32,
    /// Most zones open at once (MOR + 1), `1..=max_active`.
    pub max_open: u32,
    /// Most zones active (open or closed) at once (MAR + 1), `1..=64`.
    pub max_active: u32,
}

/// Most active zones: each holds one of 64 placement handles.
pub const MAX_ACTIVE: u32 = 64;

/// Marker blocks per zone after the data blocks (finished, read only).
pub const MARKERS_PER_ZONE: u32 = 2;

impl ZoneGeometry {
    /// Checks the shape; `logical` is the core's logical capacity in blocks.
    pub fn validate(&self, logical: u32) -> Result<(), Error> {
        if self.zones == 0 || self.size == 0 {
            return Err(Error::InvalidConfig(
                &"zns: zones and zone size must be at least 1",
            ));
        }
        if self.cap == 0 || self.cap > self.size {
            return Err(Error::InvalidConfig(
                &"zns: zone capacity must be 1..=zone size",
            ));
        }
        if self.max_active == 0 || self.max_active > MAX_ACTIVE {
            return Err(Error::InvalidConfig(
                &"zns: max active zones must be 1..=64",
            ));
        }
        if self.max_open == 0 || self.max_open > self.max_active {
            return Err(Error::InvalidConfig(
                &"zns: max open zones must be 1..=max active",
            ));
        }
        if u64::from(self.blocks()) > u64::from(logical) {
            return Err(Error::InvalidConfig(
                &"zns: zones and markers exceed the logical capacity",
            ));
        }
        Ok(())
    }

    /// Logical blocks the namespace needs: the zones and their markers.
    pub fn blocks(&self) -> u32 {
        let data = u64::from(self.zones).saturating_mul(u64::from(self.size));
        let markers = u64::from(self.zones).saturating_mul(u64::from(MARKERS_PER_ZONE));
        u32::try_from(data.saturating_add(markers)).unwrap_or(u32::MAX)
    }

    /// Data blocks of the namespace (what the host addresses).
    pub fn data_blocks(&self) -> u64 {
        u64::from(self.zones).saturating_mul(u64::from(self.size))
    }
}

/// One zone's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Zone {
    /// Its state.
    pub state: ZoneState,
    /// Blocks written (the write pointer's offset from the zone start).
    pub wp: u32,
    /// Its placement handle while active.
    pub handle: u8,
}

/// A zone as a report shows it (one zone descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneDescriptor {
    /// Zone state.
    pub state: ZoneState,
    /// Zone start LBA.
    pub zslba: u64,
    /// Write pointer LBA.
    pub wp: u64,
    /// Zone capacity.
    pub cap: u32,
}

/// What a marker block of a zone records (persisted by mapping it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Marker {
    /// The zone was finished: it is full whatever its write pointer.
    Finished = 0,
    /// The device made the zone read only (with `Finished` too: offline).
    ReadOnly = 1,
}

/// Which zones a report lists (the Zone Receive action's filter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFilter {
    /// Every zone.
    All,
    /// Zones in one state.
    State(ZoneState),
}

/// Zone management actions (Zone Send).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAction {
    /// Open Zone.
    Open,
    /// Close Zone.
    Close,
    /// Finish Zone.
    Finish,
    /// Reset Zone.
    Reset,
    /// Offline Zone (only from read only).
    Offline,
}

/// The zones of a namespace over a lent slice.
pub struct Zones<'a> {
    geo: ZoneGeometry,
    z: &'a mut [Zone],
    open: u32,
    active: u32,
    handles: u64,
}

impl<'a> Zones<'a> {
    /// All zones empty. `z` must hold one entry per zone.
    pub fn new(geo: ZoneGeometry, z: &'a mut [Zone]) -> Result<Self, Error> {
        if z.len() < geo.zones as usize {
            return Err(Error::TableTooSmall(&"zones"));
        }
        if geo.max_open == 0 || geo.max_open > geo.max_active || geo.max_active > MAX_ACTIVE {
            return Err(Error::InvalidConfig(&"zns: zone limits"));
        }
        for e in z.iter_mut() {
            *e = Zone::default();
        }
        Ok(Zones {
            geo,
            z,
            open: 0,
            active: 0,
            handles: 0,
        })
    }

    /// The namespace's shape.
    pub fn geometry(&self) -> ZoneGeometry {
        self.geo
    }

    /// Open zones now.
    pub fn open_count(&self) -> u32 {
        self.open
    }

    /// Active zones now.
    pub fn active_count(&self) -> u32 {
        self.active
    }

    /// Zone `z`.
    pub fn zone(&self, z: u32) -> Option<Zone> {
        self.z.get(z as usize).copied()
    }

    /// The zone holding `lba`.
    pub fn zone_of(&self, lba: u64) -> Option<u32> {
        let z = lba.checked_div(u64::from(self.geo.size))?;
        u32::try_from(z).ok().filter(|&z| z < self.geo.zones)
    }

    /// First LBA of zone `z`.
    pub fn zslba(&self, z: u32) -> u64 {
        u64::from(z).saturating_mul(u64::from(self.geo.size))
    }

    /// The hidden block recording `m` for zone `z`.
    pub fn marker_lba(&self, z: u32, m: Marker) -> u64 {
        let i = u64::from(z)
            .saturating_mul(u64::from(MARKERS_PER_ZONE))
            .saturating_add(m as u64);
        self.geo.data_blocks().saturating_add(i)
    }

    fn entry(&mut self, z: u32) -> Result<&mut Zone, ZoneStatus> {
        self.z.get_mut(z as usize).ok_or(ZoneStatus::LbaOutOfRange)
    }

    fn get(&self, z: u32) -> Result<Zone, ZoneStatus> {
        self.zone(z).ok_or(ZoneStatus::LbaOutOfRange)
    }

    /// Moves zone `z` to `to`, keeping the open and active counts and the
    /// handles right.
    fn set(&mut self, z: u32, to: ZoneState) -> Result<(), ZoneStatus> {
        let from = self.get(z)?.state;
        if from.is_open() && !to.is_open() {
            self.open = self.open.saturating_sub(1);
        }
        if !from.is_open() && to.is_open() {
            self.open = self.open.saturating_add(1);
        }
        let mut handle = self.get(z)?.handle;
        if from.is_active() && !to.is_active() {
            self.active = self.active.saturating_sub(1);
            self.handles &= !(1u64 << (handle & 63));
        }
        if !from.is_active() && to.is_active() {
            self.active = self.active.saturating_add(1);
            // The lowest free handle; there is one, as active < 64.
            handle = u8::try_from((!self.handles).trailing_zeros().min(63)).unwrap_or(0);
            self.handles |= 1u64 << (handle & 63);
        }
        let e = self.entry(z)?;
        e.state = to;
        e.handle = handle;
        Ok(())
    }

    /// Makes room to open one more zone: at the open limit, an implicitly
    /// opened zone is closed (the lowest numbered), as the specification
    /// allows; an active resource must be free when `activate`.
    fn open_room(&mut self, activate: bool) -> Result<(), ZoneStatus> {
        if activate && self.active >= self.geo.max_active {
            return Err(ZoneStatus::TooManyActiveZones);
        }
        if self.open < self.geo.max_open {
            return Ok(());
        }
        let victim = (0..self.geo.zones).find(|&i| {
            self.zone(i)
                .is_some_and(|e| e.state == ZoneState::ImplicitlyOpen)
        });
        match victim {
            Some(v) => self.set(v, ZoneState::Closed),
            None => Err(ZoneStatus::TooManyOpenZones),
        }
    }

    /// Checks a write or append of `n` blocks to zone `z` at its write
    /// pointer and opens the zone implicitly if it must.
    fn admit(&mut self, z: u32, n: u32) -> Result<u64, ZoneStatus> {
        let e = self.get(z)?;
        match e.state {
            ZoneState::Full => return Err(ZoneStatus::ZoneIsFull),
            ZoneState::ReadOnly => return Err(ZoneStatus::ZoneIsReadOnly),
            ZoneState::Offline => return Err(ZoneStatus::ZoneIsOffline),
            _ => {}
        }
        if u64::from(e.wp).saturating_add(u64::from(n)) > u64::from(self.geo.cap) {
            return Err(ZoneStatus::ZoneBoundaryError);
        }
        match e.state {
            ZoneState::Empty => {
                self.open_room(true)?;
                self.set(z, ZoneState::ImplicitlyOpen)?;
            }
            ZoneState::Closed => {
                self.open_room(false)?;
                self.set(z, ZoneState::ImplicitlyOpen)?;
            }
            _ => {}
        }
        let at = self.zslba(z).saturating_add(u64::from(e.wp));
        let wp = e.wp.saturating_add(n);
        self.entry(z)?.wp = wp;
        if wp >= self.geo.cap {
            self.set(z, ZoneState::Full)?;
        }
        Ok(at)
    }

    fn range(&self, slba: u64, n: u32) -> Result<u32, ZoneStatus> {
        if n == 0 {
            return Err(ZoneStatus::InvalidField);
        }
        if slba.saturating_add(u64::from(n)) > self.geo.data_blocks() {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        self.zone_of(slba).ok_or(ZoneStatus::LbaOutOfRange)
    }

    /// A Write of `n` blocks at `slba`: accepted only at the write pointer
    /// and within the zone's capacity. Returns the zone's placement handle.
    pub fn write(&mut self, slba: u64, n: u32) -> Result<u8, ZoneStatus> {
        let z = self.range(slba, n)?;
        let e = self.get(z)?;
        if matches!(
            e.state,
            ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
        ) {
            return self.admit(z, n).map(|_| 0);
        }
        if slba != self.zslba(z).saturating_add(u64::from(e.wp)) {
            return Err(ZoneStatus::ZoneInvalidWrite);
        }
        self.admit(z, n)?;
        Ok(self.get(z)?.handle)
    }

    /// A Zone Append of `n` blocks to the zone starting at `zslba`: written
    /// at the write pointer. Returns the first LBA written and the handle.
    pub fn append(&mut self, zslba: u64, n: u32) -> Result<(u64, u8), ZoneStatus> {
        let z = self.range(zslba, n)?;
        if zslba != self.zslba(z) {
            return Err(ZoneStatus::InvalidField);
        }
        let at = self.admit(z, n)?;
        Ok((at, self.get(z)?.handle))
    }

    /// A Read of `n` blocks at `slba` (across zone boundaries allowed).
    pub fn read(&self, slba: u64, n: u32) -> Result<(), ZoneStatus> {
        let first = self.range(slba, n)?;
        let last = self
            .zone_of(slba.saturating_add(u64::from(n)).saturating_sub(1))
            .ok_or(ZoneStatus::LbaOutOfRange)?;
        for z in first..=last {
            if self.get(z)?.state == ZoneState::Offline {
                return Err(ZoneStatus::ZoneIsOffline);
            }
        }
        Ok(())
    }

    /// A Zone Send action on the zone starting at `zslba`. Returns the
    /// written blocks a reset discards (`0` for other actions): the caller
    /// trims them, from the last down, then the [`Marker::Finished`] block.
    /// After a finish or an offline action the caller maps that block.
    pub fn manage(&mut self, zslba: u64, action: ZoneAction) -> Result<u32, ZoneStatus> {
        let z = self.zone_of(zslba).ok_or(ZoneStatus::LbaOutOfRange)?;
        if zslba != self.zslba(z) {
            return Err(ZoneStatus::InvalidField);
        }
        let e = self.get(z)?;
        use ZoneState as S;
        match (action, e.state) {
            (_, S::Offline) if action != ZoneAction::Offline => {
                Err(ZoneStatus::InvalidZoneStateTransition)
            }
            (ZoneAction::Open, S::ExplicitlyOpen) => Ok(0),
            (ZoneAction::Open, S::ImplicitlyOpen) => self.set(z, S::ExplicitlyOpen).map(|_| 0),
            (ZoneAction::Open, S::Empty | S::Closed) => {
                self.open_room(e.state == S::Empty)?;
                self.set(z, S::ExplicitlyOpen).map(|_| 0)
            }
            (ZoneAction::Close, S::Closed) => Ok(0),
            (ZoneAction::Close, S::ImplicitlyOpen | S::ExplicitlyOpen) => {
                self.set(z, S::Closed).map(|_| 0)
            }
            (ZoneAction::Finish, S::Full) => Ok(0),
            (ZoneAction::Finish, S::Empty | S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed) => {
                self.set(z, S::Full).map(|_| 0)
            }
            (ZoneAction::Reset, S::Empty) => Ok(0),
            (ZoneAction::Reset, S::ImplicitlyOpen | S::ExplicitlyOpen | S::Closed | S::Full) => {
                self.set(z, S::Empty)?;
                let e = self.entry(z)?;
                let written = e.wp;
                e.wp = 0;
                Ok(written)
            }
            (ZoneAction::Offline, S::ReadOnly) => self.set(z, S::Offline).map(|_| 0),
            (ZoneAction::Offline, S::Offline) => Ok(0),
            _ => Err(ZoneStatus::InvalidZoneStateTransition),
        }
    }

    /// The device takes zone `z` out of writing (worn media): read only.
    /// The caller trims the zone's [`Marker::Finished`] block, then maps its
    /// [`Marker::ReadOnly`] block (both mapped mean offline) when this
    /// returns true (false: the zone was read only or offline already).
    pub fn make_read_only(&mut self, z: u32) -> Result<bool, ZoneStatus> {
        match self.get(z)?.state {
            ZoneState::Offline | ZoneState::ReadOnly => Ok(false),
            _ => self.set(z, ZoneState::ReadOnly).map(|_| true),
        }
    }

    /// Descriptors of the zones from zone `from` on that pass `filter`,
    /// written to `out`. Returns how many were written.
    pub fn report(&self, from: u32, filter: ReportFilter, out: &mut [ZoneDescriptor]) -> usize {
        let mut n = 0usize;
        for z in from..self.geo.zones {
            let Some(e) = self.zone(z) else { break };
            if let ReportFilter::State(s) = filter {
                if e.state != s {
                    continue;
                }
            }
            let Some(slot) = out.get_mut(n) else { break };
            *slot = ZoneDescriptor {
                state: e.state,
                zslba: self.zslba(z),
                wp: self.zslba(z).saturating_add(u64::from(e.wp)),
                cap: self.geo.cap,
            };
            n = n.saturating_add(1);
        }
        n
    }

    /// Rebuilds every zone after a power cut or shutdown from what is
    /// durable: `mapped(lba)` says whether a logical block holds data.
    /// Zone writes are sequential and resets trim from the write pointer
    /// down, so a zone's mapped blocks are a prefix and its write pointer
    /// is found by bisection. A zone with data is closed (open zones close
    /// at a controller reset), full at its capacity or when its finish
    /// marker is mapped, read only or offline by its markers; a zone
    /// without data and markers is empty.
    pub fn recover(&mut self, mut mapped: impl FnMut(u64) -> bool) -> Result<(), Error> {
        self.open = 0;
        self.active = 0;
        self.handles = 0;
        for z in 0..self.geo.zones {
            let base = self.zslba(z);
            let (mut lo, mut hi) = (0u32, self.geo.cap);
            // Invariant: blocks below lo are mapped, blocks at or past hi are not.
            while lo < hi {
                let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
                if mapped(base.saturating_add(u64::from(mid))) {
                    lo = mid.saturating_add(1);
                } else {
                    hi = mid;
                }
            }
            let finished = mapped(self.marker_lba(z, Marker::Finished));
            let read_only = mapped(self.marker_lba(z, Marker::ReadOnly));
            let state = match (read_only, finished) {
                (true, true) => ZoneState::Offline,
                (true, false) => ZoneState::ReadOnly,
                (false, true) => ZoneState::Full,
                (false, false) if lo >= self.geo.cap => ZoneState::Full,
                (false, false) if lo == 0 => ZoneState::Empty,
                (false, false) => ZoneState::Closed,
            };
            let e = self
                .z
                .get_mut(z as usize)
                .or_rare(Error::Corrupt(&"zone index"))?;
            *e = Zone {
                state: ZoneState::Empty,
                wp: lo,
                handle: 0,
            };
            self.set(z, state)
                .map_err(|_| rare(Error::Corrupt(&"zone state")))?;
        }
        if self.active > self.geo.max_active {
            return Err(rare(Error::Corrupt(
                &"more closed zones than active resources",
            )));
        }
        Ok(())
    }
}
