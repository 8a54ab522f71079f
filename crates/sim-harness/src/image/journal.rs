//! The capacitor region: the journal of one power-on.
//!
//! The core's DRAM (its tables, the write buffer's data, the dirty
//! translation pages) cannot be saved as bytes from outside a `no_std`
//! core that keeps part of its state in a struct. The engine and the core
//! are deterministic, though: the same calls and the same medium results
//! give the same state. So the region records, for the current power-on,
//! every call made to the drive (start, step, submit with its payload) and
//! every result the medium returned (with the bytes of metadata reads);
//! re-running the calls against those results rebuilds the DRAM exactly as
//! it was, and the capacitor flush then runs on it.
//!
//! Records are appended to an in-memory batch and written as one sealed
//! batch (`magic, epoch, seq, len`, a CRC-32C of its control bytes, then
//! the records) by [`Journal::flush`], which runs before every write to the
//! medium and before every reply. A write payload is preceded by a CRC-32C
//! per 4 KiB chunk, taken as it is appended, which count as control bytes;
//! the payload itself does not, so each payload byte is hashed once.
//!
//! On reading, a batch whose control bytes check is kept; a payload chunk
//! that fails its own CRC is damaged, and the units it belongs to are
//! replaced by [`poison_pattern`] (the replay never changes course on
//! payload bytes, and a poisoned unit still in the write buffer at the cut
//! reaches the medium stored as unreadable). A batch whose control bytes
//! fail ends the journal when no valid batch of the power-on follows it
//! (a batch torn by a kill); when one does, the damage is in the middle,
//! what follows cannot be replayed, and the image is refused with the
//! reason. Batches of an older power-on carry an older epoch and are never
//! taken for this one's.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use firmware_core::medium::addr::MAX_UNITS_PER_PAGE;
use firmware_core::{Lpn, NandError, NandResult, PageKind, ReadReport, Spare, UnitMask};

use super::file_medium::poison_pattern;
use super::layout::CRC;
use super::ImageError;
use crate::workload::HostOp;

/// First bytes of a batch.
const BATCH_MAGIC: u32 = 0x4C4E_524A; // "JRNL"
/// Bytes of a batch header.
const BATCH_HEADER: usize = 24;
/// Bytes of payload under one chunk CRC.
const CHUNK: usize = 4096;
/// Largest batch a reader accepts (a bound against garbage lengths).
const MAX_BATCH: u32 = 1 << 30;

const R_START: u8 = 1;
const R_STEP: u8 = 2;
const R_SUBMIT: u8 = 3;
const R_BEGIN_PHASE: u8 = 4;
const R_RESULT: u8 = 5;

/// A call made to the drive, in the order it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// The core was started: mounted (`mount`) or formatted with every
    /// block at `initial_pe` cycles.
    Start {
        /// Mount (else format).
        mount: bool,
        /// P/E cycles of a format.
        initial_pe: u32,
    },
    /// One engine event.
    Step,
    /// A host request with its payload.
    Submit {
        /// Read, write, trim or flush.
        op: HostOp,
        /// First unit.
        lpn: u32,
        /// Units.
        units: u32,
        /// Requested start time, ns.
        at_ns: u64,
        /// Write payload.
        data: Vec<u8>,
    },
    /// The start finished: the measured phase begins.
    BeginPhase,
}

/// What kind of medium operation a result belongs to (checked on replay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum OpKind {
    /// A data read.
    Read = 0,
    /// A program.
    Program = 1,
    /// An erase.
    Erase = 2,
    /// A copyback.
    Copyback = 3,
    /// A metadata program.
    ProgramMeta = 4,
    /// A metadata read.
    ReadMeta = 5,
}

/// One medium result, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The operation.
    pub kind: OpKind,
    /// Its page (block for an erase).
    pub addr: u32,
    /// What the medium returned.
    pub result: NandResult,
    /// Bytes a metadata read returned.
    pub meta: Vec<u8>,
}

/// A parsed journal: the calls, and the results in order.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Calls in order, each with the number of results recorded before it.
    pub calls: Vec<(Call, usize)>,
    /// Results in order.
    pub results: Vec<Outcome>,
    /// Bytes of valid batches (where the next batch goes).
    pub end: u64,
    /// Sequence number of the next batch.
    pub next_seq: u32,
    /// Payload units found damaged and replaced by the poison pattern.
    pub damaged_units: u64,
}

/// The journal writer of one power-on.
#[derive(Debug)]
pub struct Journal {
    file: File,
    base: u64,
    pos: u64,
    epoch: u64,
    seq: u32,
    buf: Vec<u8>,
    /// Ranges of `buf` holding payload bytes (outside the control CRC).
    payload: Vec<(usize, usize)>,
    sync: bool,
    /// Bytes written to the region this power-on.
    pub written: u64,
}

/// CRC-32C of a batch's header fields and its bytes outside `payload`
/// (sorted, disjoint ranges of `body`).
fn crc_ctl(epoch: u64, seq: u32, body: &[u8], payload: &[(usize, usize)]) -> u32 {
    let mut d = CRC.digest();
    d.update(&epoch.to_le_bytes());
    d.update(&seq.to_le_bytes());
    d.update(&(body.len() as u32).to_le_bytes());
    let mut at = 0;
    for &(a, b) in payload {
        d.update(body.get(at..a).unwrap_or(&[]));
        at = b;
    }
    d.update(body.get(at..).unwrap_or(&[]));
    d.finalize()
}

impl Journal {
    /// A journal for power-on `epoch` whose next batch goes `pos` bytes
    /// into the region at `base`, with sequence number `seq`; `sync`:
    /// fdatasync before every batch (the medium writes it describes) and
    /// after it, which survives an operating-system crash, not only a
    /// killed process.
    pub fn new(file: File, base: u64, epoch: u64, pos: u64, seq: u32, sync: bool) -> Self {
        Journal {
            file,
            base,
            pos,
            epoch,
            seq,
            buf: Vec::new(),
            payload: Vec::new(),
            sync,
            written: 0,
        }
    }

    /// Appends a call.
    pub fn call(&mut self, c: &Call) {
        let b = &mut self.buf;
        match c {
            Call::Start { mount, initial_pe } => {
                b.push(R_START);
                b.push(u8::from(*mount));
                b.extend_from_slice(&initial_pe.to_le_bytes());
            }
            Call::Step => b.push(R_STEP),
            Call::BeginPhase => b.push(R_BEGIN_PHASE),
            Call::Submit {
                op,
                lpn,
                units,
                at_ns,
                data,
            } => {
                b.push(R_SUBMIT);
                b.push(match op {
                    HostOp::Read => 0,
                    HostOp::Write => 1,
                    HostOp::Trim => 2,
                    HostOp::Flush => 3,
                    HostOp::Copy { .. } => 4,
                });
                let src = match op {
                    HostOp::Copy { src } => *src,
                    _ => 0,
                };
                b.extend_from_slice(&src.to_le_bytes());
                b.extend_from_slice(&lpn.to_le_bytes());
                b.extend_from_slice(&units.to_le_bytes());
                b.extend_from_slice(&at_ns.to_le_bytes());
                b.extend_from_slice(&(data.len() as u32).to_le_bytes());
                for c in data.chunks(CHUNK) {
                    b.extend_from_slice(&CRC.checksum(c).to_le_bytes());
                }
                let at = b.len();
                b.extend_from_slice(data);
                self.payload.push((at, b.len()));
            }
        }
    }

    /// Appends a medium result.
    pub fn result(&mut self, o: &Outcome) {
        let b = &mut self.buf;
        b.push(R_RESULT);
        b.push(o.kind as u8);
        b.extend_from_slice(&o.addr.to_le_bytes());
        encode_result(b, &o.result);
        b.extend_from_slice(&(o.meta.len() as u32).to_le_bytes());
        b.extend_from_slice(&o.meta);
    }

    /// Writes the records appended since the last flush as one sealed batch.
    pub fn flush(&mut self) -> Result<(), ImageError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut out = Vec::with_capacity(BATCH_HEADER + self.buf.len());
        out.extend_from_slice(&BATCH_MAGIC.to_le_bytes());
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&(self.buf.len() as u32).to_le_bytes());
        // The payload is under its chunk CRCs (taken as it was appended):
        // this one covers the rest.
        out.extend_from_slice(
            &crc_ctl(self.epoch, self.seq, &self.buf, &self.payload).to_le_bytes(),
        );
        out.extend_from_slice(&self.buf);
        if self.sync {
            // The medium writes the batch's results describe go first.
            self.file
                .sync_data()
                .map_err(|e| ImageError::Io(format!("syncing the medium: {e}")))?;
        }
        self.file
            .write_all_at(&out, self.base + self.pos)
            .map_err(|e| ImageError::Io(format!("writing the capacitor region: {e}")))?;
        if self.sync {
            self.file
                .sync_data()
                .map_err(|e| ImageError::Io(format!("syncing the capacitor region: {e}")))?;
        }
        self.pos += out.len() as u64;
        self.written += out.len() as u64;
        self.seq = self.seq.wrapping_add(1);
        self.buf.clear();
        self.payload.clear();
        Ok(())
    }

    /// Where the next batch goes, inside the region.
    pub fn end(&self) -> u64 {
        self.pos
    }
}

/// Writes `bytes` as one sealed batch of power-on `epoch` at `off` in the
/// region at `base` (the saved capacitor flush).
pub fn write_blob(
    file: &File,
    base: u64,
    off: u64,
    epoch: u64,
    bytes: &[u8],
) -> Result<u64, ImageError> {
    let mut j = Journal::new(file_clone(file)?, base, epoch, off, u32::MAX, false);
    j.buf.extend_from_slice(bytes);
    j.flush()?;
    Ok(j.written)
}

/// Reads the batch at `off` written by [`write_blob`].
pub fn read_blob(file: &File, base: u64, off: u64, epoch: u64) -> Result<Vec<u8>, ImageError> {
    let mut r = reader(file, base + off)?;
    match next_batch(&mut r, epoch, u32::MAX)? {
        Some(b) => Ok(b),
        None => Err(ImageError::Invalid(
            "the saved capacitor flush is torn or corrupt".into(),
        )),
    }
}

fn file_clone(file: &File) -> Result<File, ImageError> {
    file.try_clone()
        .map_err(|e| ImageError::Io(format!("cannot reopen the image: {e}")))
}

fn reader(file: &File, at: u64) -> Result<BufReader<File>, ImageError> {
    let mut f = file_clone(file)?;
    f.seek(SeekFrom::Start(at))
        .map_err(|e| ImageError::Io(format!("seeking in the image: {e}")))?;
    Ok(BufReader::with_capacity(1 << 20, f))
}

/// A batch header's fields.
struct BatchHead {
    magic: u32,
    epoch: u64,
    seq: u32,
    len: u32,
    ctl: u32,
}

fn head(h: &[u8]) -> Option<BatchHead> {
    let h = h.get(..BATCH_HEADER)?;
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let mut e = [0u8; 8];
    e.copy_from_slice(&h[4..12]);
    Some(BatchHead {
        magic: u32_at(0),
        epoch: u64::from_le_bytes(e),
        seq: u32_at(12),
        len: u32_at(16),
        ctl: u32_at(20),
    })
}

/// The body of the batch at the start of `r` if it is one of `epoch` with
/// sequence `seq` (any sequence but the saved flush's when `seq` is
/// `None`) whose control bytes check. Its payload chunks are checked
/// against their own CRCs as the records are read.
fn batch_at(r: &mut impl Read, epoch: u64, seq: Option<u32>) -> Option<(u32, Vec<u8>)> {
    let mut h = [0u8; BATCH_HEADER];
    r.read_exact(&mut h).ok()?;
    let b = head(&h)?;
    let seq_ok = match seq {
        Some(s) => b.seq == s,
        None => b.seq != u32::MAX,
    };
    if b.magic != BATCH_MAGIC || b.epoch != epoch || !seq_ok || b.len > MAX_BATCH {
        return None;
    }
    let mut body = vec![0u8; b.len as usize];
    r.read_exact(&mut body).ok()?;
    // The saved flush is raw bytes, all under the control CRC.
    let ranges = if b.seq == u32::MAX {
        Vec::new()
    } else {
        payload_ranges(&body)?
    };
    (crc_ctl(b.epoch, b.seq, &body, &ranges) == b.ctl).then_some((b.seq, body))
}

/// The payload ranges of a batch body, walking its records; `None` when
/// the records do not parse.
fn payload_ranges(body: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut c = Cursor {
        b: body,
        at: 0,
        last_crcs: Vec::new(),
    };
    let mut out = Vec::new();
    while c.at < body.len() {
        match c.u8().ok()? {
            R_RESULT => {
                c.outcome().ok()?;
            }
            R_SUBMIT => {
                c.take(1 + 4 + 4 + 4 + 8).ok()?;
                let n = c.u32().ok()? as usize;
                c.take(n.div_ceil(CHUNK) * 4).ok()?;
                let at = c.at;
                c.take(n).ok()?;
                out.push((at, at + n));
            }
            tag => {
                c.call(tag).ok()?;
            }
        }
    }
    Some(out)
}

/// The next valid batch of `epoch` with sequence `seq`, or `None` where the
/// journal ends (end of file, another epoch, a torn or corrupt batch).
fn next_batch(r: &mut impl Read, epoch: u64, seq: u32) -> Result<Option<Vec<u8>>, ImageError> {
    Ok(batch_at(r, epoch, Some(seq)).map(|(_, b)| b))
}

/// Reads the journal of power-on `epoch` from the region at `base`;
/// damaged payload units of 4 KiB are poisoned (see [`parse_units`]).
pub fn parse(file: &File, base: u64, epoch: u64) -> Result<Parsed, ImageError> {
    parse_units(file, base, epoch, CHUNK)
}

/// Reads the journal of power-on `epoch` from the region at `base`. A
/// payload chunk that fails its CRC makes each `unit_bytes` unit it
/// overlaps read as [`poison_pattern`]; a batch whose control bytes fail
/// ends the journal, or, when a valid batch of the power-on follows it,
/// makes the image invalid (see the module documentation).
pub fn parse_units(
    file: &File,
    base: u64,
    epoch: u64,
    unit_bytes: usize,
) -> Result<Parsed, ImageError> {
    let mut r = reader(file, base)?;
    let mut p = Parsed::default();
    let poison = poison_pattern(unit_bytes);
    while let Some((_, body)) = batch_at(&mut r, epoch, Some(p.next_seq)) {
        p.end += (BATCH_HEADER + body.len()) as u64;
        p.next_seq = p.next_seq.wrapping_add(1);
        let mut c = Cursor {
            b: &body,
            at: 0,
            last_crcs: Vec::new(),
        };
        while c.at < body.len() {
            match c.u8()? {
                R_RESULT => p.results.push(c.outcome()?),
                tag => {
                    let mut call = c.call(tag)?;
                    if let Call::Submit { data, .. } = &mut call {
                        p.damaged_units += poison_damaged(data, &c.last_crcs, unit_bytes, &poison);
                    }
                    p.calls.push((call, p.results.len()));
                }
            }
        }
    }
    // Where the journal ends: a later valid batch of this power-on means
    // the damage is in the middle.
    let mut rest = Vec::new();
    let mut f = file_clone(file)?;
    f.seek(SeekFrom::Start(base + p.end + 1))
        .map_err(|e| ImageError::Io(format!("seeking in the image: {e}")))?;
    f.read_to_end(&mut rest)
        .map_err(|e| ImageError::Io(format!("reading the capacitor region: {e}")))?;
    let magic = BATCH_MAGIC.to_le_bytes();
    let ep = epoch.to_le_bytes();
    for i in 0..rest.len().saturating_sub(BATCH_HEADER) {
        if rest[i..i + 4] != magic || rest[i + 4..i + 12] != ep {
            continue;
        }
        if let Some((seq, _)) = batch_at(&mut &rest[i..], epoch, None) {
            if seq > p.next_seq {
                return Err(ImageError::Invalid(format!(
                    "the capacitor region is damaged at byte {} (batch {}) with intact batches \
                     after it (batch {seq} at byte {}): the last power-on cannot be replayed \
                     past the damage, and its later writes would be lost without an error",
                    base + p.end,
                    p.next_seq,
                    base + p.end + 1 + i as u64
                )));
            }
        }
    }
    Ok(p)
}

/// Replaces by `poison` each `unit_bytes` unit of `data` that a chunk whose
/// CRC (in `crcs`) fails overlaps; returns the number of units replaced.
fn poison_damaged(data: &mut [u8], crcs: &[u32], unit_bytes: usize, poison: &[u8]) -> u64 {
    let mut bad_units = Vec::new();
    for (i, (c, want)) in data.chunks(CHUNK).zip(crcs).enumerate() {
        if CRC.checksum(c) != *want {
            let (a, b) = (i * CHUNK, i * CHUNK + c.len());
            let first = a / unit_bytes;
            let last = (b - 1) / unit_bytes;
            bad_units.extend(first..=last);
        }
    }
    bad_units.dedup();
    for &u in &bad_units {
        if let Some(d) = data.get_mut(u * unit_bytes..(u + 1) * unit_bytes) {
            d.copy_from_slice(&poison[..d.len()]);
        }
    }
    bad_units.len() as u64
}

/// Reads records out of a batch.
struct Cursor<'b> {
    b: &'b [u8],
    at: usize,
    /// Chunk CRCs of the last payload read.
    last_crcs: Vec<u32>,
}

fn bad(what: &str) -> ImageError {
    ImageError::Invalid(format!(
        "the capacitor region holds a malformed record ({what}) under a valid checksum"
    ))
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ImageError> {
        let s = self
            .b
            .get(self.at..self.at + n)
            .ok_or_else(|| bad("short record"))?;
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ImageError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ImageError> {
        let s = self.take(2)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Result<u32, ImageError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Result<u64, ImageError> {
        let s = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        Ok(u64::from_le_bytes(w))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, ImageError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }

    fn call(&mut self, tag: u8) -> Result<Call, ImageError> {
        Ok(match tag {
            R_START => Call::Start {
                mount: self.u8()? != 0,
                initial_pe: self.u32()?,
            },
            R_STEP => Call::Step,
            R_BEGIN_PHASE => Call::BeginPhase,
            R_SUBMIT => {
                let op = self.u8()?;
                let src = self.u32()?;
                let op = match op {
                    0 => HostOp::Read,
                    1 => HostOp::Write,
                    2 => HostOp::Trim,
                    3 => HostOp::Flush,
                    4 => HostOp::Copy { src },
                    _ => return Err(bad("request kind")),
                };
                let (lpn, units, at_ns) = (self.u32()?, self.u32()?, self.u64()?);
                let n = self.u32()? as usize;
                self.last_crcs.clear();
                for _ in 0..n.div_ceil(CHUNK) {
                    let c = self.u32()?;
                    self.last_crcs.push(c);
                }
                Call::Submit {
                    op,
                    lpn,
                    units,
                    at_ns,
                    data: self.take(n)?.to_vec(),
                }
            }
            _ => return Err(bad("record tag")),
        })
    }

    fn outcome(&mut self) -> Result<Outcome, ImageError> {
        let kind = match self.u8()? {
            0 => OpKind::Read,
            1 => OpKind::Program,
            2 => OpKind::Erase,
            3 => OpKind::Copyback,
            4 => OpKind::ProgramMeta,
            5 => OpKind::ReadMeta,
            _ => return Err(bad("operation kind")),
        };
        let addr = self.u32()?;
        let result = self.result()?;
        let meta = self.bytes()?;
        Ok(Outcome {
            kind,
            addr,
            result,
            meta,
        })
    }

    fn result(&mut self) -> Result<NandResult, ImageError> {
        let status = self.u8()?;
        let err = match status {
            0 => {
                let bit_errors = self.u16()?;
                let seq = self.u64()?;
                let kind = match self.u8()? {
                    0 => PageKind::Data,
                    1 => PageKind::Map,
                    2 => PageKind::Meta,
                    3 => PageKind::Pad,
                    _ => return Err(bad("page kind")),
                };
                let units = UnitMask(self.u8()?);
                let mut lpns = [Lpn(0); MAX_UNITS_PER_PAGE];
                for l in &mut lpns {
                    *l = Lpn(self.u32()?);
                }
                let erase_count = self.u32()?;
                let tag = self.u8()?;
                let entrusted_units = UnitMask(self.u8()?);
                let mut entrusted = [Lpn(0); MAX_UNITS_PER_PAGE];
                for l in &mut entrusted {
                    *l = Lpn(self.u32()?);
                }
                return Ok(Ok(ReadReport {
                    bit_errors,
                    spare: Spare {
                        seq,
                        kind,
                        units,
                        lpns,
                        erase_count,
                        tag,
                        entrusted_units,
                        entrusted,
                    },
                }));
            }
            0xff => return Ok(Ok(ReadReport::default())),
            1 => NandError::Erased,
            2 => NandError::Uncorrectable,
            3 => NandError::ProgramFailed,
            4 => NandError::EraseFailed,
            5 => NandError::ProgramOrder,
            6 => NandError::BadAddress,
            7 => NandError::DieFailed,
            8 => NandError::FactoryBad,
            _ => return Err(bad("result status")),
        };
        Ok(Err(err))
    }
}

fn encode_result(b: &mut Vec<u8>, r: &NandResult) {
    match r {
        Ok(rep) if *rep == ReadReport::default() => b.push(0xff),
        Ok(rep) => {
            let s = &rep.spare;
            b.push(0);
            b.extend_from_slice(&rep.bit_errors.to_le_bytes());
            b.extend_from_slice(&s.seq.to_le_bytes());
            b.push(s.kind as u8);
            b.push(s.units.0);
            for l in &s.lpns {
                b.extend_from_slice(&l.0.to_le_bytes());
            }
            b.extend_from_slice(&s.erase_count.to_le_bytes());
            b.push(s.tag);
            b.push(s.entrusted_units.0);
            for l in &s.entrusted {
                b.extend_from_slice(&l.0.to_le_bytes());
            }
        }
        Err(e) => b.push(match e {
            NandError::Erased => 1,
            NandError::Uncorrectable => 2,
            NandError::ProgramFailed => 3,
            NandError::EraseFailed => 4,
            NandError::ProgramOrder => 5,
            NandError::BadAddress => 6,
            NandError::DieFailed => 7,
            NandError::FactoryBad => 8,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::test_files::temp;

    fn sample_outcome() -> Outcome {
        let mut spare = Spare {
            seq: 99,
            kind: PageKind::Map,
            units: UnitMask(0b101),
            erase_count: 7,
            tag: 5,
            ..Spare::default()
        };
        spare.lpns[2] = Lpn(1234);
        Outcome {
            kind: OpKind::ReadMeta,
            addr: 77,
            result: Ok(ReadReport {
                bit_errors: 3,
                spare,
            }),
            meta: vec![5; 64],
        }
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_ends_the_journal() {
        let (path, f) = temp("tail");
        let mut j = Journal::new(f.try_clone().unwrap(), 4096, 3, 0, 0, false);
        let submit = Call::Submit {
            op: HostOp::Write,
            lpn: 10,
            units: 2,
            at_ns: 555,
            data: vec![0xab; 8192],
        };
        j.call(&Call::Start {
            mount: true,
            initial_pe: 0,
        });
        j.call(&submit);
        j.result(&sample_outcome());
        j.flush().unwrap();
        let first_end = j.end();
        j.call(&Call::Step);
        j.result(&Outcome {
            kind: OpKind::Erase,
            addr: 5,
            result: Err(NandError::EraseFailed),
            meta: Vec::new(),
        });
        j.flush().unwrap();
        let p = parse(&f, 4096, 3).unwrap();
        assert_eq!(p.calls.len(), 3);
        assert_eq!(p.calls[1], (submit.clone(), 0));
        assert_eq!(p.calls[2], (Call::Step, 1));
        assert_eq!(p.results[0], sample_outcome());
        assert_eq!(p.results[1].result, Err(NandError::EraseFailed));
        assert_eq!(p.end, j.end());
        // Another power-on's journal is not this one's.
        assert_eq!(parse(&f, 4096, 4).unwrap().calls.len(), 0);
        // Tear the second batch: the journal ends after the first.
        let last = 4096 + j.end() - 1;
        f.write_all_at(&[0x5a], last).unwrap();
        let p = parse(&f, 4096, 3).unwrap();
        assert_eq!(p.calls.len(), 2);
        assert_eq!(p.end, first_end);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_damaged_payload_is_poisoned_and_damaged_control_bytes_in_the_middle_refused() {
        let (path, f) = temp("middle");
        let mut j = Journal::new(f.try_clone().unwrap(), 0, 1, 0, 0, false);
        let write = |lpn| Call::Submit {
            op: HostOp::Write,
            lpn,
            units: 2,
            at_ns: 0,
            data: vec![0x11; 8192],
        };
        let mut ends = Vec::new();
        for lpn in 0..3 {
            j.call(&write(lpn));
            j.call(&Call::Step);
            j.flush().unwrap();
            ends.push(j.end());
        }
        // A flipped payload byte of the first batch: kept, that unit poisoned.
        let payload = ends[0] - 1 - 100;
        let mut b = [0u8];
        f.read_exact_at(&mut b, payload).unwrap();
        f.write_all_at(&[b[0] ^ 1], payload).unwrap();
        let p = parse_units(&f, 0, 1, 4096).unwrap();
        assert_eq!((p.calls.len(), p.damaged_units), (6, 1));
        let Call::Submit { data, .. } = &p.calls[0].0 else {
            panic!("not a submit: {:?}", p.calls[0]);
        };
        assert_eq!(data[..4096], vec![0x11; 4096][..]);
        assert_eq!(data[4096..], poison_pattern(4096)[..]);
        // A flipped control byte (the step) of the middle batch, with an
        // intact batch after it: refused with the reason.
        let step = ends[1] - 1;
        f.read_exact_at(&mut b, step).unwrap();
        f.write_all_at(&[b[0] ^ 1], step).unwrap();
        match parse_units(&f, 0, 1, 4096) {
            Err(ImageError::Invalid(m)) => assert!(m.contains("intact batches after it"), "{m}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        // The same damage in the last batch is a torn tail.
        f.write_all_at(&[b[0]], step).unwrap();
        let last = ends[2] - 1;
        f.read_exact_at(&mut b, last).unwrap();
        f.write_all_at(&[b[0] ^ 1], last).unwrap();
        assert_eq!(parse_units(&f, 0, 1, 4096).unwrap().calls.len(), 4);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_blob_reads_back_and_a_corrupt_one_is_refused() {
        let (path, f) = temp("blob");
        let n = write_blob(&f, 0, 100, 9, b"flush").unwrap();
        assert!(n > 5);
        assert_eq!(read_blob(&f, 0, 100, 9).unwrap(), b"flush");
        assert!(read_blob(&f, 0, 100, 8).is_err());
        f.write_all_at(b"X", 100 + BATCH_HEADER as u64).unwrap();
        assert!(read_blob(&f, 0, 100, 9).is_err());
        std::fs::remove_file(path).unwrap();
    }
}
