//! Test that `ftl presets` says exactly what each preset uses.
//!
//! Every number in a preset's description must be recognised by one of the
//! claim rules below and equal the value the preset's configuration holds;
//! a number no rule recognises fails the test, so a description cannot
//! state a figure nobody checks. The source text mixes the paper's figures
//! (citations, section numbers, values the preset deviates from and says
//! why) with the values chosen: in it the rules marked `source` are
//! checked wherever their wording appears, and other numbers are left to
//! the reader.
//!
//! A claim inside a clause about `ftl crash` is checked against the
//! configuration `ftl crash` runs (mapping persistence turned on, and the
//! printed GC-trigger override where the preset needs one).

use sim_harness::config::{presets, SimConfig};

use sim_harness::sim::Plan;

use crate::crash::{region_override, DEFAULT_MAP_ENTRIES};

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A number in the text, with its byte range.
#[derive(Debug)]
struct Num {
    start: usize,
    end: usize,
    value: f64,
}

/// The numbers of `text`: digits with `,` thousands separators and an
/// optional decimal part. Digits glued to letters (`tR`, `14nm`, `3D`,
/// `Gb`) and bracketed references are not figures and are skipped.
fn numbers(text: &str) -> Vec<Num> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len()
            && (b[i].is_ascii_digit()
                || (matches!(b[i], b',' | b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        let glued_before =
            start > 0 && (b[start - 1].is_ascii_alphabetic() || b[start - 1] == b'[');
        let glued_after = b.get(i).is_some_and(|c| c.is_ascii_alphabetic());
        if glued_before || glued_after {
            continue;
        }
        let digits: String = text[start..i].chars().filter(|c| *c != ',').collect();
        if let Ok(value) = digits.parse::<f64>() {
            out.push(Num {
                start,
                end: i,
                value,
            });
        }
    }
    out
}

/// The configuration values a claim can name.
struct Drive {
    cfg: SimConfig,
    /// What `ftl crash` runs on this preset.
    crash: SimConfig,
    logical_units: f64,
    physical_units: f64,
}

impl Drive {
    /// The preset `name`; `crash` also works out what `ftl crash` runs
    /// (building its plan is slow on the largest drives).
    fn new(name: &str, crash_claims: bool) -> Drive {
        let cfg = SimConfig::preset(name).unwrap();
        let mut crash = cfg.clone();
        if crash_claims && crash.ftl.map_entries_per_page == 0 {
            crash.ftl.map_entries_per_page = DEFAULT_MAP_ENTRIES;
            let fits = Plan::from_config(&crash).is_ok_and(|p| p.check_core(&crash).is_ok());
            if !fits {
                crash.apply_set(&region_override(&crash).unwrap()).unwrap();
            }
        }
        let core = cfg.to_core_config().unwrap();
        let g = &cfg.geometry;
        let units_per_page = f64::from(g.page_bytes / cfg.ftl.mapping_unit_bytes);
        let pages = f64::from(g.channels)
            * f64::from(g.dies_per_channel)
            * f64::from(g.planes_per_die)
            * f64::from(g.blocks_per_plane)
            * f64::from(g.pages_per_block);
        Drive {
            logical_units: f64::from(core.logical_units),
            physical_units: pages * units_per_page,
            cfg,
            crash,
        }
    }

    fn raw_bytes(&self) -> f64 {
        self.physical_units * f64::from(self.cfg.ftl.mapping_unit_bytes)
    }
}

/// Whether `n` (with the text before and after it) is a claim this rule
/// recognises; if so, the value the configuration says.
type Rule = fn(&Drive, &str, &str, f64) -> Option<f64>;

/// The last number in `s`.
fn last_number(s: &str) -> Option<f64> {
    numbers(s).last().map(|n| n.value)
}

/// Whether the text before a number is inside a clause about `ftl crash`.
fn in_crash_clause(before: &str) -> bool {
    before
        .rfind("`ftl crash`")
        .is_some_and(|i| !before[i..].contains(['.', ')', ';']))
}

fn cfg_of<'a>(d: &'a Drive, before: &str) -> &'a SimConfig {
    if in_crash_clause(before) {
        &d.crash
    } else {
        &d.cfg
    }
}

/// Rules for descriptions (all) and sources (those in `SOURCE_RULES`).
const RULES: &[(&str, Rule)] = &[
    ("channels", |d, _, a, _| {
        a.starts_with(" ch ")
            .then(|| f64::from(d.cfg.geometry.channels))
    }),
    ("chips x dies", |d, _, a, _| {
        // `4 chips x 2 dies`: the product is the dies per channel.
        let rest = a.strip_prefix(" chips x ")?;
        let dies = last_number(&rest[..rest.find(" dies")?])?;
        Some(f64::from(d.cfg.geometry.dies_per_channel) / dies)
    }),
    ("dies", |d, b, a, _| {
        let named = [" dies", " chips", " chip ", " LUNs"];
        if !named.iter().any(|n| a.starts_with(n)) {
            return None;
        }
        let dies = f64::from(d.cfg.geometry.dies_per_channel);
        Some(match b.strip_suffix(" chips x ") {
            Some(chips) => dies / last_number(chips)?,
            None => dies,
        })
    }),
    ("planes", |d, _, a, _| {
        a.starts_with(" planes")
            .then(|| f64::from(d.cfg.geometry.planes_per_die))
    }),
    ("blocks", |d, _, a, _| {
        a.starts_with(" blocks")
            .then(|| f64::from(d.cfg.geometry.blocks_per_plane))
    }),
    ("pages per wordline", |d, _, a, _| {
        a.starts_with(" pages per wordline")
            .then(|| f64::from(d.cfg.geometry.pages_per_wordline))
    }),
    ("pages", |d, _, a, _| {
        (a.starts_with(" pages") && !a.starts_with(" pages per wordline"))
            .then(|| f64::from(d.cfg.geometry.pages_per_block))
    }),
    ("mapping unit", |d, _, a, _| {
        a.starts_with(" KiB mapping units")
            .then(|| f64::from(d.cfg.ftl.mapping_unit_bytes) / KIB)
    }),
    ("page size", |d, _, a, _| {
        (a.starts_with(" KiB") && !a.starts_with(" KiB mapping units"))
            .then(|| f64::from(d.cfg.geometry.page_bytes) / KIB)
    }),
    ("spare", |d, _, a, _| {
        a.starts_with(" B spare")
            .then(|| f64::from(d.cfg.geometry.spare_bytes))
    }),
    ("write buffer", |d, b, a, _| {
        (a.starts_with(" MiB write buffer")
            || (b.ends_with("capped at ") && a.starts_with(" MiB"))
            || (b.ends_with("write buffer ") && a.starts_with(" MiB")))
        .then(|| d.cfg.buffer.write_buffer_bytes as f64 / MIB)
    }),
    ("exposed", |d, _, a, _| {
        a.starts_with(" GiB exposed")
            .then(|| d.logical_units * f64::from(d.cfg.ftl.mapping_unit_bytes) / GIB)
    }),
    ("raw capacity", |d, b, a, _| {
        ((b.ends_with('(') && a.starts_with(" GiB"))
            || a.starts_with(" GiB of flash")
            || (b.ends_with("-style ") && a.starts_with(" GiB drive")))
        .then(|| d.raw_bytes() / GIB)
    }),
    ("tR", |d, b, a, _| {
        (b.ends_with("tR ") && a.starts_with(" us")).then_some(d.cfg.timing.t_read_us)
    }),
    ("tPROG", |d, b, a, _| {
        (b.ends_with("tPROG ") && a.starts_with(" us")).then_some(d.cfg.timing.t_prog_us)
    }),
    ("tBERS", |d, b, a, _| {
        if !b.ends_with("tBERS ") {
            return None;
        }
        if a.starts_with(" ms") {
            Some(d.cfg.timing.t_erase_us / 1000.0)
        } else {
            a.starts_with(" us").then_some(d.cfg.timing.t_erase_us)
        }
    }),
    ("tRC", |d, b, a, _| {
        (b.ends_with("tRC ") && a.starts_with(" ns")).then(|| 1000.0 / d.cfg.timing.channel_mts)
    }),
    ("MT/s", |d, _, a, _| {
        a.starts_with(" MT/s").then_some(d.cfg.timing.channel_mts)
    }),
    ("over-provisioning", |d, b, a, v| {
        if !((b.ends_with("OP ") && a.starts_with('%')) || a.starts_with("% OP")) {
            return None;
        }
        // Either sense: spare over logical (op_ratio), or MQSim's logical
        // share of physical (`logical = (1 - v) x physical`).
        let ratio = d.cfg.ftl.op_ratio * 100.0;
        let mqsim = (1.0 - 1.0 / (1.0 + d.cfg.ftl.op_ratio)) * 100.0;
        Some(if (ratio - v).abs() < 0.05 {
            ratio
        } else {
            mqsim
        })
    }),
    ("queue depth", |d, b, _, _| {
        (b.ends_with("queue depth ") || b.ends_with("queue_depth "))
            .then(|| f64::from(d.cfg.host.queue_depth))
    }),
    ("map entries", |d, b, a, _| {
        a.starts_with("-entry")
            .then(|| f64::from(cfg_of(d, b).ftl.map_entries_per_page))
    }),
    ("logical units", |d, _, a, _| {
        a.starts_with(" logical units").then_some(d.logical_units)
    }),
    ("physical units", |d, b, a, _| {
        ((b.ends_with("logical units of ") && a.starts_with(')')) || a.starts_with(" physical"))
            .then_some(d.physical_units)
    }),
    ("GC trigger", |d, b, _, _| {
        b.ends_with("GC trigger ")
            .then(|| f64::from(cfg_of(d, b).ftl.gc_trigger_blocks))
    }),
    ("GC reserve", |d, b, _, _| {
        b.ends_with("/ reserve ")
            .then(|| f64::from(d.cfg.ftl.gc_reserve_blocks))
    }),
    ("DRAM", |d, b, a, _| {
        (b.ends_with("DRAM ") && a.starts_with(" MiB/s")).then_some(d.cfg.timing.dram_mib_s)
    }),
    ("host link", |d, b, a, _| {
        (b.ends_with("host ") && a.starts_with(" MiB/s")).then_some(d.cfg.timing.host_mib_s)
    }),
    ("ECC", |d, b, a, _| {
        ((b.ends_with("ECC ") && a.starts_with(" bits per 1 KiB")) || b.ends_with("ecc_limit "))
            .then(|| f64::from(d.cfg.nand.ecc_limit))
    }),
    ("rated P/E", |d, b, _, _| {
        (b.ends_with("rated P/E ") || b.ends_with("P/E limit "))
            .then(|| f64::from(d.cfg.nand.rated_pe))
    }),
    ("wear-levelling threshold", |d, b, _, _| {
        b.ends_with("wear-levelling threshold ")
            .then(|| f64::from(d.cfg.ftl.wl_threshold))
    }),
    ("pages_per_wordline key", |d, b, _, _| {
        b.ends_with("pages_per_wordline ")
            .then(|| f64::from(d.cfg.geometry.pages_per_wordline))
    }),
    ("t_cmd", |d, b, a, _| {
        (b.ends_with("t_cmd ") && a.starts_with(" ns")).then_some(d.cfg.timing.t_cmd_ns)
    }),
    ("tDL", |d, b, a, _| {
        (b.ends_with("tDL ") && a.starts_with(" ns")).then_some(d.cfg.timing.t_dl_ns)
    }),
];

/// Rules also checked in the source text: wordings that only ever name a
/// value the preset uses.
const SOURCE_RULES: &[&str] = &[
    "tR",
    "tPROG",
    "tBERS",
    "DRAM",
    "host link",
    "ECC",
    "rated P/E",
    "GC trigger",
    "GC reserve",
    "wear-levelling threshold",
    "pages_per_wordline key",
    "t_cmd",
    "tDL",
    "map entries",
];

/// Every claim found in `text`: (rule, number, expected value).
fn claims(d: &Drive, text: &str, only: Option<&[&str]>) -> (Vec<String>, Vec<String>) {
    let (mut wrong, mut unknown) = (Vec::new(), Vec::new());
    for n in numbers(text) {
        let before = &text[..n.start];
        let after = &text[n.end..];
        let hit = RULES
            .iter()
            .filter(|(name, _)| only.is_none_or(|o| o.contains(name)))
            .find_map(|(name, rule)| rule(d, before, after, n.value).map(|want| (name, want)));
        let context = &text[n.start.saturating_sub(24)..(n.end + 24).min(text.len())];
        match hit {
            Some((name, want)) if (want - n.value).abs() > 0.005 * want.abs().max(1.0) => {
                wrong.push(format!(
                    "{name}: text says {} where the preset has {want} (`{context}`)",
                    n.value
                ));
            }
            Some(_) => {}
            None => unknown.push(format!("{} (`{context}`)", n.value)),
        }
    }
    (wrong, unknown)
}

#[test]
fn every_number_in_a_description_is_the_value_the_preset_uses() {
    for p in presets() {
        let text = format!("{} {}", p.description, p.source);
        let d = Drive::new(p.name, text.contains("`ftl crash`"));
        let (wrong, unknown) = claims(&d, p.description, None);
        assert!(wrong.is_empty(), "{}: {wrong:#?}", p.name);
        assert!(
            unknown.is_empty(),
            "{}: numbers no rule checks: {unknown:#?}",
            p.name
        );
        let (wrong, _) = claims(&d, p.source, Some(SOURCE_RULES));
        assert!(wrong.is_empty(), "{} source: {wrong:#?}", p.name);
    }
}

#[test]
fn a_wrong_or_unchecked_number_fails() {
    let d = Drive::new("mqsim-gc16", true);
    assert_eq!(d.crash.ftl.gc_trigger_blocks, 5);
    let (wrong, _) = claims(&d, "`ftl crash` runs GC trigger 6", None);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    let d = Drive::new("default", false);
    let (wrong, _) = claims(&d, "4 ch x 2 dies, tR 51 us, DRAM 3200 MiB/s", None);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    let (_, unknown) = claims(&d, "4 ch and 7 dwarves", None);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    let (wrong, _) = claims(&d, "`ftl crash` persists it in 511-entry pages", None);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
}
