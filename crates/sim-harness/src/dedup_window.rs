//! Seed 003 §IV, Figs. 4-5: copy-assisted writing (CCAW) against host-side
//! deduplication (DEDUP), with user writes grouped into windows.
//!
//! Both schemes see the same user writes: the [`Dedup`] generator's stream
//! of one-unit writes over the user space, a share `1 - 1/R` of them
//! carrying content already on the drive. Writes are grouped into windows
//! of `window` user writes; the host works on one window at a time, and a
//! window's writes complete together when its last flush does. The engine
//! records each window's duration once per user write
//! ([`HostRequest::window`]), the latency of the paper's Fig. 5 (from a
//! request entering its window to its service completion).
//!
//! * **CCAW**: a duplicate becomes a copy command, anything else a write;
//!   after the window's requests complete, one flush (the paper adds it
//!   "for a fair comparison").
//! * **DEDUP**, after OrderMergeDedup: the host keeps its own indirection
//!   (user block to disk block), a reference count per disk block and the
//!   fingerprints. A duplicate issues no device request, only metadata; new
//!   content goes to a free disk block (never in place, so a crash leaves
//!   the old mapping valid), and a disk block freed in a window is reused
//!   only after that window's metadata is durable. Per window: the data
//!   writes, a flush (data before metadata; skipped when the window wrote
//!   no data), the metadata, a flush. Two metadata layouts ([`MetaLayout`])
//!   bound what DEDUP pays:
//!   - `log`: [`DEDUP_RECORD_BYTES`]-byte records (user block, disk block
//!     and the two reference-count changes) packed into 4 KiB blocks
//!     appended to a circular log, the cheapest persistent form (no
//!     checkpoint of the tables is modelled, which favours DEDUP);
//!   - `table`: OrderMergeDedup's on-disk tables, updated in place with the
//!     updates of a window merged per block: the user-to-disk map (4 B per
//!     user block), the reference counts (4 B per disk block) and the
//!     fingerprint index ([`FINGERPRINT_ENTRY_BYTES`] per entry, hashed to
//!     its block); every block a window dirties is written once.
//!
//! Every device request that starts a new phase of a window (data,
//! metadata, flush, the next window) waits until every earlier request has
//! completed (an `idle_ns` of 1 ns), as the host waits for a flush before
//! depending on it.

use std::collections::VecDeque;

use serde_json::{json, Value};

use crate::copy_load::Dedup;
use crate::workload::{HostOp, HostRequest, RequestSource};

/// Bytes of one DEDUP metadata record: user block and disk block (4 B
/// each) and two reference-count changes (disk block and delta, 12 B each).
pub const DEDUP_RECORD_BYTES: u32 = 32;

/// Bytes of a DEDUP metadata block (the paper's 4 KiB block).
const META_BLOCK_BYTES: u32 = 4096;

/// Bytes of a fingerprint-index entry of the `table` layout: a 128-bit MD5
/// and a 4-byte disk block.
pub const FINGERPRINT_ENTRY_BYTES: u32 = 20;

/// Map or reference-count entries per metadata block of the `table` layout.
const TABLE_ENTRIES_PER_BLOCK: u32 = META_BLOCK_BYTES / 4;

/// How DEDUP persists its metadata (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaLayout {
    /// Records appended to a log.
    Log,
    /// Tables updated in place, updates merged per block per window.
    Table,
}

impl MetaLayout {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            MetaLayout::Log => "log",
            MetaLayout::Table => "table",
        }
    }
}

/// Which host scheme groups the user writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Copy-assisted writing: duplicates become copy commands.
    Ccaw,
    /// Host-side deduplication with its own metadata (OrderMergeDedup).
    Dedup(MetaLayout),
}

impl Scheme {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Ccaw => "ccaw",
            Scheme::Dedup(MetaLayout::Log) => "dedup",
            Scheme::Dedup(MetaLayout::Table) => "dedup-table",
        }
    }
}

/// Counters of what the host did, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowCounts {
    /// User writes grouped into windows.
    pub user_writes: u64,
    /// User writes that duplicated content (copies under CCAW, metadata
    /// only under DEDUP).
    pub duplicates: u64,
    /// Data writes sent to the device.
    pub data_writes: u64,
    /// Metadata blocks written (DEDUP).
    pub metadata_writes: u64,
    /// Flushes issued.
    pub flushes: u64,
    /// Windows.
    pub windows: u64,
}

/// The request stream of one scheme (see the module docs).
pub struct Windowed {
    scheme: Scheme,
    window: u32,
    users: Dedup,
    queue: VecDeque<HostRequest>,
    /// DEDUP: disk block of each user block (`u32::MAX`: none).
    map: Vec<u32>,
    /// DEDUP: reference count of each disk block of the data area.
    refs: Vec<u32>,
    /// DEDUP: disk blocks free for new content.
    free: Vec<u32>,
    /// DEDUP: disk blocks freed in the open window (free after its metadata).
    freed: Vec<u32>,
    /// DEDUP: content signature of each disk block (`table` layout).
    disk_sig: Vec<u64>,
    /// DEDUP `table`: metadata blocks the open window dirtied (offsets in
    /// the metadata area).
    dirty: std::collections::BTreeSet<u32>,
    /// DEDUP `table`: first block of the reference counts and of the
    /// fingerprint index, and the index's blocks.
    ref_base: u32,
    fp_base: u32,
    fp_blocks: u32,
    log_start: u32,
    log_units: u32,
    log_pos: u32,
    /// What the host did.
    pub counts: WindowCounts,
}

fn device(op: HostOp, lpn: u32, barrier: bool) -> HostRequest {
    HostRequest {
        time_ns: 0,
        op,
        lpn,
        units: 1,
        idle_ns: u64::from(barrier),
        placement: 0,
        window: 0,
    }
}

impl Windowed {
    /// `requests` user writes over a footprint of `footprint` units from
    /// unit 0, deduplication ratio `ratio`, windows of `window` user
    /// writes. The user space is the first 7/8 of the footprint under both
    /// schemes, so they write the same blocks; DEDUP keeps its spare data
    /// blocks and its metadata log in the last 1/8.
    pub fn new(
        scheme: Scheme,
        footprint: u32,
        ratio: f64,
        window: u32,
        requests: u64,
        seed: u64,
    ) -> Result<Self, String> {
        if window == 0 {
            return Err("--window: must be at least 1".into());
        }
        let user = footprint - footprint / 8;
        // DEDUP's data area: every user block plus the blocks a window may
        // free before they can be reused.
        let data = user.saturating_add(window);
        let log_units = footprint.saturating_sub(data);
        let ref_base = user.div_ceil(TABLE_ENTRIES_PER_BLOCK);
        let fp_base = ref_base + data.div_ceil(TABLE_ENTRIES_PER_BLOCK);
        let fp_blocks = data.div_ceil(META_BLOCK_BYTES / FINGERPRINT_ENTRY_BYTES);
        let need = match scheme {
            Scheme::Ccaw => 0,
            Scheme::Dedup(MetaLayout::Log) => window
                .div_ceil(META_BLOCK_BYTES / DEDUP_RECORD_BYTES)
                .saturating_mul(2),
            Scheme::Dedup(MetaLayout::Table) => fp_base.saturating_add(fp_blocks),
        };
        if log_units < need.max(1) && scheme != Scheme::Ccaw {
            return Err(format!(
                "dedup: footprint of {footprint} units leaves no room for windows of {window} \
                 writes and their metadata log"
            ));
        }
        let users = Dedup::new(user, ratio, requests, seed)?;
        let (map, refs, free, disk_sig) = match scheme {
            Scheme::Ccaw => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            Scheme::Dedup(_) => (
                vec![u32::MAX; user as usize],
                vec![0; data as usize],
                (0..data).rev().collect(),
                vec![0; data as usize],
            ),
        };
        Ok(Windowed {
            scheme,
            window,
            users,
            queue: VecDeque::new(),
            map,
            refs,
            free,
            freed: Vec::new(),
            disk_sig,
            dirty: std::collections::BTreeSet::new(),
            ref_base,
            fp_base,
            fp_blocks,
            log_start: data,
            log_units,
            log_pos: 0,
            counts: WindowCounts::default(),
        })
    }

    /// The next window's device requests, or false at the end.
    fn fill(&mut self) -> bool {
        let mut writes = Vec::new();
        while (writes.len() as u32) < self.window {
            match self.users.next_request() {
                Some(r) => writes.push(r),
                None => break,
            }
        }
        let n = writes.len() as u32;
        if n == 0 {
            return false;
        }
        self.counts.user_writes += u64::from(n);
        self.counts.windows += 1;
        match self.scheme {
            Scheme::Ccaw => self.ccaw(&writes),
            Scheme::Dedup(layout) => self.dedup(&writes, layout),
        }
        self.counts.flushes += 1;
        self.queue.push_back(HostRequest {
            window: n,
            ..device(HostOp::Flush, 0, true)
        });
        true
    }

    fn ccaw(&mut self, writes: &[HostRequest]) {
        for (i, w) in writes.iter().enumerate() {
            if matches!(w.op, HostOp::Copy { .. }) {
                self.counts.duplicates += 1;
            } else {
                self.counts.data_writes += 1;
            }
            self.queue.push_back(device(w.op, w.lpn, i == 0));
        }
    }

    /// Drops one reference to disk block `d`; a block left unreferenced is
    /// free once this window's metadata is durable.
    fn unref(&mut self, d: u32) {
        self.touch(self.ref_base + d / TABLE_ENTRIES_PER_BLOCK);
        if let Some(r) = self.refs.get_mut(d as usize) {
            *r = r.saturating_sub(1);
            if *r == 0 {
                self.freed.push(d);
                // The content leaves the fingerprint index.
                let sig = self.disk_sig.get(d as usize).copied().unwrap_or(0);
                self.touch(self.fingerprint_block(sig));
            }
        }
    }

    /// The `table` layout's metadata block `b` changes in this window (the
    /// log layout keeps no such set).
    fn touch(&mut self, b: u32) {
        if self.scheme == Scheme::Dedup(MetaLayout::Table) {
            self.dirty.insert(b);
        }
    }

    /// The fingerprint-index block of content `sig` (a hash of it).
    fn fingerprint_block(&self, sig: u64) -> u32 {
        let h = sig.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        self.fp_base + (h % u64::from(self.fp_blocks.max(1))) as u32
    }

    fn dedup(&mut self, writes: &[HostRequest], layout: MetaLayout) {
        let mut data = 0u32;
        for w in writes {
            self.touch(w.lpn / TABLE_ENTRIES_PER_BLOCK);
            let old = self.map[w.lpn as usize];
            let disk = match w.op {
                HostOp::Copy { src } => {
                    self.counts.duplicates += 1;
                    self.map[src as usize]
                }
                _ => {
                    // Free blocks never run out: the data area holds every
                    // user block plus a window's worth of frees.
                    let d = self.free.pop().unwrap_or(old);
                    self.queue.push_back(device(HostOp::Write, d, data == 0));
                    data += 1;
                    let sig = self.users.signature(w.lpn);
                    if let Some(s) = self.disk_sig.get_mut(d as usize) {
                        *s = sig;
                    }
                    self.touch(self.fingerprint_block(sig));
                    d
                }
            };
            self.touch(self.ref_base + disk / TABLE_ENTRIES_PER_BLOCK);
            if let Some(r) = self.refs.get_mut(disk as usize) {
                *r += 1;
            }
            self.map[w.lpn as usize] = disk;
            if old != u32::MAX {
                self.unref(old);
            }
        }
        self.counts.data_writes += u64::from(data);
        if data > 0 {
            self.counts.flushes += 1;
            self.queue.push_back(device(HostOp::Flush, 0, true));
        }
        let dirty = std::mem::take(&mut self.dirty);
        let blocks = match layout {
            MetaLayout::Log => {
                let per_block = META_BLOCK_BYTES / DEDUP_RECORD_BYTES;
                let blocks = (writes.len() as u32).div_ceil(per_block);
                for i in 0..blocks {
                    let unit = self.log_start + self.log_pos;
                    self.log_pos = (self.log_pos + 1) % self.log_units;
                    self.queue.push_back(device(HostOp::Write, unit, i == 0));
                }
                blocks
            }
            MetaLayout::Table => {
                for (i, b) in dirty.iter().enumerate() {
                    self.queue
                        .push_back(device(HostOp::Write, self.log_start + b, i == 0));
                }
                dirty.len() as u32
            }
        };
        self.counts.metadata_writes += u64::from(blocks);
        // The window's metadata is durable at its last flush: from then on
        // its freed blocks may take new content.
        self.free.append(&mut self.freed);
    }

    /// The host's counters as JSON (`window.host` in the report).
    pub fn summary(&self) -> Value {
        let c = self.counts;
        json!({
            "scheme": self.scheme.name(),
            "window": self.window,
            "user_writes": c.user_writes,
            "duplicates": c.duplicates,
            "data_writes": c.data_writes,
            "metadata_writes": c.metadata_writes,
            "flushes": c.flushes,
            "windows": c.windows,
            "metadata_record_bytes": DEDUP_RECORD_BYTES,
        })
    }
}

impl RequestSource for Windowed {
    fn next_request(&mut self) -> Option<HostRequest> {
        if self.queue.is_empty() && !self.fill() {
            return None;
        }
        self.queue.pop_front()
    }

    fn len_hint(&self) -> Option<u64> {
        // Device requests per user write, roughly: one, plus the flushes.
        self.users
            .len_hint()
            .map(|n| n + n.div_ceil(u64::from(self.window)))
    }

    fn summary(&self) -> Option<Value> {
        Some(Windowed::summary(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(w: &mut Windowed) -> Vec<HostRequest> {
        std::iter::from_fn(|| w.next_request()).collect()
    }

    #[test]
    fn ccaw_windows_end_in_one_flush_that_closes_them() {
        let mut w = Windowed::new(Scheme::Ccaw, 8000, 2.0, 10, 95, 3).unwrap();
        let reqs = all(&mut w);
        let closes: Vec<&HostRequest> = reqs.iter().filter(|r| r.window > 0).collect();
        assert_eq!(closes.len(), 10);
        assert_eq!(closes.iter().map(|r| r.window).sum::<u32>(), 95);
        assert!(closes
            .iter()
            .all(|r| r.op == HostOp::Flush && r.idle_ns == 1));
        // Each window: its user writes, then its flush; the first write waits.
        let mut i = 0;
        for c in &closes {
            let n = c.window as usize;
            assert_eq!(reqs[i].idle_ns, 1);
            assert!(reqs[i..i + n]
                .iter()
                .all(|r| matches!(r.op, HostOp::Write | HostOp::Copy { .. }) && r.window == 0));
            i += n + 1;
        }
        assert_eq!(i, reqs.len());
        assert_eq!(w.counts.duplicates + w.counts.data_writes, 95);
        assert!(w.counts.duplicates > 20);
    }

    /// Replays a DEDUP stream on a content model of the disk: no data write
    /// lands on a block that the durable metadata (as of the last closed
    /// window) still maps, the metadata log gets one block per 128 user
    /// writes of a window, and at the end every user block's disk block
    /// holds its content and the reference counts are true.
    #[test]
    fn dedup_keeps_its_map_true_and_never_overwrites_live_data() {
        for (window, layout) in [1, 10, 100, 300]
            .into_iter()
            .flat_map(|w| [(w, MetaLayout::Log), (w, MetaLayout::Table)])
        {
            let scheme = Scheme::Dedup(layout);
            let mut w = Windowed::new(scheme, 8000, 2.0, window, 3000, 5).unwrap();
            let data_area = 7000 + window;
            // The same user stream, to know each write's content.
            let mut users = Dedup::new(7000, 2.0, 3000, 5).unwrap();
            let mut content = vec![0u64; 7000];
            let mut disk = vec![0u64; data_area as usize];
            let mut fresh = 1u64;
            let mut durable: Vec<u32> = w.map.clone();
            let mut pending: Vec<u32> = Vec::new();
            let (mut data, mut meta, mut windows) = (0u64, 0u64, 0u64);
            while let Some(q) = w.next_request() {
                match q.op {
                    HostOp::Write if q.lpn < data_area => {
                        assert!(
                            !durable.contains(&q.lpn),
                            "window {window}: live block {}",
                            q.lpn
                        );
                        pending.push(q.lpn);
                    }
                    HostOp::Write => {
                        assert!(q.lpn < 8000);
                        meta += 1;
                    }
                    HostOp::Flush if q.window > 0 => {
                        // Apply the window's user writes in order.
                        let mut k = 0;
                        for _ in 0..q.window {
                            let u = users.next_request().unwrap();
                            if let HostOp::Copy { src } = u.op {
                                content[u.lpn as usize] = content[src as usize];
                            } else {
                                disk[pending[k] as usize] = fresh;
                                content[u.lpn as usize] = fresh;
                                fresh += 1;
                                k += 1;
                            }
                        }
                        assert_eq!(k, pending.len());
                        data += k as u64;
                        pending.clear();
                        windows += 1;
                        durable = w.map.clone();
                    }
                    HostOp::Flush => {}
                    op => panic!("unexpected {op:?}"),
                }
            }
            assert_eq!(windows, w.counts.windows);
            assert_eq!(data, w.counts.data_writes);
            assert_eq!(meta, w.counts.metadata_writes);
            match layout {
                MetaLayout::Log => {
                    assert_eq!(meta, windows * u64::from(window.div_ceil(128)))
                }
                // At least the map block of every user write's block, at
                // most the map, two counts and two index blocks of each.
                MetaLayout::Table => {
                    assert!(meta >= windows && meta <= 5 * 3000, "{meta}")
                }
            }
            assert!(w.counts.duplicates > 1000);
            let mut count = vec![0u32; w.refs.len()];
            for (b, &d) in w.map.iter().enumerate() {
                if content[b] != 0 {
                    assert_eq!(disk[d as usize], content[b], "window {window} block {b}");
                    count[d as usize] += 1;
                }
            }
            assert_eq!(count, w.refs);
        }
    }
}
