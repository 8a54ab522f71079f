//! Where everything lives in an image file, and its header.
//!
//! ```text
//! 0                header slot A (4 KiB)
//! 4096             header slot B (4 KiB)
//! 8192             block entries (23 bytes each), then page entries (15),
//!                  then unit entries (20), each array 4 KiB-aligned; every
//!                  entry is a medium record and a CRC-32C of it and its
//!                  address (see [`block_entry`], [`page_entry`], [`unit_entry`])
//! pages_off        page store: page_bytes per page (data units or a
//!                  metadata page's bytes), 4 KiB-aligned
//! cap_off          capacitor region: the journal of the current power-on,
//!                  to the end of the file
//! ```
//!
//! A header slot holds the magic, the format version, a slot sequence
//! number, the geometry, a hash of the configuration, the state of the
//! drive (see [`State`]) and a CRC-32C of all of it. Updates go to the slot
//! not holding the newest header, so a torn update leaves the other slot
//! intact; on open the valid slot with the higher sequence number wins.

use std::fs::File;
use std::os::unix::fs::FileExt;

use firmware_core::Geometry;
use nand_model::{BlockRec, PageRec, UnitRec};

use super::ImageError;

/// First bytes of a header slot.
pub const MAGIC: [u8; 8] = *b"FTLIMAGE";
/// Format version this build reads and writes (3: checksummed medium
/// entries and page data, capacitor-region payloads checksummed per unit).
pub const VERSION: u32 = 3;
/// Bytes of one header slot.
const SLOT: u64 = 4096;
/// Alignment of every region.
const ALIGN: u64 = 4096;
/// Bytes of a header slot in use (the CRC covers all but its last 4).
const HEADER_BYTES: usize = 90;

/// The CRC of header slots and journal batches (CRC-32C, as the core's pages).
pub const CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// Bytes of a block entry: the record and its CRC.
pub const BLOCK_ENTRY: usize = BlockRec::BYTES + 4;
/// Bytes of a page entry: the record and its CRC.
pub const PAGE_ENTRY: usize = PageRec::BYTES + 4;
/// Bytes of a unit entry: the record, the CRC of the unit's data, and the
/// entry's CRC.
pub const UNIT_ENTRY: usize = UnitRec::BYTES + 8;

fn crc4(parts: &[&[u8]]) -> [u8; 4] {
    let mut d = CRC.digest();
    for p in parts {
        d.update(p);
    }
    d.finalize().to_le_bytes()
}

/// Block `b`'s entry: its record and a CRC-32C of its address and record,
/// so a record written at another block's place is detected.
pub fn block_entry(b: u32, rec: &[u8; BlockRec::BYTES]) -> [u8; BLOCK_ENTRY] {
    let mut e = [0u8; BLOCK_ENTRY];
    e[..BlockRec::BYTES].copy_from_slice(rec);
    e[BlockRec::BYTES..].copy_from_slice(&crc4(&[b"B", &b.to_le_bytes(), rec]));
    e
}

/// Page `p`'s entry, for a page programmed while its block had `pe` erase
/// cycles: a record left from before the block's last erase does not check.
pub fn page_entry(p: u32, pe: u32, rec: &[u8; PageRec::BYTES]) -> [u8; PAGE_ENTRY] {
    let mut e = [0u8; PAGE_ENTRY];
    e[..PageRec::BYTES].copy_from_slice(rec);
    e[PageRec::BYTES..].copy_from_slice(&crc4(&[b"P", &p.to_le_bytes(), &pe.to_le_bytes(), rec]));
    e
}

/// Physical unit `u`'s entry, for a page programmed with sequence number
/// `seq`: its record, `data_crc` ([`data_crc`] of its bytes) and the CRC
/// of all of it with the address and `seq`.
pub fn unit_entry(u: u64, seq: u64, rec: &[u8; UnitRec::BYTES], data_crc: u32) -> [u8; UNIT_ENTRY] {
    let mut e = [0u8; UNIT_ENTRY];
    let dc = data_crc.to_le_bytes();
    e[..UnitRec::BYTES].copy_from_slice(rec);
    e[UnitRec::BYTES..UnitRec::BYTES + 4].copy_from_slice(&dc);
    e[UnitRec::BYTES + 4..].copy_from_slice(&crc4(&[
        b"U",
        &u.to_le_bytes(),
        &seq.to_le_bytes(),
        rec,
        &dc,
    ]));
    e
}

/// The CRC-32C of physical unit `u`'s bytes as programmed with sequence
/// number `seq`: bytes copied to another unit, or left from an earlier
/// program of this one, do not check.
pub fn data_crc(u: u64, seq: u64, bytes: &[u8]) -> u32 {
    u32::from_le_bytes(crc4(&[b"D", &u.to_le_bytes(), &seq.to_le_bytes(), bytes]))
}

/// The record of an entry whose CRC checks against `want` (the entry
/// rebuilt from the record), else `None`.
pub fn checked<const N: usize, const R: usize>(
    raw: &[u8],
    rebuild: impl FnOnce(&[u8; R]) -> [u8; N],
) -> Option<[u8; R]> {
    let e: &[u8; N] = raw.get(..N)?.try_into().ok()?;
    let rec: [u8; R] = e.get(..R)?.try_into().ok()?;
    (rebuild(&rec) == *e).then_some(rec)
}

/// What the drive in the file was doing when its header was last written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Created; the medium records are not written yet.
    Fresh,
    /// Powered on in power-on `epoch`, which started by mounting (`mount`)
    /// or formatting; the capacitor region holds its journal.
    Open {
        /// Power-on number.
        epoch: u64,
        /// Whether the power-on started with a mount (else a format).
        mount: bool,
    },
    /// The capacitor flush of power-on `epoch` is computed and saved at
    /// `off` (`len` bytes) in the capacitor region; it must be applied to the
    /// medium, then power-on `epoch + 1` starts with a mount (`mount`) or a
    /// format.
    Redo {
        /// Power-on whose flush this is.
        epoch: u64,
        /// Whether the next power-on mounts (else formats again).
        mount: bool,
        /// Offset of the saved flush inside the capacitor region.
        off: u64,
        /// Its length in bytes.
        len: u64,
    },
}

/// Offsets of the regions for one geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The geometry.
    pub geo: Geometry,
    /// Block records.
    pub blocks_off: u64,
    /// Page records.
    pub pages_rec_off: u64,
    /// Unit records.
    pub units_off: u64,
    /// Page store.
    pub pages_off: u64,
    /// Capacitor region.
    pub cap_off: u64,
}

fn align(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

impl Layout {
    /// The layout of an image for `geo`.
    pub fn new(geo: Geometry) -> Self {
        let blocks = u64::from(geo.total_blocks());
        let pages = u64::from(geo.total_pages());
        let units = u64::from(geo.total_units());
        let blocks_off = 2 * SLOT;
        let pages_rec_off = align(blocks_off + blocks * BLOCK_ENTRY as u64);
        let units_off = align(pages_rec_off + pages * PAGE_ENTRY as u64);
        let pages_off = align(units_off + units * UNIT_ENTRY as u64);
        let cap_off = align(pages_off + pages * u64::from(geo.page_bytes));
        Layout {
            geo,
            blocks_off,
            pages_rec_off,
            units_off,
            pages_off,
            cap_off,
        }
    }

    /// Offset of block `b`'s entry.
    pub fn block_rec(&self, b: u32) -> u64 {
        self.blocks_off + u64::from(b) * BLOCK_ENTRY as u64
    }

    /// Offset of page `p`'s entry.
    pub fn page_rec(&self, p: u32) -> u64 {
        self.pages_rec_off + u64::from(p) * PAGE_ENTRY as u64
    }

    /// Offset of the entry of physical unit `u`.
    pub fn unit_rec(&self, u: u64) -> u64 {
        self.units_off + u * UNIT_ENTRY as u64
    }

    /// Offset of page `p`'s bytes in the page store.
    pub fn page(&self, p: u32) -> u64 {
        self.pages_off + u64::from(p) * u64::from(self.geo.page_bytes)
    }
}

/// One header slot's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Slot sequence number: the valid slot with the higher one is current.
    pub seq: u64,
    /// Hash of the configuration the image was made for.
    pub config_hash: u64,
    /// Layout (from the geometry).
    pub layout: Layout,
    /// State of the drive.
    pub state: State,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        let g = &self.layout.geo;
        let (tag, epoch, mount, off, len) = match self.state {
            State::Fresh => (0u8, 0, false, 0, 0),
            State::Open { epoch, mount } => (1, epoch, mount, 0, 0),
            State::Redo {
                epoch,
                mount,
                off,
                len,
            } => (2, epoch, mount, off, len),
        };
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..20].copy_from_slice(&self.seq.to_le_bytes());
        b[20..28].copy_from_slice(&self.config_hash.to_le_bytes());
        b[28..32].copy_from_slice(&g.page_bytes.to_le_bytes());
        b[32..36].copy_from_slice(&u32::from(g.units_per_page).to_le_bytes());
        b[36..40].copy_from_slice(&g.pages_per_block.to_le_bytes());
        b[40..44].copy_from_slice(&g.total_blocks().to_le_bytes());
        b[44..52].copy_from_slice(&self.layout.cap_off.to_le_bytes());
        b[52] = tag;
        b[53] = u8::from(mount);
        b[54..62].copy_from_slice(&epoch.to_le_bytes());
        b[62..70].copy_from_slice(&off.to_le_bytes());
        b[70..78].copy_from_slice(&len.to_le_bytes());
        // 78..86 reserved.
        let crc = CRC.checksum(&b[..HEADER_BYTES - 4]);
        b[HEADER_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a slot for `layout`: `Err` names what is wrong, `Ok(None)`
    /// is a slot that was never written or is torn.
    fn decode(b: &[u8], layout: &Layout, config_hash: u64) -> Result<Option<Header>, String> {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        if b.len() < HEADER_BYTES || b[0..8] != MAGIC {
            return Ok(None);
        }
        let crc = u32_at(HEADER_BYTES - 4);
        if CRC.checksum(&b[..HEADER_BYTES - 4]) != crc {
            return Ok(None);
        }
        let version = u32_at(8);
        if version < VERSION {
            return Err(format!(
                "image format version {version}, made by an older ftl: this ftl reads \
                 version {VERSION} only (checksummed medium records and page data); \
                 recreate the image"
            ));
        }
        if version > VERSION {
            return Err(format!(
                "image format version {version}, made by a newer ftl; this ftl reads version {VERSION}"
            ));
        }
        let g = &layout.geo;
        let found = (u32_at(28), u32_at(32), u32_at(36), u32_at(40), u64_at(44));
        let want = (
            g.page_bytes,
            u32::from(g.units_per_page),
            g.pages_per_block,
            g.total_blocks(),
            layout.cap_off,
        );
        if found != want {
            return Err(format!(
                "made for another geometry: {} blocks of {} pages of {} bytes ({} units each); \
                 the configuration has {} blocks of {} pages of {} bytes ({} units each)",
                found.3, found.2, found.0, found.1, want.3, want.2, want.0, want.1
            ));
        }
        let hash = u64_at(20);
        if hash != config_hash {
            return Err(format!(
                "made for another configuration (hash {hash:#018x}, this one {config_hash:#018x}): \
                 use the preset, --config and --set it was created with"
            ));
        }
        let (epoch, mount, off, len) = (u64_at(54), b[53] != 0, u64_at(62), u64_at(70));
        let state = match b[52] {
            0 => State::Fresh,
            1 => State::Open { epoch, mount },
            2 => State::Redo {
                epoch,
                mount,
                off,
                len,
            },
            t => return Err(format!("unknown drive state {t} in the header")),
        };
        Ok(Some(Header {
            seq: u64_at(12),
            config_hash,
            layout: *layout,
            state,
        }))
    }
}

/// Reads `buf.len()` bytes at `off`; bytes past the end of the file (a
/// truncated image) read as zeros, which no checksum accepts.
pub fn read_zero_filled(file: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], off + done as u64) {
            Ok(0) => {
                buf[done..].fill(0);
                return Ok(());
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The header of an open image and where to write the next one.
#[derive(Debug)]
pub struct HeaderSlots {
    /// The current header.
    pub cur: Header,
}

impl HeaderSlots {
    /// A header for a new image (sequence 0: the first write goes to slot B, seq 1).
    pub fn fresh(layout: Layout, config_hash: u64) -> Self {
        HeaderSlots {
            cur: Header {
                seq: 0,
                config_hash,
                layout,
                state: State::Fresh,
            },
        }
    }

    /// Reads both slots of `file` and keeps the newest valid one.
    pub fn read(file: &File, layout: Layout, config_hash: u64) -> Result<Self, ImageError> {
        let mut best: Option<Header> = None;
        let mut why: Option<String> = None;
        for slot in 0..2u64 {
            let mut b = [0u8; HEADER_BYTES];
            // A slot cut off by a truncation reads as zeros (invalid).
            read_zero_filled(file, &mut b, slot * SLOT)
                .map_err(|e| ImageError::Invalid(format!("cannot read the header: {e}")))?;
            match Header::decode(&b, &layout, config_hash) {
                Ok(Some(h)) if best.is_none_or(|c| h.seq > c.seq) => best = Some(h),
                Ok(_) => {}
                Err(e) => why = Some(e),
            }
        }
        match (best, why) {
            (_, Some(e)) => Err(ImageError::Invalid(e)),
            (Some(cur), None) => Ok(HeaderSlots { cur }),
            (None, None) => Err(ImageError::Invalid(
                "not an ftl image, or both header copies are corrupt".into(),
            )),
        }
    }

    /// Writes `state` as the next header into the slot not holding the
    /// current one, then again (next sequence number) into the other slot,
    /// and makes it current: a torn write leaves the other slot valid, and
    /// at rest both slots hold the same state, so damage to one loses
    /// nothing. `sync`: fdatasync before (what the state relies on) and
    /// after each write.
    pub fn write(&mut self, file: &File, state: State, sync: bool) -> Result<(), ImageError> {
        let syncing = |what: &str| -> Result<(), ImageError> {
            if sync {
                file.sync_data()
                    .map_err(|e| ImageError::Io(format!("syncing {what}: {e}")))?;
            }
            Ok(())
        };
        // What the new state relies on is durable before it is.
        syncing("before the header")?;
        for _ in 0..2 {
            let next = Header {
                seq: self.cur.seq + 1,
                state,
                ..self.cur
            };
            file.write_all_at(&next.encode(), (next.seq % 2) * SLOT)
                .map_err(|e| ImageError::Io(format!("writing the header: {e}")))?;
            syncing("the header")?;
            self.cur = next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout::new(Geometry {
            channels: 2,
            blocks_per_plane: 16,
            ..crate::image::test_files::tiny_geo()
        })
    }

    #[test]
    fn header_round_trip_and_rejections() {
        let l = layout();
        let h = Header {
            seq: 7,
            config_hash: 42,
            layout: l,
            state: State::Redo {
                epoch: 3,
                mount: true,
                off: 100,
                len: 200,
            },
        };
        let b = h.encode();
        assert_eq!(Header::decode(&b, &l, 42), Ok(Some(h)));
        // Another configuration.
        assert!(Header::decode(&b, &l, 43)
            .unwrap_err()
            .contains("another configuration"));
        // Another geometry.
        let mut g2 = l.geo;
        g2.blocks_per_plane = 32;
        let e = Header::decode(&b, &Layout::new(g2), 42).unwrap_err();
        assert!(e.contains("another geometry"), "{e}");
        // An older format version is refused with the reason.
        let mut old = b;
        old[8..12].copy_from_slice(&2u32.to_le_bytes());
        let crc = CRC.checksum(&old[..HEADER_BYTES - 4]);
        old[HEADER_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
        let e = Header::decode(&old, &l, 42).unwrap_err();
        assert!(e.contains("version 2") && e.contains("older"), "{e}");
        // A flipped bit anywhere makes the slot invalid, not wrong.
        for i in 0..HEADER_BYTES {
            let mut c = b;
            c[i] ^= 0x10;
            assert_eq!(Header::decode(&c, &l, 42), Ok(None), "byte {i}");
        }
    }

    #[test]
    fn entries_check_only_at_their_own_address() {
        let rec = [7u8; BlockRec::BYTES];
        let e = block_entry(3, &rec);
        assert_eq!(
            checked::<BLOCK_ENTRY, { BlockRec::BYTES }>(&e, |r| block_entry(3, r)),
            Some(rec)
        );
        // Copied to another block's place, zeroed or flipped: refused.
        assert_eq!(
            checked::<BLOCK_ENTRY, { BlockRec::BYTES }>(&e, |r| block_entry(4, r)),
            None
        );
        let z = [0u8; BLOCK_ENTRY];
        assert_eq!(
            checked::<BLOCK_ENTRY, { BlockRec::BYTES }>(&z, |r| block_entry(3, r)),
            None
        );
        let mut f = e;
        f[2] ^= 1;
        assert_eq!(
            checked::<BLOCK_ENTRY, { BlockRec::BYTES }>(&f, |r| block_entry(3, r)),
            None
        );
        // Data: another unit, another program of the same unit.
        let d = [5u8; 64];
        assert_ne!(data_crc(1, 9, &d), data_crc(2, 9, &d));
        assert_ne!(data_crc(1, 9, &d), data_crc(1, 10, &d));
    }

    #[test]
    fn regions_do_not_overlap() {
        let l = layout();
        let g = l.geo;
        assert!(l.block_rec(g.total_blocks()) <= l.pages_rec_off);
        assert!(l.page_rec(g.total_pages()) <= l.units_off);
        assert!(l.unit_rec(u64::from(g.total_units())) <= l.pages_off);
        assert!(l.page(g.total_pages()) <= l.cap_off);
        assert_eq!(l.cap_off % ALIGN, 0);
    }
}
