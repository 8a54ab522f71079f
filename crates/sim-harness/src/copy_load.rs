//! Workloads that issue copy requests (seed 003 §III): undo-log journaling
//! and copy-assisted writing of duplicate data.
//!
//! * [`Journal`]: an SQLite-like undo log. The footprint is split into a
//!   data area (7/8) and a circular log area (1/8). A transaction updates
//!   `pages` random one-unit pages of the data area: first every old page is
//!   copied into the log (the copies seed 003 turns into remaps), then a
//!   header unit with the page numbers is written to the log, then the pages
//!   are overwritten in place. Synchronous mode is OFF (no flushes), as in
//!   the experiment where copyless copy gained most.
//! * [`Dedup`]: CC-assisted writing (CCAW). One-unit writes to random units
//!   of the footprint; a share `1 - 1/R` of them (the conversion ratio, R the
//!   deduplication ratio) carry content already on the drive. The host keeps
//!   a signature table (content to units holding it, and unit to content);
//!   a duplicate write becomes a copy from a unit that holds the content.
//!   As in the paper, the destination leaves the table before the copy and
//!   joins it after.
//!
//! Both are lazy [`RequestSource`]s with a fixed seed, like
//! [`crate::workload::Synth`].

use std::collections::HashMap;

use crate::workload::{HostOp, HostRequest, RequestSource, Rng};

/// Which copy workload, with its parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CopyLoad {
    /// Undo-log journaling: pages updated per transaction.
    Journal {
        /// Data pages (one unit each) a transaction updates.
        pages: u32,
    },
    /// Copy-assisted writing: deduplication ratio R >= 1 (conversion ratio
    /// `1 - 1/R`).
    Dedup {
        /// Deduplication ratio.
        ratio: f64,
    },
    /// Copy-assisted writing or host-side deduplication with user writes
    /// grouped into windows and flushed per window
    /// ([`crate::dedup_window`]).
    Windowed {
        /// CCAW or DEDUP.
        scheme: crate::dedup_window::Scheme,
        /// Deduplication ratio.
        ratio: f64,
        /// User writes per window.
        window: u32,
    },
}

/// Bytes the [`Dedup`] generator allocates per unit of its footprint up
/// front: the unit's signature (8 B) and its index position (4 B).
pub const DEDUP_UNIT_BYTES: u64 = 8 + 4;

/// Most bytes the [`Dedup`] generator adds per unit it writes: its entry
/// in the list of known units (4 B, the growable list counted twice), and
/// its share of the signature table at worst (one signature per unit: a
/// 33-byte bucket, the table at most 7/8 full and doubling, old and new
/// held while it grows, and a list of at least four units with its
/// allocation overhead).
pub const DEDUP_WRITTEN_BYTES: u64 = 8 + 33 * 8 / 7 * 3 + 32;

/// Most bytes the DEDUP host of [`crate::dedup_window`] keeps per unit of
/// its data area (map, reference count, free list, signature).
pub const WINDOW_UNIT_BYTES: u64 = 4 + 4 + 4 + 8;

/// Most bytes a window keeps per user write: its writes, the device
/// requests queued for it (data, metadata and flushes, in a growable
/// queue) and the metadata blocks it dirties (a tree node each).
pub const WINDOW_WRITE_BYTES: u64 = 8 * std::mem::size_of::<HostRequest>() as u64 + 5 * 48;

impl CopyLoad {
    /// Most bytes the generator of [`CopyLoad::source`] allocates over
    /// `footprint` units and `requests` requests: what a memory limit must
    /// count beside the drive.
    pub fn worst_case_bytes(self, footprint: u32, requests: u64) -> u64 {
        let dedup = |units: u64| {
            units * DEDUP_UNIT_BYTES + units.min(requests).saturating_mul(DEDUP_WRITTEN_BYTES)
        };
        let units = u64::from(footprint);
        match self {
            CopyLoad::Journal { pages } => 8 * u64::from(pages),
            CopyLoad::Dedup { .. } => dedup(units),
            CopyLoad::Windowed { scheme, window, .. } => {
                // Both schemes generate over the user space (7/8); DEDUP
                // adds its tables over the user space and a window more.
                let user = units - units / 8;
                let window = u64::from(window).min(requests.max(1));
                let tables = match scheme {
                    crate::dedup_window::Scheme::Ccaw => 0,
                    crate::dedup_window::Scheme::Dedup(_) => (user + window) * WINDOW_UNIT_BYTES,
                };
                dedup(user) + tables + window * WINDOW_WRITE_BYTES
            }
        }
    }

    /// The generator for a footprint of `footprint` units (from unit 0),
    /// `requests` requests and `seed`.
    pub fn source(
        self,
        footprint: u32,
        requests: u64,
        seed: u64,
    ) -> Result<Box<dyn RequestSource>, String> {
        match self {
            CopyLoad::Journal { pages } => {
                Ok(Box::new(Journal::new(footprint, pages, requests, seed)?))
            }
            CopyLoad::Dedup { ratio } => {
                Ok(Box::new(Dedup::new(footprint, ratio, requests, seed)?))
            }
            CopyLoad::Windowed {
                scheme,
                ratio,
                window,
            } => Ok(Box::new(crate::dedup_window::Windowed::new(
                scheme, footprint, ratio, window, requests, seed,
            )?)),
        }
    }
}

fn req(op: HostOp, lpn: u32) -> HostRequest {
    HostRequest {
        time_ns: 0,
        op,
        lpn,
        units: 1,
        idle_ns: 0,
        window: 0,
        placement: 0,
    }
}

/// Undo-log journaling (see the module docs).
pub struct Journal {
    data_units: u32,
    log_start: u32,
    log_units: u32,
    log_pos: u32,
    pages: u32,
    rng: Rng,
    requests: u64,
    issued: u64,
    /// The current transaction's pages, and the step within it.
    txn: Vec<u32>,
    step: u32,
}

impl Journal {
    /// A journal over `footprint` units with `pages` pages per transaction.
    pub fn new(footprint: u32, pages: u32, requests: u64, seed: u64) -> Result<Self, String> {
        let log_units = footprint / 8;
        let pages = pages.max(1);
        if log_units < pages + 1 || footprint < 16 {
            return Err(format!(
                "journal: footprint of {footprint} units too small for {pages} pages per transaction"
            ));
        }
        Ok(Journal {
            data_units: footprint - log_units,
            log_start: footprint - log_units,
            log_units,
            log_pos: 0,
            pages,
            rng: Rng::new(seed),
            requests,
            issued: 0,
            txn: Vec::new(),
            step: 0,
        })
    }

    /// Next log unit (circular).
    fn log_unit(&mut self) -> u32 {
        let u = self.log_start + self.log_pos;
        self.log_pos = (self.log_pos + 1) % self.log_units;
        u
    }
}

impl RequestSource for Journal {
    fn next_request(&mut self) -> Option<HostRequest> {
        if self.issued >= self.requests {
            return None;
        }
        if self.step == 0 {
            self.txn.clear();
            while (self.txn.len() as u32) < self.pages {
                let p = self.rng.below(u64::from(self.data_units)) as u32;
                if !self.txn.contains(&p) {
                    self.txn.push(p);
                }
            }
        }
        let k = self.pages;
        let s = self.step;
        let r = if s < k {
            // Old page into the log.
            let src = self.txn[s as usize];
            let dst = self.log_unit();
            req(HostOp::Copy { src }, dst)
        } else if s == k {
            // Log header: page numbers and checksums.
            let dst = self.log_unit();
            req(HostOp::Write, dst)
        } else {
            req(HostOp::Write, self.txn[(s - k - 1) as usize])
        };
        self.step = (s + 1) % (2 * k + 1);
        self.issued += 1;
        Some(r)
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.requests)
    }
}

/// Copy-assisted writing over a host signature table (see the module docs).
pub struct Dedup {
    footprint: u32,
    /// Probability (out of 2^32) that a write duplicates existing content.
    conversion: u64,
    rng: Rng,
    requests: u64,
    issued: u64,
    next_sig: u64,
    /// Content signature of every unit (0: none known).
    sig_of: Vec<u64>,
    /// Units holding each signature.
    units_of: HashMap<u64, Vec<u32>>,
    /// Units with a known signature, and each unit's index there (`u32::MAX`
    /// when absent), so a random unit on the drive is one draw.
    known: Vec<u32>,
    known_at: Vec<u32>,
    /// Copies issued (for tests and reports).
    pub copies: u64,
}

impl Dedup {
    /// Writes over `footprint` units with deduplication ratio `ratio`.
    pub fn new(footprint: u32, ratio: f64, requests: u64, seed: u64) -> Result<Self, String> {
        if !(ratio.is_finite() && ratio >= 1.0) {
            return Err(format!("--dedup-ratio: {ratio} must be at least 1"));
        }
        if footprint < 2 {
            return Err("dedup: footprint of fewer than 2 units".into());
        }
        let conversion = 1.0 - 1.0 / ratio;
        Ok(Dedup {
            footprint,
            conversion: (conversion * 4_294_967_296.0) as u64,
            rng: Rng::new(seed),
            requests,
            issued: 0,
            next_sig: 1,
            sig_of: vec![0; footprint as usize],
            units_of: HashMap::new(),
            known: Vec::new(),
            known_at: vec![u32::MAX; footprint as usize],
            copies: 0,
        })
    }

    /// Content signature of user `unit` (0: never written).
    pub(crate) fn signature(&self, unit: u32) -> u64 {
        self.sig_of.get(unit as usize).copied().unwrap_or(0)
    }

    /// The conversion ratio `1 - 1/R` this generator aims at.
    pub fn conversion_ratio(&self) -> f64 {
        self.conversion as f64 / 4_294_967_296.0
    }

    fn forget(&mut self, unit: u32) {
        let at = std::mem::replace(&mut self.known_at[unit as usize], u32::MAX);
        if at != u32::MAX {
            self.known.swap_remove(at as usize);
            if let Some(&moved) = self.known.get(at as usize) {
                self.known_at[moved as usize] = at;
            }
        }
        let s = std::mem::take(&mut self.sig_of[unit as usize]);
        if s != 0 {
            if let Some(v) = self.units_of.get_mut(&s) {
                v.retain(|&u| u != unit);
                if v.is_empty() {
                    self.units_of.remove(&s);
                }
            }
        }
    }

    fn learn(&mut self, unit: u32, sig: u64) {
        self.known_at[unit as usize] = self.known.len() as u32;
        self.known.push(unit);
        self.sig_of[unit as usize] = sig;
        self.units_of.entry(sig).or_default().push(unit);
    }

    /// A unit holding content already on the drive, other than `dst`: the
    /// content of a random unit the host wrote, looked up in the signature
    /// table.
    fn duplicate_source(&mut self, dst: u32) -> Option<u32> {
        for _ in 0..8 {
            if self.known.is_empty() {
                return None;
            }
            let probe = self.known[self.rng.below(self.known.len() as u64) as usize];
            let sig = self.sig_of[probe as usize];
            if sig == 0 {
                continue;
            }
            let holders = self.units_of.get(&sig)?;
            let pick = holders[self.rng.below(holders.len() as u64) as usize];
            if pick != dst {
                return Some(pick);
            }
        }
        None
    }
}

impl RequestSource for Dedup {
    fn next_request(&mut self) -> Option<HostRequest> {
        if self.issued >= self.requests {
            return None;
        }
        self.issued += 1;
        let dst = self.rng.below(u64::from(self.footprint)) as u32;
        let duplicate = (self.rng.next_u64() >> 32) < self.conversion;
        let src = if duplicate {
            self.duplicate_source(dst)
        } else {
            None
        };
        self.forget(dst);
        Some(match src {
            Some(src) => {
                let sig = self.sig_of[src as usize];
                self.learn(dst, sig);
                self.copies += 1;
                req(HostOp::Copy { src }, dst)
            }
            None => {
                let sig = self.next_sig;
                self.next_sig += 1;
                self.learn(dst, sig);
                req(HostOp::Write, dst)
            }
        })
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_copies_old_pages_before_overwriting_them() {
        let mut j = Journal::new(800, 3, 70, 5).unwrap();
        let reqs: Vec<HostRequest> = std::iter::from_fn(|| j.next_request()).collect();
        assert_eq!(reqs.len(), 70);
        for t in reqs.chunks(7).filter(|c| c.len() == 7) {
            let srcs: Vec<u32> = t[..3]
                .iter()
                .map(|r| match r.op {
                    HostOp::Copy { src } => {
                        assert!(r.lpn >= 700 && src < 700);
                        src
                    }
                    op => panic!("expected a copy, got {op:?}"),
                })
                .collect();
            assert_eq!(t[3].op, HostOp::Write);
            assert!(t[3].lpn >= 700);
            let written: Vec<u32> = t[4..].iter().map(|r| r.lpn).collect();
            assert_eq!(srcs, written);
        }
    }

    #[test]
    fn dedup_converts_the_asked_share_and_the_table_stays_true() {
        for ratio in [1.0, 2.0, 4.0, 8.0] {
            let mut d = Dedup::new(5000, ratio, 40_000, 9).unwrap();
            // Content model: what each unit holds, by the generator's own
            // requests; every copy source must hold the content it claims.
            let mut held = vec![0u64; 5000];
            let mut fresh = 1u64;
            let mut copies = 0u64;
            while let Some(r) = d.next_request() {
                match r.op {
                    HostOp::Copy { src } => {
                        assert_ne!(src, r.lpn);
                        assert_ne!(held[src as usize], 0);
                        held[r.lpn as usize] = held[src as usize];
                        copies += 1;
                    }
                    HostOp::Write => {
                        held[r.lpn as usize] = fresh;
                        fresh += 1;
                    }
                    op => panic!("{op:?}"),
                }
                assert_eq!(held[r.lpn as usize], d.sig_of[r.lpn as usize]);
            }
            let share = copies as f64 / 40_000.0;
            let want = 1.0 - 1.0 / ratio;
            assert!(
                (share - want).abs() < 0.01,
                "ratio {ratio}: {share} vs {want}"
            );
        }
        assert!(Dedup::new(100, 0.5, 1, 1).is_err());
    }
}
