//! Named synthetic workloads standing in for the traces of the seed papers.
//!
//! The papers give each trace's read:write ratio and the WAF the baseline FTL
//! reached on it, but not the traces. A [`Profile`] reproduces the ratio
//! exactly and chooses a request-size mix and a hot/cold skew so that the
//! greedy baseline lands near the paper's WAF on a scaled-down copy of the
//! paper's drive (`docs/results.md` has the measured table). Read ratios are
//! the papers'; sizes and skews are chosen here, and each profile's
//! [`Profile::source`] says which is which.

use crate::copy_load::CopyLoad;
use crate::workload::{IdleModel, Pattern, SizeMix, SynthSpec};

/// A synthetic workload in user terms (KiB, percentages), independent of the
/// drive; [`WorkloadParams::resolve`] turns it into a [`SynthSpec`] for one.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadParams {
    /// Access pattern (hot/cold parameters included).
    pub pattern: Pattern,
    /// Percentage of reads.
    pub read_pct: u32,
    /// Request sizes in KiB with integer weights (at least one).
    pub sizes_kib: Vec<(u32, u32)>,
    /// Footprint in percent of the logical capacity.
    pub footprint_pct: f64,
    /// Number of requests (`None`: twice the logical capacity in smallest requests).
    pub requests: Option<u64>,
    /// Idle gaps between requests.
    pub idle: IdleModel,
    /// Workload seed (`None`: the configuration's `sim.seed`).
    pub seed: Option<u64>,
    /// Round sizes that are not whole mapping units up to whole units instead
    /// of refusing them (profiles on page-mapped drives, whose mapping unit is
    /// a whole flash page: a small write rewrites the whole unit; the merge
    /// read of its old contents is not modelled).
    pub round_up_sizes: bool,
    /// A copy workload ([`crate::copy_load`]) replaces the read/write
    /// generator: one-unit requests over the footprint; `read_pct`, sizes,
    /// pattern and idle gaps do not apply.
    pub copy: Option<CopyLoad>,
}

impl Default for WorkloadParams {
    /// 4 KiB uniform random writes over the whole logical space.
    fn default() -> Self {
        WorkloadParams {
            pattern: Pattern::Random,
            read_pct: 0,
            sizes_kib: vec![(4, 1)],
            footprint_pct: 100.0,
            requests: None,
            idle: IdleModel::None,
            seed: None,
            round_up_sizes: false,
            copy: None,
        }
    }
}

impl WorkloadParams {
    /// The generator spec for a drive with `unit_bytes` mapping units and
    /// `logical_units` of capacity. Errors name the offending option.
    pub fn resolve(
        &self,
        unit_bytes: u32,
        logical_units: u32,
        default_seed: u64,
    ) -> Result<SynthSpec, String> {
        if self.read_pct > 100 {
            return Err(format!("--read-pct: {} is not a percentage", self.read_pct));
        }
        let mut pairs = Vec::with_capacity(self.sizes_kib.len());
        for &(kib, w) in &self.sizes_kib {
            let bytes = u64::from(kib) * 1024;
            let whole = bytes % u64::from(unit_bytes) == 0;
            if kib == 0 || !(whole || self.round_up_sizes) {
                return Err(format!(
                    "--size-kib: {kib} KiB is not a positive multiple of the {unit_bytes}-byte mapping unit"
                ));
            }
            let units = u32::try_from(bytes.div_ceil(u64::from(unit_bytes))).unwrap_or(u32::MAX);
            if units > logical_units {
                return Err(format!(
                    "--size-kib: {kib} KiB is larger than the device ({logical_units} units)"
                ));
            }
            pairs.push((units, w));
        }
        let sizes = SizeMix::new(&pairs)
            .ok_or_else(|| "--size-kib: one to four sizes with a positive weight".to_string())?;
        let units = pairs.iter().map(|p| p.0).min().unwrap_or(1);
        if !(self.footprint_pct > 0.0 && self.footprint_pct <= 100.0) {
            return Err(format!(
                "--footprint-pct: {} must be in (0, 100]",
                self.footprint_pct
            ));
        }
        if let Pattern::HotCold {
            hot_access_pct,
            hot_space_pct,
        } = self.pattern
        {
            if hot_access_pct > 100 || hot_space_pct == 0 || hot_space_pct > 100 {
                return Err("--hot-access-pct and --hot-space-pct must be percentages".into());
            }
        }
        let largest = sizes.max_units().unwrap_or(units);
        let footprint_units =
            ((f64::from(logical_units) * self.footprint_pct / 100.0) as u32).max(largest);
        Ok(SynthSpec {
            pattern: self.pattern,
            read_pct: self.read_pct,
            units,
            requests: self
                .requests
                .unwrap_or(2 * u64::from(logical_units / units)),
            footprint_units,
            interarrival_ns: 0,
            seed: self.seed.unwrap_or(default_seed),
            sizes: if pairs.len() > 1 {
                sizes
            } else {
                SizeMix::default()
            },
            idle: self.idle,
        })
    }
}

/// Which paper a profile's figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paper {
    /// Seed 000 (rcFTL, DAC'18), Table 2 and Sec. 5.2.
    RcFtl,
    /// Seed 001 (dissertation) ch. 3 (longFTL), Table 5.
    LongFtl,
    /// Seed 003 (copyless copy) §III: the journaling and dedup use cases.
    Copyless,
}

/// A named workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// Name accepted by `--profile`.
    pub name: &'static str,
    /// One-line summary.
    pub description: &'static str,
    /// Where the figures come from; what was chosen here.
    pub source: &'static str,
    /// Paper whose table the profile reproduces.
    pub paper: Paper,
    /// Percentage of reads (from the paper).
    pub read_pct: u32,
    /// Request sizes in KiB with weights (chosen).
    pub sizes_kib: &'static [(u32, u32)],
    /// Percentage of requests aimed at the hot region; 0 = uniform (chosen).
    pub hot_access_pct: u32,
    /// Hot region in percent of the footprint (chosen).
    pub hot_space_pct: u32,
    /// Logical space the workload touches, in percent (chosen; the rest is
    /// cold data written only by preconditioning). Traces of a database or
    /// mail server touch a fraction of a drive, and this is the main knob
    /// that brings the baseline WAF to the paper's.
    pub footprint_pct: f64,
    /// Idle-gap model (the intensity mixes only).
    pub idle: IdleModel,
    /// Copy workload (the seed 003 profiles) instead of the synthetic
    /// read/write generator.
    pub copy: Option<CopyLoad>,
    /// WAF of the baseline FTL in the paper's table, when it gives one.
    pub paper_waf: Option<f64>,
}

impl Profile {
    /// The profile as workload parameters (every drive-independent default).
    pub fn params(&self) -> WorkloadParams {
        let pattern = if self.hot_access_pct == 0 {
            Pattern::Random
        } else {
            Pattern::HotCold {
                hot_access_pct: self.hot_access_pct,
                hot_space_pct: self.hot_space_pct,
            }
        };
        WorkloadParams {
            pattern,
            read_pct: self.read_pct,
            sizes_kib: self.sizes_kib.to_vec(),
            footprint_pct: self.footprint_pct,
            idle: self.idle,
            round_up_sizes: true,
            copy: self.copy,
            ..WorkloadParams::default()
        }
    }

    /// The preset the profile's WAF is calibrated on (scaled down, see
    /// [`calibration_sets`]).
    pub fn calibration_preset(&self) -> &'static str {
        match self.paper {
            Paper::RcFtl => "rcftl-dac18",
            Paper::LongFtl => "longftl-mqsim",
            Paper::Copyless => "default",
        }
    }
}

/// `--set`s that scale a calibration preset down so a preconditioned run
/// takes seconds: fewer channels, chips or planes, with the block size and
/// the blocks per plane kept (halved for longFTL) so that the spare space
/// beyond the GC reserve stays the paper drive's share.
pub fn calibration_sets(preset: &str) -> &'static [&'static str] {
    match preset {
        // The WAFs were calibrated with 4 KiB mapping units.
        "rcftl-dac18" | "rcftl-thesis" => &[
            "geometry.channels=2",
            "geometry.dies_per_channel=2",
            "ftl.mapping_unit_bytes=4096",
        ],
        "longftl-mqsim" => &[
            "geometry.channels=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=911",
        ],
        _ => &[],
    }
}

/// Idle gap of the intensity mixes (chosen): longer than the baseline needs
/// per 4-KiB write under GC on the scaled rcFTL drives (tens of us), so the
/// write buffer drains during an idle run, yet short enough that busy and
/// idle runs take comparable time and the drive's speed shows in the
/// throughput.
const INTENSITY_IDLE_NS: u64 = 100_000;

/// Requests per busy/idle period of the intensity mixes (chosen: the
/// shortest busy run, Low's 3000 4-KiB requests = 11.7 MiB, overflows the
/// papers' 10 MiB write buffer, so utilisation swings across the mode
/// selector's 50 % threshold).
const INTENSITY_PERIOD: u32 = 10_000;

const fn intensity(busy_pct: u32) -> IdleModel {
    IdleModel::Bursty {
        busy_pct,
        period: INTENSITY_PERIOD,
        idle_ns: INTENSITY_IDLE_NS,
    }
}

const RCFTL_SRC: &str =
    "Seed 000 Table 2 (read:write, WAF); sizes and skew chosen, footprint tuned to the WAF";
const LONGFTL_SRC: &str =
    "Seed 001 Table 5 (read:write, WAF); sizes and skew chosen, footprint tuned to the WAF";
const FIO_SRC: &str = "Seed 000 Sec. 5.2 / seed 001 Sec. 4.4.2 (share of requests without idle \
     time); 4 KiB uniform random writes, idle gap 100 us after completion, periods of 10000 \
     requests chosen";

static PROFILES: [Profile; 15] = [
    Profile {
        name: "oltp",
        description: "Sysbench OLTP: 70% reads, 4-16 KiB, skewed",
        source: RCFTL_SRC,
        paper: Paper::RcFtl,
        read_pct: 70,
        sizes_kib: &[(4, 2), (16, 8)],
        hot_access_pct: 90,
        hot_space_pct: 10,
        footprint_pct: 19.6,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(2.17),
    },
    Profile {
        name: "ntrx",
        description: "Sysbench non-transactional: 5% reads, 4-16 KiB, skewed",
        source: RCFTL_SRC,
        paper: Paper::RcFtl,
        read_pct: 5,
        sizes_kib: &[(4, 5), (16, 5)],
        hot_access_pct: 90,
        hot_space_pct: 10,
        footprint_pct: 19.6,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(2.11),
    },
    Profile {
        name: "fileserver",
        description: "Filebench fileserver: 40% reads, 4-128 KiB, weakly skewed",
        source: RCFTL_SRC,
        paper: Paper::RcFtl,
        read_pct: 40,
        sizes_kib: &[(4, 2), (16, 3), (64, 3), (128, 2)],
        hot_access_pct: 70,
        hot_space_pct: 30,
        footprint_pct: 38.1,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(3.08),
    },
    Profile {
        name: "varmail",
        description: "Filebench varmail: 40% reads, 4-16 KiB, strongly skewed",
        source: RCFTL_SRC,
        paper: Paper::RcFtl,
        read_pct: 40,
        sizes_kib: &[(4, 6), (16, 4)],
        hot_access_pct: 95,
        hot_space_pct: 5,
        footprint_pct: 19.6,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(1.8),
    },
    Profile {
        name: "high",
        description: "fio High intensity: 70% of requests without idle time",
        source: FIO_SRC,
        paper: Paper::RcFtl,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        hot_access_pct: 0,
        hot_space_pct: 100,
        footprint_pct: 100.0,
        idle: intensity(70),
        copy: None,
        paper_waf: None,
    },
    Profile {
        name: "mid",
        description: "fio Mid intensity: 50% of requests without idle time",
        source: FIO_SRC,
        paper: Paper::RcFtl,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        hot_access_pct: 0,
        hot_space_pct: 100,
        footprint_pct: 100.0,
        idle: intensity(50),
        copy: None,
        paper_waf: None,
    },
    Profile {
        name: "low",
        description: "fio Low intensity: 30% of requests without idle time",
        source: FIO_SRC,
        paper: Paper::RcFtl,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        hot_access_pct: 0,
        hot_space_pct: 100,
        footprint_pct: 100.0,
        idle: intensity(30),
        copy: None,
        paper_waf: None,
    },
    Profile {
        name: "proj0",
        description: "MSR proj0: 6% reads, mostly small writes, very skewed",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 6,
        sizes_kib: &[(4, 5), (8, 2), (64, 3)],
        hot_access_pct: 98,
        hot_space_pct: 2,
        footprint_pct: 35.0,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(1.08),
    },
    Profile {
        name: "prxy1",
        description: "MSR prxy1: 64% reads, 4-64 KiB, very skewed",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 64,
        sizes_kib: &[(4, 5), (16, 3), (64, 2)],
        hot_access_pct: 97,
        hot_space_pct: 3,
        footprint_pct: 27.4,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(1.16),
    },
    Profile {
        name: "prxy0",
        description: "MSR prxy0: 5% reads, 4-8 KiB writes, very skewed",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 5,
        sizes_kib: &[(4, 7), (8, 3)],
        hot_access_pct: 96,
        hot_space_pct: 4,
        footprint_pct: 22.7,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(1.24),
    },
    Profile {
        name: "src10",
        description: "MSR src1_0: 46% reads, 4-64 KiB, moderately skewed",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 46,
        sizes_kib: &[(4, 3), (16, 3), (64, 4)],
        hot_access_pct: 80,
        hot_space_pct: 20,
        footprint_pct: 42.8,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(2.66),
    },
    Profile {
        name: "proj2",
        description: "MSR proj2: 86% reads, 4-64 KiB, weakly skewed",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 86,
        sizes_kib: &[(4, 3), (16, 3), (64, 4)],
        hot_access_pct: 70,
        hot_space_pct: 30,
        footprint_pct: 64.5,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(3.55),
    },
    Profile {
        name: "oltp-longftl",
        description: "OLTP as in seed 001 Table 5: 70% reads, WAF target 1.89",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 70,
        sizes_kib: &[(4, 2), (16, 8)],
        hot_access_pct: 90,
        hot_space_pct: 10,
        footprint_pct: 27.4,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(1.89),
    },
    Profile {
        name: "fileserver-longftl",
        description: "Fileserver as in seed 001 Table 5: 40% reads, WAF target 2.49",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 40,
        sizes_kib: &[(4, 2), (16, 3), (64, 3), (128, 2)],
        hot_access_pct: 80,
        hot_space_pct: 20,
        footprint_pct: 38.1,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(2.49),
    },
    Profile {
        name: "varmail-longftl",
        description: "Varmail as in seed 001 Table 5: 40% reads, WAF target 2.98",
        source: LONGFTL_SRC,
        paper: Paper::LongFtl,
        read_pct: 40,
        sizes_kib: &[(4, 6), (16, 4)],
        hot_access_pct: 70,
        hot_space_pct: 30,
        footprint_pct: 50.5,
        idle: IdleModel::None,
        copy: None,
        paper_waf: Some(2.98),
    },
];

const COPY_SRC: &str = "Seed 003 Sec. III-A (SQLite undo log: old pages copied to the log before \
     the update, synchronous OFF) and III-B (CCAW: duplicate writes become copies, conversion \
     ratio 1 - 1/R); transaction size, log share and uniform addresses chosen";

/// Pages per journaled transaction (chosen: an insert into a B-tree leaf
/// with its parent and the database header, and a free-list page).
pub const JOURNAL_PAGES: u32 = 4;

/// Deduplication ratio of the `dedup` profile unless `--dedup-ratio` is given.
pub const DEDUP_DEFAULT_RATIO: f64 = 2.0;

/// The copy workloads of seed 003 (not part of the WAF calibration table).
static COPY_PROFILES: [Profile; 2] = [
    Profile {
        name: "journal",
        description: "Undo-log journaling: old pages copied to a log, then updated in place",
        source: COPY_SRC,
        paper: Paper::Copyless,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        hot_access_pct: 0,
        hot_space_pct: 100,
        footprint_pct: 50.0,
        idle: IdleModel::None,
        copy: Some(CopyLoad::Journal {
            pages: JOURNAL_PAGES,
        }),
        paper_waf: None,
    },
    Profile {
        name: "dedup",
        description:
            "CC-assisted writing: duplicate 4 KiB writes turned into copies (--dedup-ratio)",
        source: COPY_SRC,
        paper: Paper::Copyless,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        hot_access_pct: 0,
        hot_space_pct: 100,
        footprint_pct: 50.0,
        idle: IdleModel::None,
        copy: Some(CopyLoad::Dedup {
            ratio: DEDUP_DEFAULT_RATIO,
        }),
        paper_waf: None,
    },
];

/// Every profile of the WAF calibration table (seeds 000 and 001).
pub fn profiles() -> &'static [Profile] {
    &PROFILES
}

/// The copy workloads (seed 003).
pub fn copy_profiles() -> &'static [Profile] {
    &COPY_PROFILES
}

/// The profile called `name`; the error lists the known names.
pub fn profile(name: &str) -> Result<&'static Profile, String> {
    let all = || PROFILES.iter().chain(COPY_PROFILES.iter());
    all().find(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = all().map(|p| p.name).collect();
        format!(
            "--profile: unknown profile `{name}`; known profiles: {}",
            known.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_ratios_and_unique_names() {
        let ratio = |n: &str| profile(n).unwrap().read_pct;
        assert_eq!(ratio("oltp"), 70);
        assert_eq!(ratio("ntrx"), 5);
        assert_eq!(ratio("fileserver"), 40);
        assert_eq!(ratio("varmail"), 40);
        assert_eq!(ratio("proj0"), 6);
        assert_eq!(ratio("prxy1"), 64);
        assert_eq!(ratio("prxy0"), 5);
        assert_eq!(ratio("src10"), 46);
        assert_eq!(ratio("proj2"), 86);
        let mut names: Vec<&str> = profiles().iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), profiles().len());
        assert!(profile("nope").unwrap_err().contains("oltp"));
    }

    #[test]
    fn intensity_mixes_busy_shares() {
        for (name, busy) in [("high", 70), ("mid", 50), ("low", 30)] {
            match profile(name).unwrap().idle {
                IdleModel::Bursty { busy_pct, .. } => assert_eq!(busy_pct, busy, "{name}"),
                IdleModel::None => panic!("{name} has no idle model"),
            }
        }
    }

    #[test]
    fn resolve_converts_sizes_and_rejects_bad_input() {
        let p = profile("fileserver").unwrap().params();
        let s = p.resolve(4096, 100_000, 9).unwrap();
        assert_eq!(s.units, 1);
        assert_eq!(s.sizes.max_units(), Some(32));
        assert_eq!(s.seed, 9);
        assert_eq!(s.requests, 200_000);
        let bad = WorkloadParams {
            sizes_kib: vec![(6, 1)],
            ..WorkloadParams::default()
        };
        assert!(bad
            .resolve(4096, 1000, 1)
            .unwrap_err()
            .contains("--size-kib"));
        let bad = WorkloadParams {
            footprint_pct: 0.0,
            ..WorkloadParams::default()
        };
        assert!(bad.resolve(4096, 1000, 1).is_err());
    }
}
