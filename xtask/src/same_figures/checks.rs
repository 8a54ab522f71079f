//! The commands `cargo xtask same-figures` runs with both binaries: the
//! runs the core's restructuring must leave identical, and one small run
//! per technique so every technique's data path is exercised.

/// One command run with both binaries.
pub struct Check {
    /// Name printed and matched by `--only`.
    pub name: &'static str,
    /// Arguments of `ftl` (each prints one JSON object on stdout).
    pub args: &'static [&'static str],
    /// The command needs `--out DIR` (experiments); a fresh directory per
    /// binary is appended.
    pub out: bool,
}

/// The name of the timed run of `--speed`.
pub const SPEED_CHECK: &str = "mqsim-gc16";

/// Every check, cheapest first within each kind.
pub const CHECKS: &[Check] = &[
    Check {
        name: "replay",
        args: &["replay", "--json"],
        out: false,
    },
    Check {
        name: SPEED_CHECK,
        args: &[
            "synth",
            "--preset",
            "mqsim-gc16",
            "--pattern",
            "random",
            "--read-pct",
            "0",
            "--size-kib",
            "4",
            "--requests",
            "7801404",
            "--qd",
            "16",
            "--json",
        ],
        out: false,
    },
    Check {
        name: "crash",
        args: &["crash", "--cuts", "2000", "--seed", "7", "--json"],
        out: false,
    },
    Check {
        // Copies remapped by the core (copyless copy) under power cuts.
        name: "crash-copy-remap",
        args: &[
            "crash",
            "--cuts",
            "100",
            "--seed",
            "3",
            "--copy-share",
            "0.2",
            "--set",
            "copy.mode=remap",
            "--json",
        ],
        out: false,
    },
    Check {
        // Dawid: LIDF flushing with 5 % of the translation pages protected.
        name: "crash-dawid-lidf",
        args: &[
            "crash",
            "--preset",
            "dawid-femu",
            "--set",
            "buffer.map_protect_ratio=0.05",
            "--set",
            "buffer.flush_policy=lidf",
            "--set",
            "geometry.channels=2",
            "--cuts",
            "100",
            "--json",
        ],
        out: false,
    },
    Check {
        name: "experiment-profiles",
        args: &["experiment", "profiles", "--only", "proj0", "--json"],
        out: true,
    },
    Check {
        name: "experiment-rcftl",
        args: &[
            "experiment",
            "rcftl",
            "--only",
            "rcftl-dac18 fileserver 0K rcFTL2",
            "--json",
        ],
        out: true,
    },
    Check {
        name: "experiment-dgcb",
        args: &["experiment", "dgcb", "--only", "1-plane DGCB N=8", "--json"],
        out: true,
    },
    Check {
        // Matches `4TB cdr-star` (list pages) and `4TB cdr-star page-P2L`.
        name: "experiment-reparo",
        args: &["experiment", "reparo", "--only", "4TB cdr-star", "--json"],
        out: true,
    },
    Check {
        name: "experiment-longftl",
        args: &[
            "experiment",
            "longftl",
            "--only",
            "proj0 longFTL all-blocks",
            "--json",
        ],
        out: true,
    },
    Check {
        name: "experiment-cc",
        args: &["experiment", "cc", "--only", "dedup remap R=2", "--json"],
        out: true,
    },
    Check {
        name: "experiment-dawid",
        args: &[
            "experiment",
            "dawid",
            "--only",
            "rand-write LIDF 10%",
            "--json",
        ],
        out: true,
    },
    Check {
        // Per-page rcFTL copyback on the thesis drive, aged.
        name: "synth-rcftl-per-page",
        args: &[
            "synth",
            "--preset",
            "rcftl-thesis",
            "--set",
            "copyback.mode=rcftl-per-page",
            "--set",
            "geometry.blocks_per_plane=128",
            "--set",
            "ftl.op_ratio=0.1",
            "--set",
            "nand.initial_pe=2900",
            "--profile",
            "fileserver",
            "--requests",
            "50000",
            "--precondition",
            "--json",
        ],
        out: false,
    },
    Check {
        // GC with direct data transfer between planes.
        name: "synth-dgcb",
        args: &[
            "synth",
            "--preset",
            "dgcb-flashsim",
            "--set",
            "gc.copy_mode=dgcb",
            "--set",
            "geometry.blocks_per_plane=128",
            "--set",
            "ftl.op_ratio=0.15",
            "--pattern",
            "random",
            "--read-pct",
            "0",
            "--requests",
            "100000",
            "--precondition",
            "--json",
        ],
        out: false,
    },
    Check {
        // Superblocks with P2L list pages on one drive, every read checked.
        name: "synth-superblock",
        args: &[
            "synth",
            "--set",
            "ftl.superblock=true",
            "--set",
            "ftl.list_pages=true",
            // List pages need the mapping table in DRAM only (the default
            // persists it since the power-safe defaults).
            "--set",
            "ftl.map_entries_per_page=0",
            "--pattern",
            "random",
            "--read-pct",
            "20",
            "--requests",
            "100000",
            "--precondition",
            "--verify",
            "--json",
        ],
        out: false,
    },
    Check {
        // Reparo CDR* on a RAID-5 of multi-core drives: die failure,
        // identification, recovery, every unit verified.
        name: "raid-cdr-star",
        args: &[
            "raid",
            "--set",
            "reparo.mode=cdr-star",
            "--set",
            "geometry.channels=16",
            "--set",
            "geometry.blocks_per_plane=24",
            "--set",
            "geometry.pages_per_block=64",
            "--set",
            "ftl.op_ratio=0.3",
            "--json",
        ],
        out: false,
    },
];
