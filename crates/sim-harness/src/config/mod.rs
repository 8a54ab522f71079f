//! Simulation configuration: TOML files, presets and `--set` overrides.
//!
//! A [`SimConfig`] has fifteen sections. Every leaf is addressed by a dotted key
//! (`section.key`); the names are a public interface used by TOML files,
//! `--set section.key=value` overrides, [`SimConfig::get`] and
//! [`SimConfig::keys`]. A TOML file may give any subset of keys: the rest keep
//! the values of the `default` preset. Unknown keys are errors.
//!
//! | key | type | meaning (default preset value) |
//! |---|---|---|
//! | `geometry.channels` | u16 | independent channels (buses) (4) |
//! | `geometry.dies_per_channel` | u16 | dies (ways) sharing a channel; a multi-die chip counts each die (2) |
//! | `geometry.planes_per_die` | u16 | planes per die (2) |
//! | `geometry.blocks_per_plane` | u32 | erase blocks per plane (256) |
//! | `geometry.pages_per_block` | u32 | program pages per block (64) |
//! | `geometry.page_bytes` | u32 | data bytes per page, spare excluded (16384) |
//! | `geometry.pages_per_wordline` | u8 | 1 SLC, 2 MLC, 3 TLC, 4 QLC (2) |
//! | `geometry.spare_bytes` | u32 | *added key*: spare (OOB) bytes per page; not mapped capacity; a timing model may move them with every page transfer (0) |
//! | `timing.t_read_us` | f64 | array read time tR, µs (50) |
//! | `timing.t_prog_us` | f64 | page program time tPROG, µs (600) |
//! | `timing.t_erase_us` | f64 | block erase time tBERS, µs (3000) |
//! | `timing.channel_mts` | f64 | channel rate in MT/s on an 8-bit bus, so MB/s = MT/s (400) |
//! | `timing.dram_mib_s` | f64 | bandwidth of the shared DRAM bus, MiB/s (3200) |
//! | `timing.t_cmd_ns` | f64 | command/address cycles per NAND operation, ns; 0 folds them into tR/tPROG (0) |
//! | `timing.host_mib_s` | f64 | host interface bandwidth (e.g. PCIe), MiB/s (3500) |
//! | `timing.cache_program` | bool | *added key*: data-in of a page overlaps the previous program busy of the same block (false) |
//! | `timing.t_dl_ns` | f64 | *added key*: RE-to-WE skew of a direct data transfer, tDL, ns (0) |
//! | `ftl.op_ratio` | f64 | over-provisioning (physical - logical) / logical (0.15) |
//! | `ftl.mapping_unit_bytes` | u32 | mapping unit, a multiple of 512 dividing the page (4096) |
//! | `ftl.gc_reserve_blocks` | u32 | free blocks per plane only GC may take (2) |
//! | `ftl.gc_trigger_blocks` | u32 | GC starts when a plane has this many free blocks or fewer (3) |
//! | `ftl.wl_threshold` | u32 | static wear levelling P/E spread, 0 = off (0) |
//! | `ftl.wl_check_interval` | u32 | erases per plane between wear-levelling checks (64) |
//! | `ftl.max_inflight` | u32 | NAND operations the core may have in flight (4096) |
//! | `ftl.read_slots` | u32 | buffer slots reserved for host reads (256) |
//! | `ftl.gc_slots_per_plane` | u32 | buffer slots reserved per plane for GC (16; at least 2 x units per page - 1) |
//! | `ftl.superblock` | bool | host writes fill superblocks (one block per plane) superpage by superpage (false) |
//! | `ftl.list_pages` | bool | the last page of every block is kept for P2L lists; not with `ftl.map_entries_per_page` (false) |
//! | `buffer.write_buffer_bytes` | u64 | write buffer; divided by the mapping unit, rounded down (4 MiB) |
//! | `host.queue_depth` | u32 | default outstanding host requests for replay and synthetic workloads (32) |
//! | `host.arbitration` | `round_robin` / `weighted` | how concurrent flows share the device's command slots (`round_robin`) |
//! | `host.interface` | `conventional` / `zns` / `fdp` | *added key*: the namespace the drive exports (`conventional`; docs/placement.md) |
//! | `zns.zone_bytes` | u64 | *added key*: zone size; 0 = one erase block per plane (0) |
//! | `zns.zone_capacity_bytes` | u64 | *added key*: writable bytes per zone; 0 = the zone size (0) |
//! | `zns.max_open` | u32 | *added key*: most zones open at once (8) |
//! | `zns.max_active` | u32 | *added key*: most zones open or closed at once, 1..=64 (8) |
//! | `fdp.handles` | u32 | *added key*: reclaim-unit handles (placement identifiers), 1..=64 (4) |
//! | `fdp.reclaim_unit_bytes` | u64 | *added key*: reclaim-unit size; 0 or one erase block per plane (0) |
//! | `nand.initial_pe` | u32 | P/E cycles every block starts with (0) |
//! | `nand.rated_pe` | u32 | rated endurance in P/E cycles (3000) |
//! | `nand.ecc_limit` | u16 | correctable raw bit errors per 1 KiB codeword (40) |
//! | `nand.retention_months` | f64 | retention time the reliability model applies (data age at read), which is also the retention requirement *t* of copyback thresholds CT(x, t) (0) |
//! | `nand.factory_bad_ratio` | f64 | fraction of blocks bad from the factory (0) |
//! | `nand.program_fail_prob` | f64 | probability that a program fails (0) |
//! | `nand.erase_fail_prob` | f64 | probability that an erase fails (0) |
//! | `nand.seed` | u64 | seed of the reliability and fault model (1) |
//! | `nand.full_data` | bool | keep full page payloads instead of compact per-unit stamps (false) |
//! | `nand.model` | string | reliability model: `default`, `mlc-dac18`, `mlc-ecc24` or `tlc-thesis` ("default") |
//! | `gc.copy_mode` | string | *added key*: how a GC page copy crosses the channel: `icb`, `lcb`, `gcb` or `dgcb` ("gcb") |
//! | `gc.transaction_pages` | u32 | *added key*: pages one GC transaction copies (128) |
//! | `gc.destination` | string | *added key*: where GC puts a victim's pages: `plane` (its own) or `channel` (the least busy other way of its channel; with `gcb` and `dgcb`, off-chip copyback only) ("plane") |
//! | `nand.endurance_scale` | f64 | endurance multiplier of the wordline model used by GuardedErase and lifetime runs; 1.0 = the paper chip's 10K cycles (1.0) |
//! | `erase.mode` | string | `normal`, `gerase` (GuardedErase, longFTL) or `bpm` (weak wordlines retired for good) ("normal") |
//! | `erase.gerase_mode` | string | `auto` (WAF-driven mode selector) or a fixed gErase mode `0`..`9` ("auto") |
//! | `erase.gerase_scope` | string | gErase on `host` active blocks only, or on `all` allocations ("host") |
//! | `erase.bpm_capacity_loss_pct` | f64 | share of each block's wordlines BPM retires, percent (2.1) |
//! | `controller.flash_cores` | u32 | flash cores the master core stripes LBAs over, each owning 1/N of the dies (4) |
//! | `reparo.mode` | string | die-failure recovery: `baseline` (Rebuild-Assist drive replacement), `idr`, `cdr` or `cdr-star` ("cdr-star") |
//! | `reparo.p2l` | string | P2L entrustment for CDR*: `none`, `page` or `block` ("block") |
//! | `reparo.n_bad_die` | u32 | bad blocks past which the detector fails a die (16) |
//! | `erase.waf_window` | u8 | *added key*: observation intervals each WAF value of the monitor spans, 1..16; 1 is the paper's single interval (1) |
//! | `copy.mode` | string | *added key*: host copy commands: `physical` (read and write again inside the device) or `remap` (copyless copy, seed 003) ("physical") |
//! | `copy.refcount_bits` | u8 | *added key*: bits of each physical unit's reference count, 1..=8; a unit holds at most 2^n - 1 tags (4) |
//! | `copy.shadow_oob_entries` | u32 | *added key*: shadow OOB records, the tags of shared units held at once (65536) |
//! | `sim.seed` | u64 | workload seed (42) |
//!
//! Seeds must stay at or below `i64::MAX` so that the configuration can be
//! written back as TOML.
//!
//! Errors are [`ConfigError`]s naming where the value came from (a file name,
//! `--set`, `preset` or `config` for [`SimConfig::validate`]), the line when
//! known, and the key.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::fmt;
use std::path::Path;

mod copy;
mod copyback;
mod erase;
mod file;
mod gc;
mod keys;
pub mod limits;
mod placement;
mod presets;
mod reparo;

pub use copy::{CopyModeSetting, CopySection};
pub use copyback::{CopybackSection, ModeKey, SelectorKey, TableKey};
pub use erase::{EraseModeKey, EraseSection, ScopeKey};
pub use file::{read_config_text, MAX_CONFIG_BYTES};
pub use gc::{CopyModeKey, GcDestinationKey, GcSection};
pub use placement::{block_group_bytes, FdpSection, InterfaceKey, ZnsSection};
pub use reparo::{ControllerSection, P2lKey, ReparoModeKey, ReparoSection};

pub use presets::{presets, PresetInfo};

#[cfg(test)]
mod tests;

/// Most mapping units one page may hold (the core's limit).
const MAX_UNITS_PER_PAGE: u32 = firmware_core::medium::addr::MAX_UNITS_PER_PAGE as u32;

/// Most buffer slots the core can address.
const MAX_SLOTS: u64 = u16::MAX as u64;

/// Source name of errors found by [`SimConfig::validate`].
const VALIDATE_SOURCE: &str = "config";

/// Shape of the NAND array (section `[geometry]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeometrySection {
    /// Independent channels (buses).
    pub channels: u16,
    /// Dies (ways) sharing one channel; a chip with several dies counts each.
    pub dies_per_channel: u16,
    /// Planes per die.
    pub planes_per_die: u16,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Program pages per erase block.
    pub pages_per_block: u32,
    /// Data bytes per page (spare area excluded).
    pub page_bytes: u32,
    /// Pages sharing one wordline: 1 SLC, 2 MLC, 3 TLC, 4 QLC.
    pub pages_per_wordline: u8,
    /// Spare (out-of-band) bytes per page. Not part of the mapped capacity; a
    /// timing model may move them over the channel with every page (0 = no).
    pub spare_bytes: u32,
}

impl Default for GeometrySection {
    fn default() -> Self {
        GeometrySection {
            channels: 4,
            dies_per_channel: 2,
            planes_per_die: 2,
            blocks_per_plane: 256,
            pages_per_block: 64,
            page_bytes: 16 * 1024,
            pages_per_wordline: 2,
            spare_bytes: 0,
        }
    }
}

/// NAND, bus and host timing (section `[timing]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingSection {
    /// Array read time tR in microseconds.
    pub t_read_us: f64,
    /// Page program time tPROG in microseconds.
    pub t_prog_us: f64,
    /// Block erase time tBERS in microseconds.
    pub t_erase_us: f64,
    /// Channel transfer rate in MT/s on an 8-bit bus (so MB/s = MT/s).
    pub channel_mts: f64,
    /// Bandwidth of the DRAM bus shared by all channels and the host, MiB/s.
    pub dram_mib_s: f64,
    /// Command and address cycles per NAND operation in nanoseconds
    /// (0 = folded into tR and tPROG).
    pub t_cmd_ns: f64,
    /// Host interface bandwidth (for example PCIe), MiB/s.
    pub host_mib_s: f64,
    /// Cache program: a page's data-in overlaps the previous program busy
    /// of the same block on the same die.
    pub cache_program: bool,
    /// Skew between the source's RE and the destination's WE in a direct
    /// data transfer (tDL), nanoseconds.
    pub t_dl_ns: f64,
}

impl Default for TimingSection {
    fn default() -> Self {
        TimingSection {
            t_read_us: 50.0,
            t_prog_us: 600.0,
            t_erase_us: 3000.0,
            channel_mts: 400.0,
            dram_mib_s: 3200.0,
            t_cmd_ns: 0.0,
            host_mib_s: 3500.0,
            cache_program: false,
            t_dl_ns: 0.0,
        }
    }
}

/// FTL tunables (section `[ftl]`), passed to [`firmware_core::Config`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlSection {
    /// Over-provisioning (physical - logical) / logical; the core truncates
    /// `physical / (1 + op_ratio)` to get the logical units.
    pub op_ratio: f64,
    /// Mapping unit in bytes: a multiple of 512 that divides the page.
    pub mapping_unit_bytes: u32,
    /// Free blocks per plane that only GC may take.
    pub gc_reserve_blocks: u32,
    /// GC starts in a plane when its free blocks drop to this many or fewer.
    pub gc_trigger_blocks: u32,
    /// Static wear levelling threshold on the P/E spread in a plane (0 = off).
    pub wl_threshold: u32,
    /// Erases in a plane between two static wear-levelling checks.
    pub wl_check_interval: u32,
    /// NAND operations the core may have in flight at once.
    pub max_inflight: u32,
    /// Buffer slots reserved for host reads in flight.
    pub read_slots: u32,
    /// Buffer slots reserved for each plane's garbage collection.
    pub gc_slots_per_plane: u32,
    /// Mapping entries per translation page; 0 keeps the mapping table in
    /// DRAM only (no power-loss recovery). The default persists it in
    /// pages of 1020 entries (a 4 KiB translation page).
    pub map_entries_per_page: u32,
    /// Host writes fill superblocks superpage by superpage (one block per
    /// plane, opened together) instead of round-robin planes.
    pub superblock: bool,
    /// The last page of every block is a list page (block-level P2L lists
    /// for a Reparo controller); needs `map_entries_per_page = 0`.
    pub list_pages: bool,
}

/// Translation-page size of the default configuration (and of `ftl crash`
/// on a preset that keeps its mapping table in DRAM): as many 4-byte
/// entries as fill a 4 KiB page after its 16-byte header.
pub const DEFAULT_MAP_ENTRIES: u32 = 1020;

impl Default for FtlSection {
    fn default() -> Self {
        FtlSection {
            op_ratio: 0.15,
            mapping_unit_bytes: 4096,
            gc_reserve_blocks: 2,
            gc_trigger_blocks: 3,
            wl_threshold: 0,
            wl_check_interval: 64,
            max_inflight: 4096,
            read_slots: 256,
            gc_slots_per_plane: 16,
            map_entries_per_page: DEFAULT_MAP_ENTRIES,
            superblock: false,
            list_pages: false,
        }
    }
}

/// Controller DRAM buffers (section `[buffer]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferSection {
    /// Write buffer in bytes (rounded down to whole mapping units).
    pub write_buffer_bytes: u64,
    /// Order of write-buffer flushes: `fifo` or `lidf`.
    pub flush_policy: FlushPolicyKey,
    /// Share (0-1] of translation pages the capacitor protects when dirty.
    pub map_protect_ratio: f64,
    /// With mapping persistence, flushing starts once this share [0-1) of
    /// the write buffer is occupied (Dawid: 0.5); 0 flushes each full page.
    pub flush_start_ratio: f64,
    /// Under partial protection (`map_protect_ratio` < 1), GC relocations
    /// make translation pages stale outside the capacitor budget and their
    /// victims wait for a sweep that writes those pages before they are
    /// erased; false charges every relocation to the budget.
    pub gc_outside_budget: bool,
}

impl Default for BufferSection {
    fn default() -> Self {
        BufferSection {
            write_buffer_bytes: 4 * 1024 * 1024,
            flush_policy: FlushPolicyKey::Fifo,
            map_protect_ratio: 1.0,
            flush_start_ratio: 0.0,
            gc_outside_budget: true,
        }
    }
}

/// `buffer.flush_policy` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlushPolicyKey {
    /// Oldest buffered write first.
    Fifo,
    /// Least increase of dirtiness first (Dawid).
    Lidf,
}

/// Host side (section `[host]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostSection {
    /// Default number of outstanding requests for trace replay and synthetic workloads.
    pub queue_depth: u32,
    /// How the device picks among concurrent flows (`ftl replay --flows`)
    /// with a request ready: `round_robin` or `weighted` (by flow weight).
    pub arbitration: ArbitrationKey,
    /// The namespace the drive exports: `conventional`, `zns` or `fdp`.
    pub interface: InterfaceKey,
}

impl Default for HostSection {
    fn default() -> Self {
        HostSection {
            queue_depth: 32,
            arbitration: ArbitrationKey::RoundRobin,
            interface: InterfaceKey::Conventional,
        }
    }
}

/// `host.arbitration` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArbitrationKey {
    /// Every flow in turn.
    RoundRobin,
    /// Weighted round robin by the flows' weights.
    Weighted,
}

impl ArbitrationKey {
    /// The engine's arbitration.
    pub fn mode(self) -> crate::engine::Arbitration {
        match self {
            ArbitrationKey::RoundRobin => crate::engine::Arbitration::RoundRobin,
            ArbitrationKey::Weighted => crate::engine::Arbitration::Weighted,
        }
    }
}

/// Reliability and fault model of the medium (section `[nand]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NandSection {
    /// P/E cycles every block has at the start of the run.
    pub initial_pe: u32,
    /// Rated endurance in P/E cycles.
    pub rated_pe: u32,
    /// Correctable raw bit errors per 1 KiB codeword.
    pub ecc_limit: u16,
    /// Retention time in months the reliability model applies (data age at
    /// read); also the retention requirement of copyback thresholds CT(x, t).
    pub retention_months: f64,
    /// Fraction of blocks bad from the factory, in `[0, 1]`.
    pub factory_bad_ratio: f64,
    /// Probability that one program fails, in `[0, 1]`.
    pub program_fail_prob: f64,
    /// Probability that one erase fails, in `[0, 1]`.
    pub erase_fail_prob: f64,
    /// Seed of the reliability and fault model (at most `i64::MAX`).
    pub seed: u64,
    /// Keep full page payloads instead of compact per-unit stamps (memory heavy).
    pub full_data: bool,
    /// Reliability model of the medium: `default`, `mlc-dac18`, `mlc-ecc24` or `tlc-thesis`
    /// (`nand_model::ReliabilityConfig::by_name`); `ecc_limit`, `rated_pe` and
    /// `retention_months` above still apply on top of it.
    pub model: String,
    /// Endurance multiplier of the wordline model (GuardedErase, lifetime
    /// runs): 1.0 is the paper chip's 10K cycles; smaller values let a
    /// whole life run in minutes.
    pub endurance_scale: f64,
}

impl Default for NandSection {
    fn default() -> Self {
        NandSection {
            initial_pe: 0,
            rated_pe: 3000,
            ecc_limit: 40,
            retention_months: 0.0,
            factory_bad_ratio: 0.0,
            program_fail_prob: 0.0,
            erase_fail_prob: 0.0,
            seed: 1,
            full_data: false,
            model: "default".to_string(),
            endurance_scale: 1.0,
        }
    }
}

/// Run-level settings (section `[sim]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimSection {
    /// Default workload seed (at most `i64::MAX`).
    pub seed: u64,
}

impl Default for SimSection {
    fn default() -> Self {
        SimSection { seed: 42 }
    }
}

/// The whole simulation configuration. `SimConfig::default()` is the `default` preset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// `[geometry]`: shape of the NAND array.
    pub geometry: GeometrySection,
    /// `[timing]`: NAND, bus and host timing.
    pub timing: TimingSection,
    /// `[ftl]`: FTL tunables.
    pub ftl: FtlSection,
    /// `[buffer]`: controller DRAM buffers.
    pub buffer: BufferSection,
    /// `[host]`: host side.
    pub host: HostSection,
    /// `[nand]`: reliability and fault model.
    pub nand: NandSection,
    /// `[copyback]`: how GC migrates data (rcFTL and baselines).
    pub copyback: CopybackSection,
    /// `[gc]`: how GC page copies cross the channel (seed 002).
    pub gc: GcSection,
    /// `[erase]`: GuardedErase (longFTL) and the BPM baseline.
    pub erase: EraseSection,
    /// `[copy]`: host copy commands (copyless copy, seed 003).
    pub copy: CopySection,
    /// `[controller]`: the multi-core controller (`ftl raid`).
    pub controller: ControllerSection,
    /// `[reparo]`: die-failure recovery (`ftl raid`).
    pub reparo: ReparoSection,
    /// `[zns]`: the zoned namespace (`host.interface = zns`).
    pub zns: ZnsSection,
    /// `[fdp]`: flexible data placement (`host.interface = fdp`).
    pub fdp: FdpSection,
    /// `[sim]`: run-level settings.
    pub sim: SimSection,
}

/// A configuration problem: where it came from, the line when known, the key and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// File name, `--set`, `preset`, or `config` (from [`SimConfig::validate`]).
    pub source: String,
    /// 1-based line in the file, when the error came from a file and the line is known.
    pub line: Option<u64>,
    /// Dotted key (`geometry.channels`), a section name, or empty when unknown.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

impl ConfigError {
    /// An error; a long key, and long values quoted in the reason, are cut
    /// ([`crate::clip`]) so the message stays a line long.
    fn new(source: &str, line: Option<u64>, key: &str, reason: impl Into<String>) -> Self {
        ConfigError {
            source: source.to_string(),
            line,
            key: crate::clip::clip(key),
            reason: crate::clip::clip_quoted(&reason.into()),
        }
    }

    fn check(key: &str, reason: impl Into<String>) -> Self {
        ConfigError::new(VALIDATE_SOURCE, None, key, reason)
    }
}

impl fmt::Display for ConfigError {
    /// `SOURCE:LINE: key KEY: REASON`; the `LINE` part is left out when unknown
    /// and the `key KEY: ` part when the key is empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if !self.key.is_empty() {
            write!(f, "key {}: ", self.key)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ConfigError {}

impl SimConfig {
    /// The preset called `name` (see [`presets`]); an unknown name is an error
    /// listing the known presets.
    pub fn preset(name: &str) -> Result<SimConfig, ConfigError> {
        presets::build(name).ok_or_else(|| {
            let known: Vec<&str> = presets().iter().map(|p| p.name).collect();
            ConfigError::new(
                "preset",
                None,
                "preset",
                format!(
                    "unknown preset `{name}`; known presets: {}",
                    known.join(", ")
                ),
            )
        })
    }

    /// Reads a TOML file on top of the defaults (see [`SimConfig::from_toml_str`]).
    /// Errors name the file; a file larger than [`MAX_CONFIG_BYTES`] is refused.
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<SimConfig, ConfigError> {
        let path = path.as_ref();
        let text = read_config_text(path)?;
        SimConfig::from_toml_str(&text, &path.display().to_string())
    }

    /// Parses TOML text on top of the defaults: keys not given keep their
    /// `default` preset value. Syntax errors, unknown keys, values of the wrong
    /// type or range and non-finite floats are errors carrying `source_name`,
    /// the line and the dotted key. Does not call [`SimConfig::validate`], so
    /// `--set` overrides can still fix a value before validation.
    pub fn from_toml_str(text: &str, source_name: &str) -> Result<SimConfig, ConfigError> {
        keys::from_toml_str(text, source_name)
    }

    /// Applies one `section.key=value` override. The value is parsed as the
    /// key's type: integers (`_` separators allowed), floats, `true`/`false`,
    /// or strings (optionally quoted). Unknown keys, a missing `=` and values
    /// that do not parse or fit are errors naming the key; on error `self` is
    /// unchanged.
    pub fn apply_set(&mut self, assignment: &str) -> Result<(), ConfigError> {
        keys::apply_set(self, assignment)
    }

    /// The current value of a dotted key as text, or `None` for an unknown key
    /// or a section name.
    pub fn get(&self, key: &str) -> Option<String> {
        keys::get(self, key)
    }

    /// Every dotted key, sorted.
    pub fn keys() -> Vec<String> {
        keys::all_keys()
    }

    /// The configuration as TOML, for echoing into reports. It parses back with
    /// [`SimConfig::from_toml_str`] to an equal configuration.
    pub fn to_toml_string(&self) -> String {
        toml::to_string_pretty(self)
            .unwrap_or_else(|e| format!("# configuration not representable as TOML: {e}\n"))
    }

    /// Mapping units per page (`page_bytes / mapping_unit_bytes`, rounded down;
    /// 0 when the mapping unit is 0).
    pub fn units_per_page(&self) -> u32 {
        self.geometry
            .page_bytes
            .checked_div(self.ftl.mapping_unit_bytes)
            .unwrap_or(0)
    }

    /// Checks every value; the error names the offending key. Builds the core
    /// configuration and runs [`firmware_core::Config::validate`] as well, so a
    /// configuration that passes here is accepted by the core.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_geometry()?;
        self.check_timing()?;
        self.check_ftl()?;
        self.check_host_and_nand()?;
        limits::check_ranges(self)?;
        let core = self.build_core()?;
        core.validate().map_err(|e| self.core_error(&core, e))?;
        Ok(())
    }

    /// Checks the shape of the array alone (every count at least 1, the
    /// wordline and mapping-unit rules), for commands that cost geometries
    /// too large to simulate and so skip [`SimConfig::validate`].
    pub fn validate_shape(&self) -> Result<(), ConfigError> {
        self.check_shape()?;
        self.core_geometry().map(|_| ())
    }

    /// The medium's reliability model: the named `nand.model` with the seed,
    /// ECC limit, rated P/E and retention of the `[nand]` section.
    pub fn reliability(&self) -> Result<nand_model::ReliabilityConfig, ConfigError> {
        let n = &self.nand;
        let base = nand_model::ReliabilityConfig::by_name(&n.model).ok_or_else(|| {
            ConfigError::check(
                "nand.model",
                format!(
                    "unknown model `{}` (expected default, mlc-dac18, mlc-ecc24 or tlc-thesis)",
                    n.model
                ),
            )
        })?;
        Ok(nand_model::ReliabilityConfig {
            seed: n.seed,
            ecc_limit: n.ecc_limit,
            rated_pe: n.rated_pe,
            retention_months: n.retention_months as f32,
            ..base
        })
    }

    /// The BER classifier the core should use with this medium: boundaries
    /// per P/E bucket of seed 001 Table 6 scaled to `nand.rated_pe`, for one
    /// read of a block's first page right after it is programmed (see
    /// `nand_model::ReliabilityConfig::ber_class_steps`).
    pub fn ber_classifier(
        &self,
    ) -> Result<firmware_core::tech::rcftl::ctt::BerClassifier, ConfigError> {
        let rel = self.reliability()?;
        let rated = u64::from(rel.rated_pe);
        let upper = firmware_core::tech::rcftl::ctt::RCPB_PE_UPPER
            .map(|u| u32::try_from(u64::from(u) * rated / 5000).unwrap_or(u32::MAX));
        let steps =
            rel.ber_class_steps::<{ firmware_core::tech::rcftl::ctt::CLASSIFIER_STEPS }>(upper);
        Ok(
            firmware_core::tech::rcftl::ctt::BerClassifier::from_steps(&steps).unwrap_or(
                firmware_core::tech::rcftl::ctt::BerClassifier::uniform(0, 0),
            ),
        )
    }

    /// Validates and builds the core configuration: geometry with
    /// `units_per_page = page_bytes / mapping_unit_bytes`,
    /// [`firmware_core::Config::with_op_ratio`], then the `ftl.*` overrides and
    /// `write_buffer_units = write_buffer_bytes / mapping_unit_bytes`.
    pub fn to_core_config(&self) -> Result<firmware_core::Config, ConfigError> {
        self.validate()?;
        self.build_core()
    }

    /// Bytes of copyback-safety state (`memory.epm_bytes`) this geometry
    /// needs under each copyback mode, with this configuration's table,
    /// retention and threshold cap: `off-chip`, `fastgc`, `rcftl-per-page`,
    /// `rcftl`. Works for geometries too large to simulate (16 TB class).
    pub fn epm_bytes_by_mode(&self) -> Result<Vec<(&'static str, u64)>, ConfigError> {
        let g = self.core_geometry()?;
        let mut out = Vec::new();
        for (name, mode) in [
            ("off-chip", ModeKey::OffChip),
            ("fastgc", ModeKey::Fastgc),
            ("rcftl-per-page", ModeKey::RcftlPerPage),
            ("rcftl", ModeKey::Rcftl),
        ] {
            let section = CopybackSection {
                mode,
                ..self.copyback.clone()
            };
            let policy = section.to_policy(1)?;
            let bytes = firmware_core::tech::rcftl::copyback::epm_bytes(&g, &policy)
                .map_err(|e| ConfigError::check("copyback.mode", e.to_string()))?;
            out.push((name, bytes));
        }
        Ok(out)
    }

    fn core_geometry(&self) -> Result<firmware_core::Geometry, ConfigError> {
        let g = &self.geometry;
        let units = self.units_per_page();
        let units_per_page = u8::try_from(units)
            .ok()
            .filter(|&u| u >= 1 && u32::from(u) <= MAX_UNITS_PER_PAGE)
            .ok_or_else(|| {
                ConfigError::check(
                    "geometry.page_bytes",
                    format!(
                        "a page holds {units} mapping units of {} bytes; 1 to {MAX_UNITS_PER_PAGE} allowed",
                        self.ftl.mapping_unit_bytes
                    ),
                )
            })?;
        Ok(firmware_core::Geometry {
            channels: g.channels,
            dies_per_channel: g.dies_per_channel,
            planes_per_die: g.planes_per_die,
            blocks_per_plane: g.blocks_per_plane,
            pages_per_block: g.pages_per_block,
            page_bytes: g.page_bytes,
            pages_per_wordline: g.pages_per_wordline,
            units_per_page,
        })
    }

    fn build_core(&self) -> Result<firmware_core::Config, ConfigError> {
        let geometry = self.core_geometry()?;
        let mut core = firmware_core::Config::with_op_ratio(geometry, self.ftl.op_ratio)
            .map_err(|e| self.core_error_plain(e))?;
        let f = &self.ftl;
        let unit = u64::from(f.mapping_unit_bytes.max(1));
        core.write_buffer_units =
            u32::try_from(self.buffer.write_buffer_bytes / unit).map_err(|_| {
                ConfigError::check("buffer.write_buffer_bytes", "write buffer too large")
            })?;
        core.read_slots = f.read_slots;
        if self.gc.cross_way() {
            core.gc_destination = firmware_core::tech::crossway::config::GcDestination::Channel;
        }
        core.gc_slots_per_plane = f.gc_slots_per_plane;
        core.gc_reserve_blocks = f.gc_reserve_blocks;
        core.gc_trigger_blocks = f.gc_trigger_blocks;
        core.wl_threshold = f.wl_threshold;
        core.wl_check_interval = f.wl_check_interval;
        core.max_inflight = f.max_inflight;
        core.superblock = firmware_core::tech::reparo::superblock::SuperblockConfig {
            enabled: f.superblock,
            list_pages: f.list_pages,
        };
        let start = self.buffer.flush_start_ratio;
        if !(0.0..1.0).contains(&start) {
            return Err(ConfigError::check(
                "buffer.flush_start_ratio",
                "must be in [0, 1)",
            ));
        }
        let ratio = self.buffer.map_protect_ratio;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(ConfigError::check(
                "buffer.map_protect_ratio",
                "must be in (0, 1]",
            ));
        }
        core.persist = firmware_core::PersistConfig {
            map_entries_per_page: f.map_entries_per_page,
            protect_permille: (ratio * 1000.0).round() as u32,
            flush_policy: match self.buffer.flush_policy {
                FlushPolicyKey::Fifo => firmware_core::FlushPolicy::Fifo,
                FlushPolicyKey::Lidf => firmware_core::FlushPolicy::Lidf,
            },
            flush_start_permille: (self.buffer.flush_start_ratio * 1000.0).round() as u32,
            meta_blocks_per_plane: 0,
            gc_outside_budget: self.buffer.gc_outside_budget,
            cut_retries: 0,
        };
        core.persist.cut_retries = self.cut_retries(&core);
        // One average block-write time (seed 000 §4.2).
        let window_ns =
            (self.timing.t_prog_us * 1e3).round() as u64 * u64::from(self.geometry.pages_per_block);
        core.copyback = self.copyback.to_policy(window_ns)?;
        core.copyback.classifier = self.ber_classifier()?;
        let wls =
            self.geometry.pages_per_block / u32::from(self.geometry.pages_per_wordline.max(1));
        core.guard = self.erase.to_guard(wls, self.nand.ecc_limit)?;
        core.copy = self.copy.to_core()?;
        core.placement.handles = match self.host.interface {
            InterfaceKey::Conventional => 0,
            InterfaceKey::Fdp => {
                self.fdp.check(self.block_group_bytes())?;
                self.fdp.handles as u8
            }
            InterfaceKey::Zns => self.zone_geometry_of(core.logical_units)?.max_active as u8,
        };
        Ok(core)
    }

    /// Program failures the capacitor must pay to absorb at a power cut:
    /// the fewest retries such that more of the flush's programs fail with
    /// probability below 1e-9 at `nand.program_fail_prob` (a Poisson tail
    /// over the programs the flush can take at most: the write buffer's
    /// pages, every translation page, the block table and the record).
    fn cut_retries(&self, core: &firmware_core::Config) -> u32 {
        let p = self.nand.program_fail_prob;
        if p.is_nan() || p <= 0.0 || !core.persist.enabled() {
            return 0;
        }
        let g = &core.geometry;
        let upp = u64::from(g.units_per_page.max(1));
        let epp = u64::from(core.persist.map_entries_per_page.max(1));
        let page = u64::from(g.page_bytes.max(1));
        let programs = u64::from(core.write_buffer_units).div_ceil(upp)
            + u64::from(core.logical_units).div_ceil(epp)
            + (u64::from(g.total_blocks()) * 4).div_ceil(page)
            + 4;
        let lambda = p.min(1.0) * programs as f64;
        if lambda > 500.0 {
            // exp(-lambda) underflows: seven standard deviations above the mean.
            return (lambda + 7.0 * lambda.sqrt())
                .ceil()
                .min(f64::from(u32::MAX)) as u32;
        }
        // P(X > r) for X ~ Poisson(lambda), summed term by term.
        let mut term = (-lambda).exp();
        let mut cdf = term;
        let mut r = 0u32;
        while 1.0 - cdf > 1e-9 && r < 100_000 {
            r += 1;
            term *= lambda / f64::from(r);
            cdf += term;
        }
        r
    }

    /// Bytes of one erase block in every plane.
    pub fn block_group_bytes(&self) -> u64 {
        let g = &self.geometry;
        let planes =
            u64::from(g.channels) * u64::from(g.dies_per_channel) * u64::from(g.planes_per_die);
        block_group_bytes(
            planes,
            u64::from(g.pages_per_block),
            u64::from(g.page_bytes),
        )
    }

    fn zone_geometry_of(
        &self,
        logical: u32,
    ) -> Result<firmware_core::tech::zns::zone::ZoneGeometry, ConfigError> {
        let unit = u64::from(self.ftl.mapping_unit_bytes.max(1));
        self.zns.geometry(logical, unit, self.block_group_bytes())
    }

    /// The zoned namespace of this configuration (`host.interface = zns`).
    pub fn zone_geometry(
        &self,
    ) -> Result<firmware_core::tech::zns::zone::ZoneGeometry, ConfigError> {
        let core = self.build_core()?;
        self.zone_geometry_of(core.logical_units)
    }

    /// A core rejection of this configuration as an input error naming the
    /// key most likely at fault; a metadata region that does not fit names
    /// `ftl.map_entries_per_page` (smaller pages need more of them).
    pub fn core_rejection(&self, e: firmware_core::Error) -> ConfigError {
        let region =
            matches!(e, firmware_core::Error::InvalidConfig(m) if m.contains("metadata region"));
        if region && self.ftl.map_entries_per_page > 0 {
            return ConfigError::check(
                "ftl.map_entries_per_page",
                format!(
                    "rejected by the core: {e}: {} entries per translation page need more \
                     translation pages than ftl.op_ratio {} leaves room for; raise either",
                    self.ftl.map_entries_per_page, self.ftl.op_ratio
                ),
            );
        }
        self.core_error_plain(e)
    }

    /// Maps a core error to the key that most likely causes it.
    fn core_error_plain(&self, e: firmware_core::Error) -> ConfigError {
        let msg = match e {
            firmware_core::Error::InvalidConfig(m) => m,
            _ => "",
        };
        let key = core_message_key(msg);
        ConfigError::check(key, format!("rejected by the core: {e}"))
    }

    /// Like [`Self::core_error_plain`], with capacity numbers for the
    /// over-provisioning check.
    fn core_error(&self, core: &firmware_core::Config, e: firmware_core::Error) -> ConfigError {
        let mut err = self.core_error_plain(e);
        if err.key == "ftl.op_ratio" {
            let g = &core.geometry;
            let physical = u64::from(g.total_units());
            let blocks = core.reserve_blocks_per_plane();
            let reserve =
                u64::from(blocks) * u64::from(g.planes()) * u64::from(g.units_per_block());
            let mut detail = format!(
                "; logical {} + GC reserve {} units ({blocks} blocks per plane: \
                 gc_trigger_blocks + 1, or gc_reserve_blocks + {} open blocks) > physical {} units",
                core.logical_units,
                reserve,
                firmware_core::config::OPEN_MARGIN,
                physical
            );
            if reserve < physical {
                let min = physical as f64 / (physical - reserve) as f64 - 1.0;
                detail.push_str(&format!("; op_ratio must be above {min:.6}"));
            }
            err.reason.push_str(&detail);
        }
        err
    }

    fn check_geometry(&self) -> Result<(), ConfigError> {
        self.check_shape()?;
        let g = &self.geometry;
        // Range of units per page.
        self.core_geometry()?;
        let units = u64::from(g.channels)
            * u64::from(g.dies_per_channel)
            * u64::from(g.planes_per_die)
            * u64::from(g.blocks_per_plane)
            * u64::from(g.pages_per_block)
            * u64::from(self.units_per_page());
        if units >= 1 << 31 {
            return Err(ConfigError::check(
                "geometry",
                format!("{units} physical mapping units; the core numbers at most 2^31 - 1"),
            ));
        }
        Ok(())
    }

    fn check_shape(&self) -> Result<(), ConfigError> {
        let g = &self.geometry;
        let nonzero: [(&str, u64); 7] = [
            ("geometry.channels", u64::from(g.channels)),
            ("geometry.dies_per_channel", u64::from(g.dies_per_channel)),
            ("geometry.planes_per_die", u64::from(g.planes_per_die)),
            ("geometry.blocks_per_plane", u64::from(g.blocks_per_plane)),
            ("geometry.pages_per_block", u64::from(g.pages_per_block)),
            ("geometry.page_bytes", u64::from(g.page_bytes)),
            (
                "geometry.pages_per_wordline",
                u64::from(g.pages_per_wordline),
            ),
        ];
        for (key, v) in nonzero {
            if v == 0 {
                return Err(ConfigError::check(key, "must be at least 1"));
            }
        }
        if g.pages_per_wordline > 4 {
            return Err(ConfigError::check(
                "geometry.pages_per_wordline",
                "must be 1 (SLC), 2 (MLC), 3 (TLC) or 4 (QLC)",
            ));
        }
        if !g
            .pages_per_block
            .is_multiple_of(u32::from(g.pages_per_wordline))
        {
            return Err(ConfigError::check(
                "geometry.pages_per_block",
                format!(
                    "{} is not a multiple of pages_per_wordline {}",
                    g.pages_per_block, g.pages_per_wordline
                ),
            ));
        }
        let unit = self.ftl.mapping_unit_bytes;
        if unit == 0 || !unit.is_multiple_of(512) {
            return Err(ConfigError::check(
                "ftl.mapping_unit_bytes",
                "must be a positive multiple of 512",
            ));
        }
        if !g.page_bytes.is_multiple_of(unit) {
            return Err(ConfigError::check(
                "geometry.page_bytes",
                format!(
                    "{} is not a multiple of ftl.mapping_unit_bytes {unit}",
                    g.page_bytes
                ),
            ));
        }
        Ok(())
    }

    fn check_timing(&self) -> Result<(), ConfigError> {
        let t = &self.timing;
        let positive = [
            ("timing.t_read_us", t.t_read_us),
            ("timing.t_prog_us", t.t_prog_us),
            ("timing.t_erase_us", t.t_erase_us),
            ("timing.channel_mts", t.channel_mts),
            ("timing.dram_mib_s", t.dram_mib_s),
            ("timing.host_mib_s", t.host_mib_s),
        ];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::check(
                    key,
                    format!("must be a finite number above 0, got {v}"),
                ));
            }
        }
        for (key, v) in [
            ("timing.t_cmd_ns", t.t_cmd_ns),
            ("timing.t_dl_ns", t.t_dl_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::check(
                    key,
                    format!("must be a finite number at or above 0, got {v}"),
                ));
            }
        }
        if self.gc.transaction_pages == 0 {
            return Err(ConfigError::check(
                "gc.transaction_pages",
                "must be at least 1",
            ));
        }
        if self.gc.cross_way() && self.copyback.mode != copyback::ModeKey::OffChip {
            return Err(ConfigError::check(
                "gc.destination",
                "channel moves GC pages between ways, which copyback cannot: needs copyback.mode = off-chip",
            ));
        }
        if self.gc.cross_way() && self.host.interface != InterfaceKey::Conventional {
            return Err(ConfigError::check(
                "gc.destination",
                "channel moves GC pages out of their placement handle's plane: needs host.interface = conventional",
            ));
        }
        Ok(())
    }

    fn check_ftl(&self) -> Result<(), ConfigError> {
        let f = &self.ftl;
        let g = &self.geometry;
        if !(f.op_ratio.is_finite() && f.op_ratio > 0.0) {
            return Err(ConfigError::check(
                "ftl.op_ratio",
                format!("must be a finite number above 0, got {}", f.op_ratio),
            ));
        }
        if f.gc_reserve_blocks == 0 {
            return Err(ConfigError::check(
                "ftl.gc_reserve_blocks",
                "must be at least 1 (GC needs a block to make progress)",
            ));
        }
        if f.gc_trigger_blocks < f.gc_reserve_blocks {
            return Err(ConfigError::check(
                "ftl.gc_trigger_blocks",
                format!(
                    "{} is below ftl.gc_reserve_blocks {}",
                    f.gc_trigger_blocks, f.gc_reserve_blocks
                ),
            ));
        }
        if u64::from(f.gc_trigger_blocks) + 2 > u64::from(g.blocks_per_plane) {
            return Err(ConfigError::check(
                "ftl.gc_trigger_blocks",
                format!(
                    "{} needs at least {} blocks per plane, geometry has {}",
                    f.gc_trigger_blocks,
                    u64::from(f.gc_trigger_blocks) + 2,
                    g.blocks_per_plane
                ),
            ));
        }
        if f.wl_check_interval == 0 {
            return Err(ConfigError::check(
                "ftl.wl_check_interval",
                "must be at least 1",
            ));
        }
        if f.max_inflight < 4 {
            return Err(ConfigError::check("ftl.max_inflight", "must be at least 4"));
        }
        if f.read_slots == 0 {
            return Err(ConfigError::check("ftl.read_slots", "must be at least 1"));
        }
        let upp = self.units_per_page();
        // A partly filled GC page plus one full page read must fit, or GC deadlocks.
        let need = (2 * upp).saturating_sub(1);
        if f.gc_slots_per_plane < need {
            return Err(ConfigError::check(
                "ftl.gc_slots_per_plane",
                format!(
                    "{} is below 2 x units per page - 1 = {need} (a partly filled GC page plus one page read)",
                    f.gc_slots_per_plane
                ),
            ));
        }
        let unit = u64::from(f.mapping_unit_bytes);
        let wb_units = self.buffer.write_buffer_bytes / unit;
        if wb_units < u64::from(upp) {
            return Err(ConfigError::check(
                "buffer.write_buffer_bytes",
                format!(
                    "{} bytes is less than one page ({} bytes)",
                    self.buffer.write_buffer_bytes, g.page_bytes
                ),
            ));
        }
        let planes =
            u64::from(g.channels) * u64::from(g.dies_per_channel) * u64::from(g.planes_per_die);
        let gc_slots = u64::from(f.gc_slots_per_plane) * planes;
        let slots = wb_units + u64::from(f.read_slots) + gc_slots;
        if slots > MAX_SLOTS {
            return Err(ConfigError::check(
                "buffer.write_buffer_bytes",
                format!(
                    "needs {slots} buffer slots (write buffer {wb_units} + ftl.read_slots {} + \
                     ftl.gc_slots_per_plane x planes {gc_slots}); the core allows {MAX_SLOTS}",
                    f.read_slots
                ),
            ));
        }
        Ok(())
    }

    fn check_host_and_nand(&self) -> Result<(), ConfigError> {
        if self.host.queue_depth == 0 {
            return Err(ConfigError::check("host.queue_depth", "must be at least 1"));
        }
        let n = &self.nand;
        if !(n.endurance_scale.is_finite() && n.endurance_scale > 0.0) {
            return Err(ConfigError::check(
                "nand.endurance_scale",
                "must be a positive number",
            ));
        }
        self.erase.fixed_mode()?;
        self.reparo.check(&self.controller)?;
        if n.rated_pe == 0 {
            return Err(ConfigError::check("nand.rated_pe", "must be at least 1"));
        }
        self.reliability()?;
        if !(n.retention_months.is_finite() && n.retention_months >= 0.0) {
            return Err(ConfigError::check(
                "nand.retention_months",
                format!(
                    "must be a finite number at or above 0, got {}",
                    n.retention_months
                ),
            ));
        }
        let probabilities = [
            ("nand.factory_bad_ratio", n.factory_bad_ratio),
            ("nand.program_fail_prob", n.program_fail_prob),
            ("nand.erase_fail_prob", n.erase_fail_prob),
        ];
        for (key, p) in probabilities {
            if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
                return Err(ConfigError::check(
                    key,
                    format!("must be in [0, 1], got {p}"),
                ));
            }
        }
        let max_seed = i64::MAX as u64;
        for (key, seed) in [("nand.seed", n.seed), ("sim.seed", self.sim.seed)] {
            if seed > max_seed {
                return Err(ConfigError::check(
                    key,
                    format!("must be at most {max_seed} (the TOML integer range)"),
                ));
            }
        }
        Ok(())
    }
}

/// The key behind a message of `firmware_core::Error::InvalidConfig` (first
/// matching needle wins, so more specific needles come first).
fn core_message_key(msg: &str) -> &'static str {
    const TABLE: [(&str, &str); 14] = [
        ("over-provisioning", "ftl.op_ratio"),
        ("op_ratio", "ftl.op_ratio"),
        ("logical capacity", "ftl.op_ratio"),
        ("list pages", "ftl.list_pages"),
        ("gc trigger", "ftl.gc_trigger_blocks"),
        ("gc thresholds", "ftl.gc_trigger_blocks"),
        ("gc reserve", "ftl.gc_reserve_blocks"),
        ("write buffer", "buffer.write_buffer_bytes"),
        ("gc slots", "ftl.gc_slots_per_plane"),
        ("read slots", "ftl.read_slots"),
        ("buffer slots", "buffer.write_buffer_bytes"),
        ("units per page", "geometry.page_bytes"),
        ("pages per wordline", "geometry.pages_per_block"),
        ("geometry", "geometry"),
    ];
    TABLE
        .iter()
        .find(|(needle, _)| msg.contains(needle))
        .map_or("geometry", |&(_, key)| key)
}

/// Edit distance between two short strings (for "did you mean" hints).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Longest word [`suggest`] looks for a near key for.
const SUGGEST_MAX_BYTES: usize = 96;

/// The closest candidate to `word`, if it is close enough to be a likely typo.
fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // Keys are short; a long word is no typo of one (and would cost its
    // length times each candidate's).
    if word.len() > SUGGEST_MAX_BYTES {
        return None;
    }
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .filter(|c| c.chars().count().abs_diff(word.chars().count()) <= limit)
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Serialises a configuration to a JSON tree (the generic form used by
/// `--set`, `get` and the TOML loader).
fn to_json(cfg: &SimConfig) -> Json {
    serde_json::to_value(cfg).unwrap_or(Json::Null)
}
