//! Block I/O trace parsers.
//!
//! Reads the common public trace formats into one request type,
//! [`TraceRequest`], so the replayer does not care where a trace came from:
//!
//! | [`TraceFormat`] | files | time | addresses |
//! |---|---|---|---|
//! | `Ascii` | DiskSim, SSDsim, MQSim: `time device sector size type` | [`TimeUnit`] (default ns) | 512 B sectors |
//! | `Msr` | MSR Cambridge CSV | Windows filetime, 100 ns | bytes |
//! | `Blkparse` | Linux `blkparse` text, `D` events | seconds | 512 B sectors |
//! | `Vscsi` | CloudPhysics vSCSI CSV | us | bytes, 512 B `lbn` |
//! | `Ftl` | this project's own: `time op offset len [src]`, the only one with copies | ns | bytes |
//!
//! [`load`] reads a whole file (the largest real traces are a few MB) and
//! then applies, in this order: the [`DevicePolicy`], the time transforms
//! (`rebase_time`, then `speed`) and the [`CapacityPolicy`]. Nothing is
//! dropped silently: every line that is not a request is counted in
//! [`TraceStats::skipped`] under a [`SkipKind`], and every malformed line is
//! a [`TraceError`] naming file, line and field. No input makes the parsers
//! panic.
//!
//! The format-specific rules are documented on the submodules: [`ascii`],
//! [`msr`], [`blkparse`], [`vscsi`] and [`native`]; detection for `--format auto` on
//! [`TraceFormat::detect`]. Decisions that apply to every format:
//!
//! - A zero-length request is a malformed line (an error), except in
//!   blkparse, where the kernel legitimately dispatches empty requests
//!   (counted as [`SkipKind::Flush`] or [`SkipKind::ZeroLength`]).
//! - Flushes are not replayed; they are counted as [`SkipKind::Flush`].
//! - Only a blkparse file is treated as possibly cut mid-stream: its final
//!   line, if it has no newline and does not parse completely, is counted as
//!   [`SkipKind::TruncatedFinalLine`]. In the other formats a final line
//!   without a newline must be valid like any other.
//! - Blank lines and lines starting with `#` are allowed in every format.
//! - Requests stay in file order; times that go backwards are counted in
//!   [`TraceStats::time_regressions`], not re-sorted.

pub mod alibaba;
pub mod ascii;
pub mod blkparse;
mod detect;
pub mod fio;
pub mod fiu;
pub mod msr;
pub mod native;
mod num;
mod policy;
mod source;
pub mod spc;
mod stream;
pub mod systor;
pub mod tencent;
pub mod vscsi;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use blkparse::{blk_device_id, blk_device_parts};
pub use detect::DetectError;
pub use source::{Compression, MAX_LINE_BYTES};
pub use stream::{prepare, Prepared, TraceInput, TraceStream};

/// Latest request time the simulator takes, in ns after `rebase_time` and
/// `speed`: 2^64 - 2^62 (438 years; an MSR filetime of 2038 still fits
/// without rebasing). The simulated clock runs on past a request's arrival
/// (its service, the drain after the last request), so a time near 2^64 ns
/// would wrap it; this leaves it 2^62 ns (146 years). A trace time beyond
/// the bound is an error naming its line, whatever the format.
pub const MAX_TIME_NS: u64 = u64::MAX - (1 << 62) + 1;

/// A supported trace file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// DiskSim / SSDsim / MQSim ASCII: `time device sector size type`.
    Ascii,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// Linux `blkparse` default text output; requests are the `D` events.
    Blkparse,
    /// CloudPhysics vSCSI CSV: `version,time,op,size,lbn`.
    Vscsi,
    /// The project's own format, `time op offset len [src]` ([`native`]),
    /// which carries copies.
    Ftl,
    /// Alibaba Cloud block traces: `device_id,opcode,offset,length,timestamp`.
    Alibaba,
    /// Tencent CBS: `timestamp,offset,size,iotype,volume_id`.
    Tencent,
    /// SNIA Systor '17: `Timestamp,Response,IOType,LUN,Offset,Size`.
    Systor,
    /// FIU SRCMap / deduplication: `ts pid process lba size op major minor md5`.
    Fiu,
    /// UMass / SPC (Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp`.
    Spc,
    /// fio iolog, version 2 or 3 (`fio --write_iolog`).
    Fio,
}

impl TraceFormat {
    /// Every format, in the order used for help texts.
    pub const ALL: [TraceFormat; 11] = [
        TraceFormat::Ascii,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Vscsi,
        TraceFormat::Ftl,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
        TraceFormat::Systor,
        TraceFormat::Fiu,
        TraceFormat::Spc,
        TraceFormat::Fio,
    ];

    /// The lowercase name used on the command line and in config files.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ascii => "ascii",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Vscsi => "vscsi",
            TraceFormat::Ftl => "ftl",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Systor => "systor",
            TraceFormat::Fiu => "fiu",
            TraceFormat::Spc => "spc",
            TraceFormat::Fio => "fio",
        }
    }

    /// Guesses the format from the first lines of a file (a few dozen are
    /// plenty), for `--format auto`. Every non-blank, non-comment line must
    /// fit the chosen format and no other; otherwise the error names the
    /// line that ruled the last candidates out and why.
    pub fn detect<'a, I>(lines: I) -> Result<TraceFormat, DetectError>
    where
        I: IntoIterator<Item = &'a str>,
    {
        detect::detect(lines)
    }

    /// Name of the field holding the start address, for error messages.
    fn offset_field(self) -> &'static str {
        match self {
            TraceFormat::Ascii | TraceFormat::Blkparse => "sector",
            TraceFormat::Msr | TraceFormat::Systor => "Offset",
            TraceFormat::Vscsi => "lbn",
            TraceFormat::Ftl | TraceFormat::Alibaba | TraceFormat::Tencent | TraceFormat::Fio => {
                "offset"
            }
            TraceFormat::Fiu => "lba",
            TraceFormat::Spc => "LBA",
        }
    }

    /// Name of the field holding the time, for error messages.
    fn time_field(self) -> &'static str {
        match self {
            TraceFormat::Ascii
            | TraceFormat::Blkparse
            | TraceFormat::Vscsi
            | TraceFormat::Ftl
            | TraceFormat::Fio => "time",
            TraceFormat::Msr | TraceFormat::Systor | TraceFormat::Spc => "Timestamp",
            TraceFormat::Alibaba | TraceFormat::Tencent => "timestamp",
            TraceFormat::Fiu => "ts",
        }
    }

    /// Name of the field holding the length, for error messages.
    fn size_field(self) -> &'static str {
        match self {
            TraceFormat::Ascii | TraceFormat::Vscsi | TraceFormat::Tencent | TraceFormat::Fiu => {
                "size"
            }
            TraceFormat::Msr | TraceFormat::Systor | TraceFormat::Spc => "Size",
            TraceFormat::Blkparse => "nsectors",
            TraceFormat::Ftl => "len",
            TraceFormat::Alibaba | TraceFormat::Fio => "length",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    /// Parses a format name of [`TraceFormat::ALL`] (any case); `auto` is
    /// the caller's business (it maps to `TraceOptions::format = None`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown trace format `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Unit of the time column of ASCII traces, which the files do not record.
///
/// MQSim and SSDsim write integer nanoseconds, so [`TimeUnit::Ns`] is the
/// default; DiskSim and the SNIA-derived ASCII files use fractional
/// milliseconds ([`TimeUnit::Ms`]). A fraction is accepted in every unit and
/// converted exactly (sub-nanosecond remainders are truncated). The other
/// formats have fixed units and ignore this setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Nanoseconds (MQSim, SSDsim). The default.
    #[default]
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds (DiskSim).
    Ms,
}

impl TimeUnit {
    /// Nanoseconds per unit.
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
        }
    }
}

impl FromStr for TimeUnit {
    type Err = String;

    /// Parses `ns`, `us` or `ms` (any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "ns" => Ok(TimeUnit::Ns),
            "us" => Ok(TimeUnit::Us),
            "ms" => Ok(TimeUnit::Ms),
            _ => Err(format!("unknown time unit `{s}` (expected ns, us or ms)")),
        }
    }
}

/// The operation of a trace request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOp {
    /// Host read.
    Read,
    /// Host write.
    Write,
    /// Discard / TRIM / UNMAP of the range.
    Trim,
    /// Copy of the range from `src_bytes` (only the [`native`] format).
    Copy {
        /// Start of the source range in bytes (same length as the request).
        src_bytes: u64,
    },
    /// Host write carrying an FDP placement identifier (only the
    /// [`native`] format); counted as a write.
    PlacedWrite {
        /// The placement identifier (reclaim-unit handle), 0..=255.
        pid: u8,
    },
    /// Zone Append to the zone that starts at the request's offset (only
    /// the [`native`] format); the drive picks the LBA (its write pointer).
    Append,
    /// A Zone Send action on the zone that starts at the request's offset
    /// (only the [`native`] format); its length is 1 byte, a placeholder.
    Zone(ZoneSend),
}

impl TraceOp {
    /// Whether this is a zone command (append or Zone Send), which only a
    /// zoned namespace takes.
    pub fn is_zone(self) -> bool {
        matches!(self, TraceOp::Append | TraceOp::Zone(_))
    }
}

/// The Zone Send actions a trace can carry (NVMe ZNS Zone Management Send).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneSend {
    /// Open Zone: explicitly open.
    Open,
    /// Close Zone.
    Close,
    /// Finish Zone: to full, whatever its write pointer.
    Finish,
    /// Reset Zone: to empty, its data gone.
    Reset,
}

/// A line of a trace file, for checks made after the first pass (a zone
/// command under a namespace that is not zoned, a placement identifier
/// beyond the drive's handles).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineRef {
    /// File name, as in [`TraceError::file`].
    pub file: String,
    /// 1-based line number.
    pub line: u64,
}

impl LineRef {
    /// An error on this line in `field`, for `reason`.
    pub fn error(&self, field: &str, reason: impl Into<String>) -> TraceError {
        TraceError::new(&self.file, self.line, field, reason)
    }
}

/// Where a trace first uses what only some namespaces take: zone
/// commands (`host.interface = zns`), placement identifiers (`fdp`), and
/// trims or copies (not `zns`). Filled by the first pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NamespaceUse {
    /// First zone append or Zone Send line.
    pub zone_op: Option<LineRef>,
    /// First write with a placement identifier.
    pub placed: Option<LineRef>,
    /// Highest placement identifier and the first line carrying it.
    pub max_placement: Option<(u8, LineRef)>,
    /// First trim or copy line.
    pub trim_or_copy: Option<LineRef>,
}

/// One host request, in bytes and nanoseconds whatever the source format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRequest {
    /// Arrival time in ns, after `rebase_time` and `speed`.
    pub time_ns: u64,
    /// Read, write or trim.
    pub op: TraceOp,
    /// Start address in bytes, after the device and capacity policies.
    pub offset_bytes: u64,
    /// Length in bytes; never zero.
    pub len_bytes: u64,
    /// Device number from the trace (ASCII `device`, MSR `DiskNumber`,
    /// blkparse [`blk_device_id`], 0 for vSCSI); kept as recorded even when
    /// the devices are merged into one address space.
    pub device: u32,
}

impl TraceRequest {
    /// One past the last byte, `offset_bytes + len_bytes` (never overflows:
    /// parsers reject requests whose end does not fit in 64 bits).
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes.saturating_add(self.len_bytes)
    }

    /// The highest end of the ranges the request touches: its own, and a
    /// copy's source range.
    pub fn max_end_bytes(&self) -> u64 {
        match self.op {
            TraceOp::Copy { src_bytes } => self
                .end_bytes()
                .max(src_bytes.saturating_add(self.len_bytes)),
            _ => self.end_bytes(),
        }
    }

    /// Builds a request, rejecting zero lengths and ends beyond 2^64.
    /// `fields` names the offset and length fields for the error.
    fn checked(
        time_ns: u64,
        op: TraceOp,
        offset_bytes: u64,
        len_bytes: u64,
        device: u32,
        fields: [&'static str; 2],
    ) -> Result<Self, FieldError> {
        if len_bytes == 0 {
            return Err(FieldError::new(fields[1], "zero-length request"));
        }
        if offset_bytes.checked_add(len_bytes).is_none() {
            return Err(FieldError::new(
                fields[0],
                "offset + length overflows 64-bit bytes",
            ));
        }
        Ok(TraceRequest {
            time_ns,
            op,
            offset_bytes,
            len_bytes,
            device,
        })
    }
}

/// Whether `[a, a + len)` and `[b, b + len)` share a byte (a copy between
/// them would read what it writes); ends beyond 2^64 count as 2^64.
fn ranges_overlap(a: u64, b: u64, len: u64) -> bool {
    a < b.saturating_add(len) && b < a.saturating_add(len)
}

/// How requests of several devices map onto the one simulated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DevicePolicy {
    /// Give every device its own region of one address space. The devices
    /// seen are sorted by number; the k-th (from 0) gets the region
    /// `[k * span, (k + 1) * span)`, where `span` is the highest end address
    /// of any request of any device, rounded up to a multiple of 1 MiB
    /// (which keeps every alignment up to 1 MiB). With a single device
    /// nothing moves.
    #[default]
    Merge,
    /// Keep only this device's requests (the others are counted as
    /// [`SkipKind::OtherDevice`]); an error if the device never occurs.
    Select(u32),
}

/// What to do with requests beyond `capacity_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CapacityPolicy {
    /// Offset modulo capacity. A request that then crosses the end is split
    /// in two, `[offset, capacity)` and `[0, rest)`, with the same time and
    /// op (counted in [`TraceStats::split`]), so no byte is lost; a copy is
    /// also split where its source crosses the end. A request longer than
    /// the capacity, and a copy whose source and destination overlap once
    /// folded, are errors naming their line.
    Wrap,
    /// If the trace reaches beyond the capacity, shrink its address range
    /// linearly: `offset * capacity / max_end` (exact integer arithmetic),
    /// rounded down to the original offset's alignment (up to 4 KiB), and
    /// moved down if needed so the request still ends within the capacity.
    /// Lengths are unchanged. A trace that fits is left alone.
    Scale,
    /// Fail, naming the first line (in file order) whose request ends beyond
    /// the capacity. The default: nothing is altered without being asked.
    #[default]
    Reject,
}

/// How to read and transform a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceOptions {
    /// The file format; `None` detects it from the first lines
    /// (`--format auto`).
    pub format: Option<TraceFormat>,
    /// Time unit of ASCII traces (ignored by the other formats).
    pub time_unit: TimeUnit,
    /// Subtract the earliest request time so the trace starts at t = 0
    /// (MQSim traces start at 0.94 s, MSR timestamps count from 1601).
    /// Default `true`.
    pub rebase_time: bool,
    /// Replay speed: every time (after rebasing) is divided by it and
    /// rounded to the nearest ns, so 2.0 replays twice as fast. Must be
    /// finite and > 0. Default 1.0 (exact, no floating point involved).
    pub speed: f64,
    /// Merge or select devices.
    pub device_policy: DevicePolicy,
    /// Wrap, scale or reject requests beyond the capacity.
    pub capacity_policy: CapacityPolicy,
    /// FIU traces: a write whose content hash an earlier write still holds
    /// becomes a copy from there ([`fiu`]). Default `false`.
    pub dedup_copies: bool,
    /// Most bytes the deduplication tables of one file may take, their
    /// growth included (`dedup_copies`); a write that would take them
    /// past it is an error naming its line. `None` (the default): no bound.
    pub dedup_max_bytes: Option<u64>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            format: None,
            time_unit: TimeUnit::Ns,
            rebase_time: true,
            speed: 1.0,
            device_policy: DevicePolicy::Merge,
            capacity_policy: CapacityPolicy::Reject,
            dedup_copies: false,
            dedup_max_bytes: None,
        }
    }
}

/// A category of trace line (or request) that did not become a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipKind {
    /// Empty or whitespace-only line.
    Blank,
    /// Line starting with `#`.
    Comment,
    /// CSV header line (vSCSI `version,...`, MSR `Timestamp,...`).
    Header,
    /// blkparse event other than `D` (dispatch), by action (`Q`, `C`, ...).
    BlkEvent(String),
    /// blkparse I/O scheduler message line (action `m`, e.g. CFQ notes).
    SchedulerMessage,
    /// Line of blkparse's closing summary block.
    Summary,
    /// Cache flush without data (blkparse flush dispatch, SCSI
    /// SYNCHRONIZE CACHE): the simulator replays no flushes.
    Flush,
    /// blkparse dispatch without data that is not a flush (`N`).
    NoData,
    /// blkparse data dispatch of zero sectors without a flush flag.
    ZeroLength,
    /// vSCSI command that moves no replayable data, by opcode (e.g. 0x42
    /// UNMAP, whose ranges the trace does not record).
    ScsiCommand(u8),
    /// Request of a device other than the one selected.
    OtherDevice,
    /// Final line of a blkparse file without a newline that does not parse
    /// completely: the file was cut mid-line.
    TruncatedFinalLine,
    /// fio iolog file handling (`add`, `open`, `close`).
    FileAction,
    /// fio iolog `wait` (a delay, not a request).
    Wait,
}

impl fmt::Display for SkipKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipKind::Blank => f.write_str("blank lines"),
            SkipKind::Comment => f.write_str("comment lines"),
            SkipKind::Header => f.write_str("header lines"),
            SkipKind::BlkEvent(a) => write!(f, "blkparse `{a}` events (not dispatch)"),
            SkipKind::SchedulerMessage => f.write_str("blkparse scheduler messages (`m`)"),
            SkipKind::Summary => f.write_str("blkparse summary lines"),
            SkipKind::Flush => f.write_str("flushes (not replayed)"),
            SkipKind::NoData => f.write_str("dispatches without data (`N`)"),
            SkipKind::ZeroLength => f.write_str("zero-length dispatches"),
            SkipKind::ScsiCommand(op) => {
                write!(f, "SCSI 0x{op:02x} {} commands", vscsi::opcode_name(*op))
            }
            SkipKind::OtherDevice => f.write_str("requests of unselected devices"),
            SkipKind::TruncatedFinalLine => f.write_str("truncated final line"),
            SkipKind::FileAction => f.write_str("fio file actions (add, open, close)"),
            SkipKind::Wait => f.write_str("fio waits"),
        }
    }
}

/// What a load read, skipped and changed; meant to be printed by the CLI
/// (its `Display` is a readable multi-line report).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// The format read (detected or given).
    pub format: TraceFormat,
    /// Lines read, including skipped ones.
    pub lines: u64,
    /// Request lines kept (after device selection, before wrap splits).
    pub records: u64,
    /// Requests returned: `records` plus `split`.
    pub requests: u64,
    /// Read records.
    pub reads: u64,
    /// Write records.
    pub writes: u64,
    /// Trim records.
    pub trims: u64,
    /// Copy records (`ftl` format only).
    pub copies: u64,
    /// Bytes read by the read records.
    pub read_bytes: u64,
    /// Bytes written by the write records.
    pub write_bytes: u64,
    /// Bytes trimmed by the trim records.
    pub trim_bytes: u64,
    /// Bytes copied by the copy records.
    pub copy_bytes: u64,
    /// Writes with a placement identifier (`ftl` format; also in `writes`).
    pub placed_writes: u64,
    /// Zone Append records (`ftl` format).
    pub appends: u64,
    /// Bytes of the zone append records.
    pub append_bytes: u64,
    /// Zone Send records (open, close, finish, reset; `ftl` format).
    pub zone_sends: u64,
    /// Where the trace first uses namespace-specific commands.
    pub uses: NamespaceUse,
    /// Non-request lines (and unselected requests), by kind.
    #[serde(serialize_with = "ser_skipped")]
    pub skipped: BTreeMap<SkipKind, u64>,
    /// Request lines per device number, before device selection.
    pub devices: BTreeMap<u32, u64>,
    /// Region size of each device when several were merged, else `None`.
    pub device_span_bytes: Option<u64>,
    /// Highest end address after the device policy, before the capacity
    /// policy.
    pub max_end_bytes: u64,
    /// The capacity the addresses were checked against.
    pub capacity_bytes: u64,
    /// The capacity policy applied.
    pub capacity_policy: CapacityPolicy,
    /// Requests the wrap policy moved (`Wrap`): offset reduced modulo the
    /// capacity, or crossing the end (their tail continues at 0).
    pub wrapped: u64,
    /// Extra requests made by splitting at the end of the capacity
    /// (`Wrap`): one per crossing request, two for a copy whose source
    /// crosses at another point than its destination.
    pub split: u64,
    /// Requests whose offset was moved by `Scale`.
    pub scaled: u64,
    /// Earliest request time, after rebase and speed.
    pub first_time_ns: u64,
    /// Latest request time, after rebase and speed.
    pub last_time_ns: u64,
    /// `last_time_ns - first_time_ns`.
    pub time_span_ns: u64,
    /// Requests whose time is earlier than their predecessor's (file order
    /// is kept; the replayer decides what to do).
    pub time_regressions: u64,
}

fn ser_skipped<S: serde::Serializer>(
    map: &BTreeMap<SkipKind, u64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(map.iter().map(|(k, v)| (k.to_string(), v)))
}

impl TraceStats {
    fn new(format: TraceFormat, capacity_bytes: u64, capacity_policy: CapacityPolicy) -> Self {
        TraceStats {
            format,
            lines: 0,
            records: 0,
            requests: 0,
            reads: 0,
            writes: 0,
            trims: 0,
            copies: 0,
            read_bytes: 0,
            write_bytes: 0,
            trim_bytes: 0,
            copy_bytes: 0,
            placed_writes: 0,
            appends: 0,
            append_bytes: 0,
            zone_sends: 0,
            uses: NamespaceUse::default(),
            skipped: BTreeMap::new(),
            devices: BTreeMap::new(),
            device_span_bytes: None,
            max_end_bytes: 0,
            capacity_bytes,
            capacity_policy,
            wrapped: 0,
            split: 0,
            scaled: 0,
            first_time_ns: 0,
            last_time_ns: 0,
            time_span_ns: 0,
            time_regressions: 0,
        }
    }

    /// Count of one skip kind (0 if none).
    pub fn skipped_of(&self, kind: &SkipKind) -> u64 {
        self.skipped.get(kind).copied().unwrap_or(0)
    }

    /// Total of all skipped lines and requests.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    fn device_name(&self, id: u32) -> String {
        if self.format == TraceFormat::Blkparse {
            let (maj, min) = blk_device_parts(id);
            format!("{id} ({maj},{min})")
        } else {
            id.to_string()
        }
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = |ns: u64| ns as f64 / 1e9;
        writeln!(f, "format: {}", self.format)?;
        writeln!(f, "lines read: {}", self.lines)?;
        writeln!(
            f,
            "request records: {} ({} reads / {} B, {} writes / {} B, {} trims / {} B)",
            self.records,
            self.reads,
            self.read_bytes,
            self.writes,
            self.write_bytes,
            self.trims,
            self.trim_bytes
        )?;
        if self.copies > 0 {
            writeln!(f, "copy records: {} / {} B", self.copies, self.copy_bytes)?;
        }
        if self.placed_writes > 0 {
            writeln!(
                f,
                "writes with a placement identifier: {}",
                self.placed_writes
            )?;
        }
        if self.appends + self.zone_sends > 0 {
            writeln!(
                f,
                "zone records: {} appends / {} B, {} zone sends",
                self.appends, self.append_bytes, self.zone_sends
            )?;
        }
        writeln!(f, "requests after capacity policy: {}", self.requests)?;
        writeln!(f, "skipped: {}", self.skipped_total())?;
        for (k, v) in &self.skipped {
            writeln!(f, "  {k}: {v}")?;
        }
        let devs: Vec<String> = self
            .devices
            .iter()
            .map(|(d, n)| format!("{}: {n}", self.device_name(*d)))
            .collect();
        writeln!(f, "devices: {} [{}]", self.devices.len(), devs.join(", "))?;
        if let Some(span) = self.device_span_bytes {
            writeln!(f, "devices merged, region of {span} B each")?;
        }
        writeln!(
            f,
            "address range: up to {} B, capacity {} B, policy {:?}: {} wrapped, {} split, {} scaled",
            self.max_end_bytes,
            self.capacity_bytes,
            self.capacity_policy,
            self.wrapped,
            self.split,
            self.scaled
        )?;
        write!(
            f,
            "time: {:.6} s to {:.6} s, span {:.6} s, {} out-of-order requests",
            secs(self.first_time_ns),
            secs(self.last_time_ns),
            secs(self.time_span_ns),
            self.time_regressions
        )
    }
}

/// A loaded trace: the requests in file order, and what happened on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The requests, in file order (not re-sorted by time).
    pub requests: Vec<TraceRequest>,
    /// Counts of everything read, skipped and transformed.
    pub stats: TraceStats,
}

/// A malformed trace line (or an unusable file or option), located precisely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// File name as given to [`load`] / [`parse_bytes`].
    pub file: String,
    /// 1-based line number; 0 when the problem is not one line (I/O error,
    /// bad option, format not detected from an empty file).
    pub line: u64,
    /// The field at fault, named as in the format's documentation (e.g.
    /// `sector`, `Type`, `op`), or `line`, `file`, `format`, an option name.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl TraceError {
    fn new(file: &str, line: u64, field: &str, reason: impl Into<String>) -> Self {
        TraceError {
            file: file.to_string(),
            line,
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: field {}: {}",
            self.file, self.line, self.field, self.reason
        )
    }
}

impl std::error::Error for TraceError {}

/// A field-level parse failure, before the driver adds file and line.
#[derive(Debug)]
struct FieldError {
    field: &'static str,
    reason: String,
}

impl FieldError {
    fn new(field: &'static str, reason: impl Into<String>) -> Self {
        FieldError {
            field,
            reason: reason.into(),
        }
    }
}

/// What one line parsed into.
enum Parsed<'a> {
    /// A request.
    Request(TraceRequest),
    /// A counted non-request line.
    Skip(SkipKind),
    /// A blkparse non-dispatch event, by action (counted without allocating).
    Event(&'a str),
}

/// Reads and parses a whole trace file into memory; see [`parse_bytes`].
/// For traces of any size, stream them with [`prepare`] and
/// [`Prepared::stream`] instead.
pub fn load(
    path: impl AsRef<Path>,
    opts: &TraceOptions,
    capacity_bytes: u64,
) -> Result<Trace, TraceError> {
    collect(
        TraceInput::Path(path.as_ref().to_path_buf()),
        opts,
        capacity_bytes,
    )
}

/// Parses a trace held in memory (plain or compressed); `name` is used in
/// errors and stands for the file name. Applies the options as described
/// on [`TraceOptions`], [`DevicePolicy`] and [`CapacityPolicy`].
/// `capacity_bytes` is the simulated device's user capacity and must be > 0.
pub fn parse_bytes(
    name: &str,
    data: &[u8],
    opts: &TraceOptions,
    capacity_bytes: u64,
) -> Result<Trace, TraceError> {
    collect(
        TraceInput::Bytes {
            name: name.to_string(),
            data,
        },
        opts,
        capacity_bytes,
    )
}

/// Both passes over one input, keeping every request.
fn collect(
    input: TraceInput<'_>,
    opts: &TraceOptions,
    capacity_bytes: u64,
) -> Result<Trace, TraceError> {
    let prepared = prepare(&[input], opts, capacity_bytes)?;
    let mut stream = prepared.stream()?;
    let requests = (&mut stream).collect::<Result<Vec<_>, _>>()?;
    let mut stats = prepared.stats;
    stream.finish_stats(&mut stats);
    Ok(Trace { requests, stats })
}
