//! FIU SRCMap and I/O-deduplication traces (homes, web-vm, mail).
//!
//! One request per line, nine whitespace-separated fields:
//! `ts_ns pid process lba size_sectors op major minor md5`, with `ts_ns`
//! in nanoseconds, `lba` and `size_sectors` in 512-byte sectors, `op` `R`
//! or `W` (any case), the device as `major minor` (numbered like
//! [`blk_device_id`](super::blk_device_id)) and `md5` the 32-hex-digit hash
//! of the data (per 4 KiB block in the published files). `process` must
//! not contain spaces.
//!
//! With [`TraceOptions::dedup_copies`](super::TraceOptions::dedup_copies)
//! the hash feeds copy-assisted writing (seed 003 replays the FIU mail
//! traces this way): a write whose content hash equals that of an earlier
//! write of the same length, whose range still holds that content, becomes
//! a [`TraceOp::Copy`] from there. The tables this needs grow with the
//! number of distinct addresses written (only when the option is on);
//! [`TraceOptions::dedup_max_bytes`](super::TraceOptions::dedup_max_bytes)
//! bounds them: a write that would grow them past it is an error naming
//! its line.

use std::collections::HashMap;

use super::num::{parse_rw, parse_u32, parse_u64, quote, split_fields, times_unit};
use super::{blk_device_id, FieldError, Parsed, TraceOp, TraceRequest};

/// Field names, in column order, as used in error messages.
pub(super) const FIELDS: [&str; 9] = [
    "ts", "pid", "process", "lba", "size", "op", "major", "minor", "md5",
];

/// Granule at which overwritten content is forgotten (a sector).
const BLOCK: u64 = 512;

/// Longest write (bytes) that is considered for deduplication.
const DEDUP_MAX: u64 = 1 << 20;

/// Line parser; with deduplication on, remembers where each content lives.
#[derive(Default)]
pub(super) struct Fiu {
    dedup: bool,
    /// Most bytes the two tables may take, their growth included.
    max_bytes: Option<u64>,
    /// (Device, content hash) -> (offset, length) of its latest write.
    by_hash: HashMap<(u32, u128), (u64, u64)>,
    /// (Device, start offset) -> content hash of the write that started there.
    by_addr: HashMap<(u32, u64), u128>,
}

/// Parses a 32-digit hexadecimal MD5 hash.
fn parse_md5(s: &str) -> Result<u128, FieldError> {
    if s.len() != 32 {
        return Err(FieldError::new(
            "md5",
            format!("{} is not a 32-digit hex MD5 hash", quote(s)),
        ));
    }
    u128::from_str_radix(s, 16)
        .map_err(|_| FieldError::new("md5", format!("{} is not hexadecimal", quote(s))))
}

/// Bytes a hash table of `capacity` entries of `entry` bytes allocates
/// (buckets a power of two, at most 7/8 full, one control byte each).
fn table_bytes(capacity: usize, entry: usize) -> u64 {
    if capacity == 0 {
        return 0;
    }
    let buckets = (capacity as u64 * 8 / 7).next_power_of_two();
    buckets * (entry as u64 + 1)
}

/// Bytes of one map at its capacity.
fn map_bytes<K, V>(m: &HashMap<K, V>) -> u64 {
    table_bytes(m.capacity(), std::mem::size_of::<(K, V)>())
}

/// Bytes of one map while it grows to hold one more entry: the old table
/// and the new one of twice the buckets are both held during the move.
fn growth_bytes<K, V>(m: &HashMap<K, V>) -> u64 {
    let now = map_bytes(m);
    if m.len() < m.capacity() {
        return now;
    }
    let grown = table_bytes((m.capacity() * 2).max(4), std::mem::size_of::<(K, V)>());
    now + grown
}

impl Fiu {
    /// A parser; `dedup` turns duplicate-content writes into copies, with
    /// tables of at most `max_bytes` (`None`: unbounded).
    pub(super) fn new(dedup: bool, max_bytes: Option<u64>) -> Fiu {
        Fiu {
            dedup,
            max_bytes,
            ..Fiu::default()
        }
    }

    /// Most bytes the tables take on the next write: each at its capacity,
    /// or while growing by one entry. The bound [`TraceOptions`]
    /// (super::TraceOptions::dedup_max_bytes) is checked against this.
    fn next_write_bytes(&self) -> u64 {
        let hash = growth_bytes(&self.by_hash) + map_bytes(&self.by_addr);
        let addr = map_bytes(&self.by_hash) + growth_bytes(&self.by_addr);
        hash.max(addr)
    }

    /// Parses one non-blank, non-comment line.
    pub(super) fn parse_line(&mut self, line: &str) -> Result<Parsed<'static>, FieldError> {
        let f = split_fields(
            line,
            None,
            &FIELDS,
            "ts pid process lba size op major minor md5",
            false,
        )?;
        let time_ns = parse_u64(f[0]).map_err(|r| FieldError::new("ts", r))?;
        parse_u64(f[1]).map_err(|r| FieldError::new("pid", r))?;
        let offset = times_unit(f[3], 512, "lba")?;
        let len = times_unit(f[4], 512, "size")?;
        let op = parse_rw(f[5], "op")?;
        let major = parse_u32(f[6]).map_err(|r| FieldError::new("major", r))?;
        let minor = parse_u32(f[7]).map_err(|r| FieldError::new("minor", r))?;
        let device = blk_device_id(major, minor).ok_or_else(|| {
            FieldError::new("minor", "device out of range (major < 4096, minor < 2^20)")
        })?;
        let hash = parse_md5(f[8])?;
        let mut req = TraceRequest::checked(time_ns, op, offset, len, device, ["lba", "size"])?;
        if self.dedup && op == TraceOp::Write {
            req.op = self.write(device, offset, len, hash)?;
        }
        Ok(Parsed::Request(req))
    }

    /// Records a write of `hash` and says whether it can be a copy; an
    /// error when the tables would grow past their bound.
    fn write(
        &mut self,
        device: u32,
        offset: u64,
        len: u64,
        hash: u128,
    ) -> Result<TraceOp, FieldError> {
        if len > DEDUP_MAX {
            self.by_hash.clear();
            self.by_addr.clear();
            return Ok(TraceOp::Write);
        }
        if let Some(max) = self.max_bytes {
            let need = self.next_write_bytes();
            if need > max {
                return Err(FieldError::new(
                    "md5",
                    format!(
                        "the deduplication tables (dedup copies) would take {need} bytes \
                         after {} distinct contents, more than the {max} bytes left to them \
                         by the memory limit; raise the limit or replay without \
                         deduplication",
                        self.by_hash.len()
                    ),
                ));
            }
        }
        let op = match self.by_hash.get(&(device, hash)) {
            Some(&(src, slen))
                if slen == len
                    && self.by_addr.get(&(device, src)) == Some(&hash)
                    && (src + len <= offset || offset + len <= src) =>
            {
                TraceOp::Copy { src_bytes: src }
            }
            _ => TraceOp::Write,
        };
        let mut b = offset;
        while b < offset + len {
            self.by_addr.remove(&(device, b));
            b += BLOCK;
        }
        self.by_addr.insert((device, offset), hash);
        self.by_hash.insert((device, hash), (offset, len));
        Ok(op)
    }
}
