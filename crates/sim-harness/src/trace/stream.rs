//! Streaming trace reading: a counted first pass ([`prepare`]) that
//! validates every line and measures the trace's extent, then a second
//! pass ([`TraceStream`]) that yields the transformed requests one by one.
//! Memory stays bounded whatever the file size: one line buffer and one
//! read-ahead request per file.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use super::blkparse::{self, Blkparse};
use super::fio::Fio;
use super::fiu::Fiu;
use super::source::{self, Lines};
use super::{
    alibaba, ascii, msr, native, policy, spc, systor, tencent, vscsi, DevicePolicy, FieldError,
    LineRef, NamespaceUse, Parsed, SkipKind, TraceError, TraceFormat, TraceOp, TraceOptions,
    TraceRequest, TraceStats,
};

/// Lines examined by auto-detection.
const DETECT_LINES: usize = 64;

/// Granule that merged device regions are rounded up to.
const MERGE_ALIGN: u64 = 1 << 20;

/// Where a trace's bytes come from: a file (plain or compressed), or bytes
/// in memory (a bundled trace, a test).
#[derive(Debug, Clone)]
pub enum TraceInput<'a> {
    /// A file on disk.
    Path(PathBuf),
    /// Bytes in memory, with the name used in errors.
    Bytes {
        /// Stands for the file name in errors and reports.
        name: String,
        /// The trace (possibly compressed).
        data: &'a [u8],
    },
}

impl<'a> TraceInput<'a> {
    /// The name used in errors and reports.
    pub fn name(&self) -> String {
        match self {
            TraceInput::Path(p) => p.display().to_string(),
            TraceInput::Bytes { name, .. } => name.clone(),
        }
    }

    /// Most bytes reading this input holds at once, whatever its length
    /// (buffers, decompressor, one line; not the deduplication tables,
    /// which [`TraceOptions::dedup_max_bytes`] bounds). Opens a file to
    /// see its compression.
    pub fn reading_bytes(&self) -> Result<u64, TraceError> {
        let kind = match self {
            TraceInput::Path(p) => source::sniff_file(p, &self.name())?,
            TraceInput::Bytes { data, .. } => super::Compression::sniff(data),
        };
        Ok(source::reading_bytes(kind))
    }

    fn open(&self) -> Result<Lines<'a>, TraceError> {
        match self {
            TraceInput::Path(p) => source::open_file(p, &self.name()),
            TraceInput::Bytes { name, data } => source::open_bytes(data, name),
        }
    }
}

/// One line's parser, with the state some formats keep between lines.
struct LineParser {
    format: TraceFormat,
    unit_ns: u64,
    blk: Blkparse,
    fio: Fio,
    fiu: Fiu,
}

impl LineParser {
    fn new(format: TraceFormat, opts: &TraceOptions) -> Self {
        LineParser {
            format,
            unit_ns: opts.time_unit.ns(),
            blk: Blkparse::default(),
            fio: Fio::default(),
            fiu: Fiu::new(opts.dedup_copies, opts.dedup_max_bytes),
        }
    }

    fn parse<'t>(&mut self, text: &'t str) -> Result<Parsed<'t>, FieldError> {
        match self.format {
            TraceFormat::Ascii => ascii::parse_line(text, self.unit_ns),
            TraceFormat::Msr => msr::parse_line(text),
            TraceFormat::Blkparse => self.blk.parse_line(text),
            TraceFormat::Vscsi => vscsi::parse_line(text),
            TraceFormat::Ftl => native::parse_line(text),
            TraceFormat::Alibaba => alibaba::parse_line(text),
            TraceFormat::Tencent => tencent::parse_line(text),
            TraceFormat::Systor => systor::parse_line(text),
            TraceFormat::Fiu => self.fiu.parse_line(text),
            TraceFormat::Spc => spc::parse_line(text),
            TraceFormat::Fio => self.fio.parse_line(text),
        }
    }
}

/// Per-pass counters of one file that are not requests.
#[derive(Default)]
struct Counts {
    /// Non-request lines (and unselected requests), by kind.
    skipped: BTreeMap<SkipKind, u64>,
    /// blkparse events by action, counted without allocating per line.
    events: Vec<(String, u64)>,
}

/// One pass over one file: lines in, kept requests out.
struct Reader<'a> {
    lines: Lines<'a>,
    parser: LineParser,
    name: String,
    select: Option<u32>,
}

impl<'a> Reader<'a> {
    fn new(
        input: &TraceInput<'a>,
        format: TraceFormat,
        opts: &TraceOptions,
    ) -> Result<Self, TraceError> {
        Ok(Reader {
            lines: input.open()?,
            parser: LineParser::new(format, opts),
            name: input.name(),
            select: match opts.device_policy {
                DevicePolicy::Select(d) => Some(d),
                DevicePolicy::Merge => None,
            },
        })
    }

    /// The next kept request and its line number; `on_request` sees every
    /// request line before device selection (for the device counts).
    fn next(
        &mut self,
        counts: &mut Counts,
        on_request: &mut dyn FnMut(u32),
    ) -> Result<Option<(TraceRequest, u64)>, TraceError> {
        let format = self.parser.format;
        loop {
            let Some((lineno, raw, complete)) = self.lines.next_line()? else {
                return Ok(None);
            };
            // Only a blkparse file is "known to be cut": its unterminated
            // final line may be partial. Elsewhere a missing final newline
            // is normal and the line must parse.
            let truncatable = !complete && format == TraceFormat::Blkparse;
            let bump =
                |counts: &mut Counts, k: SkipKind| *counts.skipped.entry(k).or_default() += 1;
            let text = match std::str::from_utf8(raw) {
                Ok(t) => t.trim(),
                Err(_) if truncatable => {
                    bump(counts, SkipKind::TruncatedFinalLine);
                    continue;
                }
                Err(e) => {
                    return Err(TraceError::new(
                        &self.name,
                        lineno,
                        "line",
                        format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1),
                    ))
                }
            };
            let parsed = if text.is_empty() {
                Ok(Parsed::Skip(SkipKind::Blank))
            } else if text.starts_with('#') {
                Ok(Parsed::Skip(SkipKind::Comment))
            } else {
                self.parser.parse(text)
            };
            match parsed {
                Ok(Parsed::Request(_)) if truncatable && !blkparse::complete_dispatch(text) => {
                    bump(counts, SkipKind::TruncatedFinalLine);
                }
                Ok(Parsed::Request(r)) => {
                    on_request(r.device);
                    if self.select.is_some_and(|d| d != r.device) {
                        bump(counts, SkipKind::OtherDevice);
                        continue;
                    }
                    return Ok(Some((r, lineno)));
                }
                Ok(Parsed::Skip(kind)) => bump(counts, kind),
                Ok(Parsed::Event(action)) => {
                    match counts.events.iter_mut().find(|(a, _)| a == action) {
                        Some((_, n)) => *n += 1,
                        None => counts.events.push((action.to_string(), 1)),
                    }
                }
                Err(_) if truncatable => bump(counts, SkipKind::TruncatedFinalLine),
                Err(e) => return Err(TraceError::new(&self.name, lineno, e.field, e.reason)),
            }
        }
    }

    fn lines_read(&self) -> u64 {
        self.lines.lineno()
    }
}

/// Picks the format from the first lines of `input`, reporting failures
/// as a [`TraceError`]. A malformed line after lines that agree on a format
/// does not fail detection: it is left to the parser, whose error is more
/// precise.
fn detect_input(input: &TraceInput<'_>) -> Result<TraceFormat, TraceError> {
    let name = input.name();
    let mut lines = input.open()?;
    let mut sample: Vec<String> = Vec::new();
    while sample.len() < DETECT_LINES {
        match lines.next_line()? {
            Some((_, raw, complete)) => {
                if complete || sample.is_empty() {
                    sample.push(String::from_utf8_lossy(raw).into_owned());
                }
                if !complete {
                    break;
                }
            }
            None => break,
        }
    }
    let err = match TraceFormat::detect(sample.iter().map(String::as_str)) {
        Ok(f) => return Ok(f),
        Err(e) => e,
    };
    let before = usize::try_from(err.line.saturating_sub(1)).unwrap_or(0);
    if let Some(Ok(f)) = sample
        .get(..before)
        .map(|s| TraceFormat::detect(s.iter().map(String::as_str)))
    {
        return Ok(f);
    }
    Err(TraceError::new(
        &name,
        err.line,
        "format",
        format!("cannot detect: {}", err.reason),
    ))
}

/// The error of a file in which `format` found no request at all (an empty
/// file, a file of another format that happened to skip cleanly, a file
/// with only comments): replaying nothing is never what was asked.
fn no_requests(name: &str, format: TraceFormat, lines: u64, counts: &Counts) -> TraceError {
    let what = if lines == 0 {
        "the file is empty".to_string()
    } else {
        let mut kinds: Vec<String> = counts
            .skipped
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .chain(
                counts
                    .events
                    .iter()
                    .map(|(a, n)| format!("{n} {}", SkipKind::BlkEvent(a.clone()))),
            )
            .collect();
        kinds.truncate(4);
        let (s, verb) = if lines == 1 {
            ("", "holds")
        } else {
            ("s", "hold")
        };
        format!("its {lines} line{s} {verb} none ({})", kinds.join(", "))
    };
    TraceError::new(
        name,
        0,
        "file",
        format!("no request read as format {format}: {what}"),
    )
}

/// Records the first line (`at`) of each namespace-specific use of `op`.
fn note_use(u: &mut NamespaceUse, op: TraceOp, at: impl Fn() -> LineRef) {
    match op {
        TraceOp::Append | TraceOp::Zone(_) if u.zone_op.is_none() => u.zone_op = Some(at()),
        TraceOp::Trim | TraceOp::Copy { .. } if u.trim_or_copy.is_none() => {
            u.trim_or_copy = Some(at())
        }
        TraceOp::PlacedWrite { pid } => {
            if u.placed.is_none() {
                u.placed = Some(at());
            }
            if u.max_placement.as_ref().is_none_or(|(m, _)| pid > *m) {
                u.max_placement = Some((pid, at()));
            }
        }
        _ => {}
    }
}

/// A trace after its counted first pass: the statistics every consumer
/// needs up front, and what the second pass needs to transform requests.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    inputs: Vec<TraceInput<'a>>,
    opts: TraceOptions,
    /// Everything the first pass counted; the second pass adds `requests`,
    /// `wrapped`, `split`, `scaled` and `time_regressions`.
    pub stats: TraceStats,
    /// Devices seen (sorted), for region ranks when merging.
    devices: Vec<u32>,
    /// Region size per device when merging several, else `None`.
    span: Option<u64>,
    /// Subtracted from every time.
    rebase: u64,
}

/// Reads every input once (the counted first pass): detects the format
/// (every input must have the same), validates every line, counts, and
/// measures the address and time extent that the policies need. Inputs
/// are joined as one trace (`--concat`): their devices share one device
/// policy and their times one origin. A request the capacity policy cannot
/// place is reported here, before anything runs.
pub fn prepare<'a>(
    inputs: &[TraceInput<'a>],
    opts: &TraceOptions,
    capacity_bytes: u64,
) -> Result<Prepared<'a>, TraceError> {
    let first_name = inputs.first().map(TraceInput::name).unwrap_or_default();
    if !(opts.speed.is_finite() && opts.speed > 0.0) {
        return Err(TraceError::new(
            &first_name,
            0,
            "speed",
            format!("speed must be a finite number > 0, got {}", opts.speed),
        ));
    }
    if capacity_bytes == 0 {
        return Err(TraceError::new(
            &first_name,
            0,
            "capacity",
            "capacity must be > 0 bytes",
        ));
    }
    let Some(first) = inputs.first() else {
        return Err(TraceError::new("", 0, "file", "no trace file given"));
    };
    let format = match opts.format {
        Some(f) => f,
        None => {
            let f = detect_input(first)?;
            for i in &inputs[1..] {
                let g = detect_input(i)?;
                if g != f {
                    return Err(TraceError::new(
                        &i.name(),
                        0,
                        "format",
                        format!(
                            "is {g} but {} is {f}; joined files must share a format",
                            first.name()
                        ),
                    ));
                }
            }
            f
        }
    };
    let mut stats = TraceStats::new(format, capacity_bytes, opts.capacity_policy);
    let mut dev_end: BTreeMap<u32, u64> = BTreeMap::new();
    let (mut min_t, mut max_t, mut max_len) = (u64::MAX, 0u64, 0u64);
    for input in inputs {
        let mut rd = Reader::new(input, format, opts)?;
        let mut counts = Counts::default();
        let devices = &mut stats.devices;
        let mut seen = 0u64;
        let mut on_req = |d: u32| {
            seen += 1;
            *devices.entry(d).or_default() += 1;
        };
        while let Some((r, line)) = rd.next(&mut counts, &mut on_req)? {
            note_use(&mut stats.uses, r.op, || LineRef {
                file: rd.name.clone(),
                line,
            });
            let mut no_bytes = 0u64;
            let (count, bytes) = match r.op {
                TraceOp::Read => (&mut stats.reads, &mut stats.read_bytes),
                TraceOp::Write => (&mut stats.writes, &mut stats.write_bytes),
                TraceOp::PlacedWrite { .. } => {
                    stats.placed_writes += 1;
                    (&mut stats.writes, &mut stats.write_bytes)
                }
                TraceOp::Trim => (&mut stats.trims, &mut stats.trim_bytes),
                TraceOp::Copy { .. } => (&mut stats.copies, &mut stats.copy_bytes),
                TraceOp::Append => (&mut stats.appends, &mut stats.append_bytes),
                TraceOp::Zone(_) => (&mut stats.zone_sends, &mut no_bytes),
            };
            *count += 1;
            *bytes = bytes.saturating_add(r.len_bytes);
            stats.records += 1;
            let e = dev_end.entry(r.device).or_default();
            *e = (*e).max(r.max_end_bytes());
            min_t = min_t.min(r.time_ns);
            max_t = max_t.max(r.time_ns);
            max_len = max_len.max(r.len_bytes);
        }
        let lines = rd.lines_read();
        if seen == 0 {
            return Err(no_requests(&rd.name, format, lines, &counts));
        }
        stats.lines += lines;
        for (kind, n) in counts.skipped {
            *stats.skipped.entry(kind).or_default() += n;
        }
        for (action, n) in counts.events {
            *stats.skipped.entry(SkipKind::BlkEvent(action)).or_default() += n;
        }
    }
    if let DevicePolicy::Select(d) = opts.device_policy {
        if !stats.devices.contains_key(&d) {
            let seen: Vec<String> = stats
                .devices
                .keys()
                .map(|k| stats.device_name(*k))
                .collect();
            return Err(TraceError::new(
                &first_name,
                0,
                "device",
                format!(
                    "selected device {d} does not occur in the trace (devices seen: {})",
                    if seen.is_empty() {
                        "none".to_string()
                    } else {
                        seen.join(", ")
                    }
                ),
            ));
        }
    }
    let devices: Vec<u32> = stats.devices.keys().copied().collect();
    let mut max_end = dev_end.values().copied().max().unwrap_or(0);
    let mut span = None;
    if opts.device_policy == DevicePolicy::Merge && devices.len() > 1 {
        let s = max_end
            .checked_next_multiple_of(MERGE_ALIGN)
            .unwrap_or(u64::MAX);
        span = Some(s);
        max_end = dev_end
            .iter()
            .map(|(d, end)| {
                let rank = devices.binary_search(d).unwrap_or(0) as u64;
                rank.saturating_mul(s).saturating_add(*end)
            })
            .max()
            .unwrap_or(0);
    }
    stats.device_span_bytes = span;
    stats.max_end_bytes = max_end;
    if stats.records == 0 {
        min_t = 0;
    }
    let rebase = if opts.rebase_time { min_t } else { 0 };
    let time = |t: u64| policy::time(t, rebase, opts.speed).unwrap_or(u64::MAX);
    stats.first_time_ns = time(min_t);
    stats.last_time_ns = time(max_t);
    stats.time_span_ns = stats.last_time_ns - stats.first_time_ns;
    let prepared = Prepared {
        inputs: inputs.to_vec(),
        opts: opts.clone(),
        stats,
        devices,
        span,
        rebase,
    };
    // Find the exact line of a request that cannot be placed (or whose
    // region overflows), so nothing runs on a trace that would fail.
    let cap = capacity_bytes;
    let may_fail = max_end == u64::MAX
        || time(max_t) == u64::MAX
        || match opts.capacity_policy {
            super::CapacityPolicy::Reject => max_end > cap,
            // Folding or scaling may also bring a copy onto its source.
            _ => max_end > cap && (max_len > cap || prepared.stats.copies > 0),
        };
    if may_fail {
        let mut s = prepared.stream()?;
        for r in &mut s {
            r?;
        }
    }
    Ok(prepared)
}

impl<'a> Prepared<'a> {
    /// Starts the second pass.
    pub fn stream(&self) -> Result<TraceStream<'a>, TraceError> {
        let mut readers = Vec::with_capacity(self.inputs.len());
        for i in &self.inputs {
            readers.push(Reader::new(i, self.stats.format, &self.opts)?);
        }
        let n = readers.len();
        Ok(TraceStream {
            heads: vec![None; n],
            done: vec![false; n],
            readers,
            counts: Counts::default(),
            opts: self.opts.clone(),
            devices: self.devices.clone(),
            span: self.span,
            rebase: self.rebase,
            format: self.stats.format,
            capacity: self.stats.capacity_bytes,
            max_end: self.stats.max_end_bytes,
            pending: VecDeque::new(),
            tally: policy::Tally::default(),
            prev_time: None,
        })
    }

    /// The input names, in order.
    pub fn names(&self) -> Vec<String> {
        self.inputs.iter().map(TraceInput::name).collect()
    }
}

/// The second pass: transformed requests in time order across the joined
/// files (file order within a file), with the wrap splits in place.
pub struct TraceStream<'a> {
    readers: Vec<Reader<'a>>,
    heads: Vec<Option<(TraceRequest, u64)>>,
    done: Vec<bool>,
    counts: Counts,
    opts: TraceOptions,
    devices: Vec<u32>,
    span: Option<u64>,
    rebase: u64,
    format: TraceFormat,
    capacity: u64,
    max_end: u64,
    pending: VecDeque<TraceRequest>,
    tally: policy::Tally,
    prev_time: Option<u64>,
}

impl TraceStream<'_> {
    /// Adds what the second pass counted (requests, wraps, splits, scaled
    /// requests, time regressions) to the first pass's `stats`.
    pub fn finish_stats(&self, stats: &mut TraceStats) {
        stats.requests = self.tally.requests;
        stats.wrapped = self.tally.wrapped;
        stats.split = self.tally.split;
        stats.scaled = self.tally.scaled;
        stats.time_regressions = self.tally.time_regressions;
    }

    /// Reads the next kept request of file `i` and applies the device and
    /// time policies.
    fn fill(&mut self, i: usize) -> Result<(), TraceError> {
        let rd = &mut self.readers[i];
        let Some((mut r, line)) = rd.next(&mut self.counts, &mut |_| {})? else {
            self.done[i] = true;
            return Ok(());
        };
        let err = |field: &str, reason: String| TraceError::new(&rd.name, line, field, reason);
        if let Some(span) = self.span {
            let rank = self.devices.binary_search(&r.device).unwrap_or(0) as u64;
            let base = rank.checked_mul(span);
            let moved = |off: u64| {
                base.and_then(|b| b.checked_add(off))
                    .filter(|o| o.checked_add(r.len_bytes).is_some())
            };
            let Some(off) = moved(r.offset_bytes) else {
                return Err(err(
                    self.format.offset_field(),
                    format!(
                        "merging {} devices into regions of {span} bytes puts device {} \
                         beyond 64-bit bytes; select one device instead",
                        self.devices.len(),
                        r.device
                    ),
                ));
            };
            if let TraceOp::Copy { src_bytes } = r.op {
                let src = moved(src_bytes).ok_or_else(|| {
                    err(
                        "src",
                        "the copy source moves beyond 64-bit bytes".to_string(),
                    )
                })?;
                r.op = TraceOp::Copy { src_bytes: src };
            }
            r.offset_bytes = off;
        }
        r.time_ns = policy::time(r.time_ns, self.rebase, self.opts.speed).ok_or_else(|| {
            let t = r.time_ns.saturating_sub(self.rebase);
            let speed = if self.opts.speed == 1.0 {
                String::new()
            } else {
                format!(" divided by speed {}", self.opts.speed)
            };
            let rebased = if self.rebase > 0 {
                " (counted from the first request)"
            } else {
                ""
            };
            err(
                self.format.time_field(),
                format!(
                    "time {t} ns{rebased}{speed} overflows the simulator's clock, which takes \
                     at most {} ns (438 years)",
                    super::MAX_TIME_NS
                ),
            )
        })?;
        self.heads[i] = Some((r, line));
        Ok(())
    }

    fn next_request(&mut self) -> Result<Option<TraceRequest>, TraceError> {
        if let Some(p) = self.pending.pop_front() {
            return Ok(Some(p));
        }
        let mut best: Option<usize> = None;
        for i in 0..self.readers.len() {
            if self.heads[i].is_none() && !self.done[i] {
                self.fill(i)?;
            }
            if let Some((r, _)) = &self.heads[i] {
                if best.is_none_or(|b| self.heads[b].is_some_and(|(h, _)| r.time_ns < h.time_ns)) {
                    best = Some(i);
                }
            }
        }
        let Some(b) = best else { return Ok(None) };
        let Some((r, line)) = self.heads[b].take() else {
            return Ok(None);
        };
        if self.prev_time.is_some_and(|p| r.time_ns < p) {
            self.tally.time_regressions += 1;
        }
        self.prev_time = Some(r.time_ns);
        let placed = policy::place(
            r,
            self.capacity,
            self.max_end,
            self.opts.capacity_policy,
            &mut self.pending,
            &mut self.tally,
        );
        if let Err((field, reason)) = placed {
            let field = field.unwrap_or(self.format.offset_field());
            let field = match field {
                "size" => self.format.size_field(),
                // Only the ftl format writes a copy's source; a copy made
                // from another format (fiu deduplication) is its offset's.
                "src" if self.format != TraceFormat::Ftl => self.format.offset_field(),
                f => f,
            };
            let merged = if self.span.is_some() {
                " after merging devices"
            } else {
                ""
            };
            return Err(TraceError::new(
                &self.readers[b].name,
                line,
                field,
                reason.replace("{merged}", merged),
            ));
        }
        Ok(self.pending.pop_front())
    }
}

impl Iterator for TraceStream<'_> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_request().transpose()
    }
}
