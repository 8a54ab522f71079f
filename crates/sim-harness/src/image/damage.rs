//! The damage harness: known data written through an image drive, the
//! file damaged at random, the drive restarted and every unit read back.
//!
//! Two base images are made with the library `ftl serve --image` uses: one
//! stopped cleanly ([`Served::Shutdown`]) and one stopped as by `kill -9`
//! ([`Served::Stopped`]: requests in flight, a journal to replay). Each
//! damage copies a base and applies one [`Kind`]; the drive is then opened
//! on the copy and every unit of the region read. A unit is correct (the
//! data last acknowledged), an error, or served wrong (anything else),
//! which must never happen. The drive must start on every copy whose
//! headers survive, and a unit whose every copy on the medium the damage
//! left alone must read back correct (checked when the damage touched only
//! data pages, whose units are known from the undamaged base).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use nand_model::{BlockRec, PageRec};

use super::layout::{HeaderSlots, Layout, BLOCK_ENTRY, PAGE_ENTRY, UNIT_ENTRY};
use super::{config_hash, open, ImageError, ImageOptions, Served};
use crate::config::SimConfig;
use crate::interactive::Device;
use crate::sim::Plan;
use crate::workload::HostOp;

/// A kind of damage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// 1 to 100 bits flipped anywhere in the file.
    BitFlips,
    /// A range of 1 byte to 64 KiB zeroed.
    ZeroRange,
    /// The file cut short (after a kill, only inside the medium: a cut
    /// journal tail is a torn tail, see `docs/nbd.md`).
    Truncate,
    /// A 4 KiB block of the file copied over another (a misdirected write).
    BlockCopy,
    /// The whole file replaced by a copy taken at an earlier clean stop.
    StaleCopy,
}

/// Every kind, in report order.
pub const KINDS: [Kind; 5] = [
    Kind::BitFlips,
    Kind::ZeroRange,
    Kind::Truncate,
    Kind::BlockCopy,
    Kind::StaleCopy,
];

impl Kind {
    /// Name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::BitFlips => "bit-flips",
            Kind::ZeroRange => "zeroed-range",
            Kind::Truncate => "truncation",
            Kind::BlockCopy => "block-copy",
            Kind::StaleCopy => "stale-copy",
        }
    }
}

/// Counts of one kind of damage on one base.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Damages applied.
    pub damages: u64,
    /// Units read back as last acknowledged.
    pub correct: u64,
    /// Units read back as an error.
    pub error: u64,
    /// Units served with other data: must be 0.
    pub wrong: u64,
    /// Files refused whose headers are gone.
    pub refused: u64,
    /// Files refused although a header survives (the reason is printed).
    pub refused_with_headers: u64,
    /// Units the damage did not touch, checked.
    pub untouched: u64,
    /// Of those, units not read back correct.
    pub untouched_bad: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.damages += o.damages;
        self.correct += o.correct;
        self.error += o.error;
        self.wrong += o.wrong;
        self.refused += o.refused;
        self.refused_with_headers += o.refused_with_headers;
        self.untouched += o.untouched;
        self.untouched_bad += o.untouched_bad;
    }
}

/// What a run found: per base (clean stop, kill) and kind.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `(killed, kind, counts)`.
    pub rows: Vec<(bool, Kind, Counts)>,
    /// Reasons of files refused although a header survived (first few).
    pub refusals: Vec<String>,
}

impl Report {
    /// The counts of all rows.
    pub fn total(&self) -> Counts {
        let mut t = Counts::default();
        for (_, _, c) in &self.rows {
            t.add(c);
        }
        t
    }

    fn row(&mut self, killed: bool, kind: Kind) -> &mut Counts {
        let i = match self
            .rows
            .iter()
            .position(|(k, d, _)| *k == killed && *d == kind)
        {
            Some(i) => i,
            None => {
                self.rows.push((killed, kind, Counts::default()));
                self.rows.len() - 1
            }
        };
        &mut self.rows[i].2
    }

    /// A table of the counts.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<6} {:<13} {:>7} {:>9} {:>8} {:>6} {:>8} {:>10} {:>10}\n",
            "stop",
            "kind",
            "damages",
            "correct",
            "error",
            "WRONG",
            "refused",
            "untouched",
            "unt.bad"
        );
        let mut rows = self.rows.clone();
        rows.sort_by_key(|(k, d, _)| (*k, KINDS.iter().position(|x| x == d)));
        let total = self.total();
        for (k, d, c) in rows
            .iter()
            .map(|(k, d, c)| (if *k { "kill" } else { "clean" }, d.name(), c))
            .chain(std::iter::once(("all", "", &total)))
        {
            s.push_str(&format!(
                "{:<6} {:<13} {:>7} {:>9} {:>8} {:>6} {:>8} {:>10} {:>10}\n",
                k,
                d,
                c.damages,
                c.correct,
                c.error,
                c.wrong,
                c.refused + c.refused_with_headers,
                c.untouched,
                c.untouched_bad
            ));
        }
        s
    }
}

/// A small seeded generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// The small drive the harness uses: 2 channels of 64 blocks of 32 pages.
pub fn plan() -> Result<Plan, String> {
    let mut c = SimConfig::preset("default").map_err(|e| e.to_string())?;
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "ftl.op_ratio=0.35",
        "ftl.map_entries_per_page=256",
        "buffer.write_buffer_bytes=262144",
        "nand.full_data=true",
    ] {
        c.apply_set(s).map_err(|e| e.to_string())?;
    }
    Plan::from_config(&c).map_err(|e| e.to_string())
}

/// The bytes of version `v` of unit `lpn`.
fn unit(lpn: u32, v: u32, b: usize) -> Vec<u8> {
    let mut r = Rng(u64::from(lpn) << 32 | u64::from(v));
    let mut out = Vec::with_capacity(b + 8);
    while out.len() < b {
        out.extend_from_slice(&r.next().to_le_bytes());
    }
    out.truncate(b);
    out
}

/// Runs one request to completion and syncs (as before an NBD reply):
/// whether it succeeded, and the data read.
fn call(
    d: &mut dyn Device,
    op: HostOp,
    lpn: u32,
    data: Vec<u8>,
) -> Result<(bool, Vec<u8>), String> {
    let id = d.submit(op, lpn, 1, data, 0).map_err(|e| e.to_string())?;
    loop {
        if let Some(c) = d.poll() {
            if c.id != id {
                return Err("a completion for another request".into());
            }
            d.sync().map_err(|e| e.to_string())?;
            return Ok((c.ok, c.data));
        }
        if !d.step().map_err(|e| e.to_string())? {
            return Err("no event left before completion".into());
        }
    }
}

/// Expected version of each unit of the region (0: never written).
type Versions = Vec<u32>;

/// One base image: its bytes and the versions acknowledged in it.
struct Base {
    bytes: Vec<u8>,
    want: Versions,
    killed: bool,
}

/// Writes `rounds` passes of overwrites over the region, acknowledged one
/// by one, into `want`.
fn write_pass(
    d: &mut dyn Device,
    want: &mut Versions,
    version: &mut u32,
    writes: u32,
    stride: u32,
) -> Result<(), String> {
    let region = want.len() as u32;
    let b = d.unit_bytes();
    for i in 0..writes {
        *version += 1;
        let lpn = (i * stride) % region;
        let (ok, _) = call(d, HostOp::Write, lpn, unit(lpn, *version, b))?;
        if !ok {
            return Err(format!("the write of unit {lpn} failed"));
        }
        want[lpn as usize] = *version;
    }
    Ok(())
}

fn open_err(e: ImageError) -> String {
    format!("building the base image: {e}")
}

/// Builds the stale, clean and killed bases in `dir`.
fn bases(plan: &Plan, dir: &Path, region: u32) -> Result<(Base, Base, Base), String> {
    let path = dir.join("base.img");
    let _ = std::fs::remove_file(&path);
    let opts = ImageOptions::default();
    let mut want = vec![0u32; region as usize];
    let mut version = 0u32;
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading the base: {e}"));
    open(plan, &path, opts, |d, _| {
        Served::Shutdown(write_pass(d, &mut want, &mut version, region, 1))
    })
    .map_err(open_err)??;
    let stale = Base {
        bytes: read(&path)?,
        want: want.clone(),
        killed: false,
    };
    open(plan, &path, opts, |d, _| {
        Served::Shutdown(write_pass(d, &mut want, &mut version, 3 * region, 7))
    })
    .map_err(open_err)??;
    let clean = Base {
        bytes: read(&path)?,
        want: want.clone(),
        killed: false,
    };
    open(plan, &path, opts, |d, _| {
        Served::Stopped(write_pass(d, &mut want, &mut version, 2 * region, 13))
    })
    .map_err(open_err)??;
    let killed = Base {
        bytes: read(&path)?,
        want,
        killed: true,
    };
    let _ = std::fs::remove_file(&path);
    Ok((stale, clean, killed))
}

/// Byte ranges a damage changed, and the file's new length.
struct Damage {
    bytes: Vec<u8>,
    ranges: Vec<(u64, u64)>,
}

fn damage(kind: Kind, base: &Base, stale: &Base, lay: &Layout, rng: &mut Rng) -> Damage {
    let mut bytes = base.bytes.clone();
    let len = bytes.len() as u64;
    let mut ranges = Vec::new();
    match kind {
        Kind::BitFlips => {
            for _ in 0..=rng.below(100) {
                let at = rng.below(len);
                bytes[at as usize] ^= 1 << rng.below(8);
                ranges.push((at, at + 1));
            }
        }
        Kind::ZeroRange => {
            let n = 1 + rng.below(64 << 10);
            let at = rng.below(len);
            let end = (at + n).min(len);
            bytes[at as usize..end as usize].fill(0);
            ranges.push((at, end));
        }
        Kind::Truncate => {
            let limit = if base.killed {
                lay.cap_off.min(len)
            } else {
                len
            };
            let at = rng.below(limit);
            bytes.truncate(at as usize);
            ranges.push((at, len.max(lay.cap_off)));
        }
        Kind::BlockCopy => {
            let blocks = len / 4096;
            let (from, to) = (rng.below(blocks) * 4096, rng.below(blocks) * 4096);
            let src = bytes[from as usize..from as usize + 4096].to_vec();
            bytes[to as usize..to as usize + 4096].copy_from_slice(&src);
            ranges.push((to, to + 4096));
        }
        Kind::StaleCopy => bytes = stale.bytes.clone(),
    }
    Damage { bytes, ranges }
}

/// The units of the region whose copies on the medium `ranges` touch,
/// read from the undamaged `clean` bytes; `None` when the damage reaches
/// something else than data pages (metadata pages, the capacitor region).
fn touched(
    clean: &[u8],
    lay: &Layout,
    ranges: &[(u64, u64)],
    killed: bool,
) -> Option<HashSet<u32>> {
    let g = lay.geo;
    let (ppb, upp) = (u64::from(g.pages_per_block), u64::from(g.units_per_page));
    let np = u64::from(g.total_pages());
    let mut pages = HashSet::new();
    for &(a, b) in ranges {
        let mut at = a;
        while at < b {
            if at < lay.blocks_off {
                at = lay.blocks_off;
            } else if at < lay.pages_rec_off {
                let blk = (at - lay.blocks_off) / BLOCK_ENTRY as u64;
                pages.extend(blk * ppb..(blk + 1) * ppb);
                at = lay.blocks_off + (blk + 1) * BLOCK_ENTRY as u64;
            } else if at < lay.cap_off {
                // One step per page: to the start of the page's next entry
                // (or its next bytes).
                let (base, size, end) = if at < lay.units_off {
                    (lay.pages_rec_off, PAGE_ENTRY as u64, lay.units_off)
                } else if at < lay.pages_off {
                    (lay.units_off, UNIT_ENTRY as u64 * upp, lay.pages_off)
                } else {
                    (lay.pages_off, u64::from(g.page_bytes), lay.cap_off)
                };
                let p = (at - base) / size;
                pages.insert(p);
                at = (base + (p + 1) * size).min(end);
            } else {
                if killed {
                    return None;
                }
                break;
            }
        }
    }
    let rd = |off: u64, n: usize| clean.get(off as usize..off as usize + n);
    let mut out = HashSet::new();
    for p in pages.into_iter().filter(|&p| p < np) {
        let blk = p / ppb;
        let brec = rd(lay.blocks_off + blk * BLOCK_ENTRY as u64, BlockRec::BYTES)?;
        let wp = u64::from(u32::from_le_bytes([brec[4], brec[5], brec[6], brec[7]]));
        if p % ppb >= wp {
            continue;
        }
        let prec = rd(lay.pages_rec_off + p * PAGE_ENTRY as u64, PageRec::BYTES)?;
        match (prec[8] >> 2) & 3 {
            0 => {}
            3 => continue,
            _ => return None,
        }
        for i in 0..upp {
            if prec[9] & (1 << i) != 0 {
                let e = rd(lay.units_off + (p * upp + i) * UNIT_ENTRY as u64 + 8, 4)?;
                out.insert(u32::from_le_bytes([e[0], e[1], e[2], e[3]]));
            }
        }
    }
    Some(out)
}

/// Runs `count` random damages from `seed`, with scratch files in `dir`;
/// `progress` gets a line every so often. `data_only`: draw again any
/// damage that reaches more than data pages and their records (metadata
/// pages, the capacitor region), and skip stale copies.
pub fn run(
    count: u64,
    seed: u64,
    dir: &Path,
    data_only: bool,
    mut progress: impl FnMut(&str),
) -> Result<Report, String> {
    let plan = plan()?;
    let lay = Layout::new(plan.core.geometry);
    let region = 2048u32.min(plan.core.logical_units);
    let (stale, clean, killed) = bases(&plan, dir, region)?;
    let mut rng = Rng(seed);
    let mut rep = Report::default();
    let path: PathBuf = dir.join("damaged.img");
    let hash = config_hash(&{
        let mut p = plan;
        p.full_data = true;
        p
    });
    let mut i = 0;
    while i < count {
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        let base = if kind != Kind::StaleCopy && rng.below(2) == 1 {
            &killed
        } else {
            &clean
        };
        let d = damage(kind, base, &stale, &lay, &mut rng);
        let want = if kind == Kind::StaleCopy {
            &stale.want
        } else {
            &base.want
        };
        let touched = if kind == Kind::StaleCopy {
            Some(HashSet::new())
        } else {
            touched(&base.bytes, &lay, &d.ranges, base.killed)
        };
        if data_only && (touched.is_none() || kind == Kind::StaleCopy) {
            continue;
        }
        i += 1;
        std::fs::write(&path, &d.bytes).map_err(|e| format!("writing the damaged copy: {e}"))?;
        let mut c = Counts {
            damages: 1,
            ..Counts::default()
        };
        let got = open(&plan, &path, ImageOptions::default(), |dev, _| {
            let b = dev.unit_bytes();
            let mut res = Vec::with_capacity(region as usize);
            for lpn in 0..region {
                res.push(call(dev, HostOp::Read, lpn, Vec::new()).map(|(ok, data)| {
                    let v = want[lpn as usize];
                    let expect = if v == 0 { vec![0; b] } else { unit(lpn, v, b) };
                    (ok, ok && data == expect)
                }));
            }
            Served::Stopped(res)
        });
        match got {
            Ok(res) => {
                for (lpn, r) in res.into_iter().enumerate() {
                    // A harness failure is not a detected damage.
                    let (ok, right) = r.map_err(|e| format!("reading unit {lpn}: {e}"))?;
                    match (ok, right) {
                        (false, _) => c.error += 1,
                        (true, true) => c.correct += 1,
                        (true, false) => c.wrong += 1,
                    }
                    if let Some(t) = &touched {
                        if !t.contains(&(lpn as u32)) {
                            c.untouched += 1;
                            c.untouched_bad += u64::from(!right);
                        }
                    }
                }
            }
            Err(e) => {
                let f = std::fs::File::open(&path).map_err(|e| e.to_string())?;
                if HeaderSlots::read(&f, lay, hash).is_ok() {
                    c.refused_with_headers += 1;
                    if rep.refusals.len() < 8 {
                        rep.refusals.push(format!(
                            "{} ({}): {e}",
                            kind.name(),
                            if base.killed { "kill" } else { "clean" }
                        ));
                    }
                } else {
                    c.refused += 1;
                }
            }
        }
        if c.wrong > 0 {
            progress(&format!(
                "damage {} ({}, {}): {} units served wrong, ranges {:?}",
                i - 1,
                kind.name(),
                if base.killed { "kill" } else { "clean" },
                c.wrong,
                &d.ranges[..d.ranges.len().min(4)]
            ));
        }
        rep.row(base.killed, kind).add(&c);
        if i % 50 == 0 {
            progress(&format!("{i} damages done"));
        }
    }
    let _ = std::fs::remove_file(&path);
    Ok(rep)
}
