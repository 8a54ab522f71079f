//! `cargo xtask budget`: the core's resource figures, each beside its goal.
//! Printed numbers, not assertions.
//!
//! * (a) code size of `firmware-core` for `thumbv7em-none-eabihf` at opt-level
//!   "z": the QEMU firmware's ELF is parsed here and the sizes of its function
//!   symbols are summed by the crate their (mangled) path starts in.
//! * (b) static RAM of the core: `size_of::<Ftl>()` printed by the firmware on
//!   the target, the core's own statics from the ELF, and the lent-table bytes
//!   (formula per GiB, checked against `TableSizes::bytes()` by the
//!   `table_budget` example).
//! * (c) worst stack depth on the target: the firmware's painted-stack
//!   high-water mark.
//! * (d) instructions per host 4 KiB write and per mapping unit programmed
//!   in steady state, GC included, on the harsh shape (uniform random
//!   writes, 4 KiB pages) and the sequential one (4 KiB writes in order,
//!   16 KiB pages): callgrind on the `write_cost` example (the core over a
//!   null medium) with K and 2K measured writes; the difference over K.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ci;
use crate::qemu;

/// Goals the figures are printed against: the core with every technique
/// inside the firmware and compiled alone, and the baseline-only build
/// (`--no-default-features`) compiled alone.
const CODE_GOAL: u64 = 64 * 1024;
const ALONE_GOAL: u64 = 96 * 1024;
const BASELINE_GOAL: u64 = 48 * 1024;

/// The features of the five seed papers' techniques: the "every technique"
/// build the goal is for. The default features add the host-interface
/// features (zoned namespaces, placement handles), reported beside it.
const SEED_FEATURES: &str = "rcftl,longftl,dawid,copyless,reparo";
const WRITE_GOAL: u64 = 1_500;

/// Steady-state writes in the shorter callgrind run (the longer does twice as many).
const K: u64 = 100_000;

/// One section header of an ELF32 file.
struct Section {
    name: String,
    kind: u32,
    flags: u32,
    offset: u32,
    size: u32,
    link: u32,
}

/// One symbol of an ELF32 file.
struct Symbol {
    name: String,
    size: u32,
    kind: u8,
    shndx: u16,
}

const SHT_SYMTAB: u32 = 2;
const SHF_ALLOC: u32 = 2;
const SHF_EXECINSTR: u32 = 4;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;

/// A minimal little-endian ELF32 reader: section headers and the symbol table.
struct Elf {
    sections: Vec<Section>,
    symbols: Vec<Symbol>,
}

fn u16_at(b: &[u8], o: usize) -> Result<u16, String> {
    b.get(o..o + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| format!("ELF truncated at {o}"))
}

fn u32_at(b: &[u8], o: usize) -> Result<u32, String> {
    b.get(o..o + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("ELF truncated at {o}"))
}

fn c_str(b: &[u8], o: usize) -> String {
    let tail = b.get(o..).unwrap_or(&[]);
    let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
    String::from_utf8_lossy(&tail[..end]).into_owned()
}

impl Elf {
    fn parse(b: &[u8]) -> Result<Elf, String> {
        if b.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 1, 1]) {
            return Err("not a little-endian ELF32 file".into());
        }
        let shoff = u32_at(b, 0x20)? as usize;
        let shentsize = usize::from(u16_at(b, 0x2e)?);
        let shnum = usize::from(u16_at(b, 0x30)?);
        let shstrndx = usize::from(u16_at(b, 0x32)?);
        let mut raw = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let o = shoff + i * shentsize;
            raw.push((
                u32_at(b, o)?,
                Section {
                    name: String::new(),
                    kind: u32_at(b, o + 4)?,
                    flags: u32_at(b, o + 8)?,
                    offset: u32_at(b, o + 16)?,
                    size: u32_at(b, o + 20)?,
                    link: u32_at(b, o + 24)?,
                },
            ));
        }
        let names_at = raw
            .get(shstrndx)
            .map(|(_, s)| s.offset as usize)
            .ok_or("no section-name table")?;
        let sections: Vec<Section> = raw
            .into_iter()
            .map(|(n, mut s)| {
                s.name = c_str(b, names_at + n as usize);
                s
            })
            .collect();
        let mut symbols = Vec::new();
        if let Some(symtab) = sections.iter().find(|s| s.kind == SHT_SYMTAB) {
            let strtab = sections
                .get(symtab.link as usize)
                .ok_or("symbol table without string table")?
                .offset as usize;
            let base = symtab.offset as usize;
            for i in 0..(symtab.size as usize / 16) {
                let o = base + i * 16;
                symbols.push(Symbol {
                    name: c_str(b, strtab + u32_at(b, o)? as usize),
                    size: u32_at(b, o + 8)?,
                    kind: b.get(o + 12).ok_or("ELF truncated")? & 0xf,
                    shndx: u16_at(b, o + 14)?,
                });
            }
        }
        Ok(Elf { sections, symbols })
    }

    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
}

/// The crate a mangled Rust symbol's path starts in (`<T as Trait>` impls count
/// for the crate of `T`); `runtime` for unmangled symbols (startup, memcpy...).
fn crate_of(sym: &str) -> String {
    if let Some(rest) = sym.strip_prefix("_ZN") {
        // Legacy mangling: _ZN <len><ident> ...
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let len: usize = rest[..digits].parse().unwrap_or(0);
        let ident = rest.get(digits..digits + len).unwrap_or("");
        let ident = ident.strip_prefix("_$LT$").unwrap_or(ident);
        if ident.starts_with("$RF$") || ident.starts_with("$BP$") {
            // `<&T as Trait>`: a blanket impl, instantiated for some caller's type.
            return "<&T as core::fmt::*>".to_string();
        }
        let ident = ident.strip_prefix("impl$u20$").unwrap_or(ident);
        let end = ["..", "$u20$", "$GT$", "$LT$"]
            .iter()
            .filter_map(|p| ident.find(p))
            .min()
            .unwrap_or(ident.len());
        return ident[..end].to_string();
    }
    if sym.starts_with("_R") {
        // v0 mangling: the first crate root is C[s<disambiguator>_]<len><ident>.
        if let Some(i) = sym.find("Cs") {
            let tail = &sym[i + 2..];
            if let Some(u) = tail.find('_') {
                let t = &tail[u + 1..];
                let digits = t.chars().take_while(char::is_ascii_digit).count();
                let len: usize = t[..digits].parse().unwrap_or(0);
                // An identifier starting with `_` or a digit follows a `_` separator.
                let start = if t[digits..].starts_with('_') {
                    digits + 1
                } else {
                    digits
                };
                if let Some(id) = t.get(start..start + len) {
                    // `__rustc::rust_begin_unwind` is the firmware's panic handler.
                    return if id == "__rustc" { "runtime" } else { id }.to_string();
                }
            }
        }
        return "rust (v0)".to_string();
    }
    "runtime".to_string()
}

/// The host cargo target directory (honours `CARGO_TARGET_DIR`).
fn host_target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                ci::root().join(p)
            }
        })
        .unwrap_or_else(|| ci::root().join("target"))
}

/// `.text*` and `.rodata*` bytes of firmware-core compiled alone for the
/// target with the workspace's `firmware` profile (opt-level "z",
/// codegen-units 1, panic abort) but without LTO, emitted as an object file:
/// the core's code as a library, before any cross-crate inlining.
///
/// Each feature set `name` builds in its own target directory, so the
/// object read back is the one this feature set produced (in a shared
/// directory a cached build of one set leaves the other's newer object).
fn core_object_size(name: &str, features: &[&str]) -> Result<(u64, u64), String> {
    let dir = host_target_dir().join(format!("budget-{name}"));
    let dir_s = dir.to_string_lossy().into_owned();
    let mut args = vec![
        "rustc",
        "-q",
        "-p",
        "firmware-core",
        "--target",
        ci::TARGET,
        "--target-dir",
        dir_s.as_str(),
        "--profile",
        "firmware",
        "--config",
        "profile.firmware.lto=\"off\"",
    ];
    args.extend_from_slice(features);
    args.extend_from_slice(&["--", "--emit=obj"]);
    output_of("cargo", &args)?;
    let deps = dir.join(ci::TARGET).join("firmware").join("deps");
    let mut objects: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&deps)
        .map_err(|e| format!("{}: {e}", deps.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("firmware_core-") && n.ends_with(".o"))
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    objects.sort();
    // Newest first; LTO builds leave bitcode objects that do not parse as ELF.
    for (_, path) in objects.iter().rev() {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let Ok(elf) = Elf::parse(&bytes) else {
            continue;
        };
        let sum = |prefix: &str| {
            elf.sections
                .iter()
                .filter(|s| s.name == prefix || s.name.starts_with(&format!("{prefix}.")))
                .map(|s| u64::from(s.size))
                .sum::<u64>()
        };
        return Ok((sum(".text"), sum(".rodata")));
    }
    Err(format!(
        "no firmware-core object file in {}",
        deps.display()
    ))
}

/// Runs a host command in the workspace root and returns its stdout.
pub fn output_of(program: &str, args: &[&str]) -> Result<String, String> {
    eprintln!("+ {program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .current_dir(ci::root())
        .output()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{program} {}` failed with {}:\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Instructions callgrind counts for one run of `bin k shape`, and its stdout.
fn callgrind(bin: &Path, k: u64, shape: &str) -> Result<(u64, String), String> {
    let out_file = std::env::temp_dir().join(format!("xtask-callgrind-{k}-{shape}.out"));
    let out_arg = format!("--callgrind-out-file={}", out_file.display());
    let bin_s = bin.to_string_lossy().into_owned();
    let k_s = k.to_string();
    let stdout = output_of(
        "valgrind",
        &["--tool=callgrind", "--quiet", &out_arg, &bin_s, &k_s, shape],
    )?;
    let text = std::fs::read_to_string(&out_file)
        .map_err(|e| format!("read {}: {e}", out_file.display()))?;
    let _ = std::fs::remove_file(&out_file);
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or("no instruction total in the callgrind output")?;
    Ok((total, stdout))
}

fn kib(n: u64) -> String {
    format!("{n} B ({:.1} KiB)", n as f64 / 1024.0)
}

/// `cargo xtask budget`.
pub fn run() -> Result<(), String> {
    qemu::prepare()?;
    qemu::ensure_apt("valgrind", "valgrind")?;

    // (a) and the ELF half of (b).
    let elf_path = qemu::build(false)?;
    let bytes = std::fs::read(&elf_path).map_err(|e| format!("{}: {e}", elf_path.display()))?;
    let elf = Elf::parse(&bytes)?;
    let text_idx: Vec<u16> = elf
        .sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.flags & (SHF_ALLOC | SHF_EXECINSTR) == SHF_ALLOC | SHF_EXECINSTR)
        .map(|(i, _)| i as u16)
        .collect();
    let mut code: BTreeMap<String, u64> = BTreeMap::new();
    for s in elf.symbols.iter().filter(|s| s.kind == STT_FUNC) {
        if text_idx.contains(&s.shndx) {
            *code.entry(crate_of(&s.name)).or_default() += u64::from(s.size);
        }
    }
    let ram = |s: &Symbol| {
        elf.sections
            .get(usize::from(s.shndx))
            .is_some_and(|sec| sec.name == ".data" || sec.name == ".bss")
    };
    let core_statics: u64 = elf
        .symbols
        .iter()
        .filter(|s| s.kind == STT_OBJECT && ram(s) && crate_of(&s.name) == "firmware_core")
        .map(|s| u64::from(s.size))
        .sum();
    let core_code = code.get("firmware_core").copied().unwrap_or(0);
    let text = elf.section(".text").map_or(0, |s| u64::from(s.size));
    let rodata = elf.section(".rodata").map_or(0, |s| u64::from(s.size));
    let lent = elf.section(".lent").map_or(0, |s| u64::from(s.size));
    let ram_static = [".data", ".bss", ".uninit"]
        .iter()
        .filter_map(|n| elf.section(n))
        .map(|s| u64::from(s.size))
        .sum::<u64>();

    let (base_obj_text, base_obj_rodata) =
        core_object_size("baseline", &["--no-default-features"])?;
    let (core_obj_text, core_obj_rodata) = core_object_size(
        "seeds",
        &["--no-default-features", "--features", SEED_FEATURES],
    )?;
    let (all_obj_text, all_obj_rodata) = core_object_size("all", &[])?;
    // The same two builds at the speed-leaning "s", for comparison.
    let at_s = "profile.firmware.opt-level=\"s\"";
    let (base_s_text, _) =
        core_object_size("baseline-s", &["--config", at_s, "--no-default-features"])?;
    let (core_s_text, _) = core_object_size(
        "seeds-s",
        &[
            "--config",
            at_s,
            "--no-default-features",
            "--features",
            SEED_FEATURES,
        ],
    )?;

    // (b) and (c) from the target.
    let boot = qemu::check_clean(qemu::boot(&elf_path, "m4")?)?;
    let ftl_size = boot.figure("size_of::<Ftl>");
    let stack = boot.figure("stack high-water");

    // Lent tables per GiB (host; element sizes equal the target's, printed by the firmware).
    let tables = output_of(
        "cargo",
        &[
            "run",
            "--release",
            "-q",
            "-p",
            "ftl-scenario",
            "--example",
            "table_budget",
        ],
    )?;

    // (d) callgrind.
    output_of(
        "cargo",
        &[
            "build",
            "--release",
            "-q",
            "-p",
            "ftl-scenario",
            "--example",
            "write_cost",
        ],
    )?;
    let bin = host_target_dir()
        .join("release")
        .join("examples")
        .join("write_cost");
    let harsh = WriteCost::measure(&bin, "random")?;
    let sequential = WriteCost::measure(&bin, "sequential")?;

    println!();
    println!("== budget of firmware-core ==");
    println!();
    println!(
        "(a) code size of firmware-core, thumbv7em-none-eabihf, opt-level \"z\"   goal < {}",
        kib(CODE_GOAL)
    );
    let verdict = |v: u64, goal: u64| if v <= goal { "OK" } else { "OVER" };
    println!(
        "    alone, every technique:  .text {}, .rodata {}   goal <= {}   {}",
        kib(core_obj_text),
        kib(core_obj_rodata),
        kib(ALONE_GOAL),
        verdict(core_obj_text, ALONE_GOAL)
    );
    println!(
        "    alone, default features: .text {}, .rodata {}   (every technique plus zns, placement and crossway)",
        kib(all_obj_text),
        kib(all_obj_rodata),
    );
    println!(
        "    alone, baseline only:    .text {}, .rodata {}   goal <= {}   {}",
        kib(base_obj_text),
        kib(base_obj_rodata),
        kib(BASELINE_GOAL),
        verdict(base_obj_text, BASELINE_GOAL)
    );
    println!(
        "    the same at opt-level \"s\": every technique .text {}, baseline only .text {} (for comparison)",
        kib(core_s_text),
        kib(base_s_text),
    );
    println!(
        "                    (the crate compiled by itself with the `firmware` profile, LTO off,"
    );
    println!("                    --emit=obj, the five technique features, default features and");
    println!("                    --no-default-features; the generic core");
    println!(
        "                    is compiled through the FullFtl entry-point table of `instances.rs`)"
    );
    println!(
        "    in the firmware: {}   {}",
        kib(core_code),
        if core_code < CODE_GOAL { "OK" } else { "OVER" }
    );
    println!("                    (function symbols of the QEMU firmware's ELF, fat LTO, by the crate their");
    println!("                    mangled path starts in; only what the scenario uses. The medium's Nand");
    println!(
        "                    methods stay out of line on the target, so they count as nand_model;"
    );
    println!("                    core calls inlined into the scenario count as the scenario's.)");
    println!(
        "    whole firmware .text {} (.rodata {}), the hard upper bound, by crate:",
        kib(text),
        kib(rodata)
    );
    let mut rows: Vec<(&String, &u64)> = code.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1));
    for (k, v) in rows {
        println!("      {k:<24} {v:>7} B");
    }
    println!();
    println!("(b) static RAM of the core, excluding lent tables");
    match ftl_size {
        Some(n) => println!("    size_of::<Ftl>() on the target: {n} B (the core's whole state besides lent tables)"),
        None => println!("    size_of::<Ftl>() on the target: not printed by the firmware"),
    }
    println!("    firmware-core statics in .data/.bss: {core_statics} B");
    println!(
        "    (firmware total .data+.bss+.uninit {ram_static} B; lent arrays in PSRAM .lent {lent} B)"
    );
    println!("    lent tables (goal: a small fraction of capacity):");
    for l in tables.lines() {
        println!("      {l}");
    }
    println!();
    println!("(c) worst stack depth on the target (painted stack, QEMU run)");
    match stack {
        Some(n) => {
            println!("    {n} B (boot + format + workload + verify, medium and driver included)")
        }
        None => println!("    not printed by the firmware"),
    }
    println!();
    println!("(d) CPU instructions per host 4 KiB write, steady state, GC amortised");
    println!(
        "    method: callgrind, `write_cost` example (core + SyncDriver over a null medium), drive of"
    );
    println!(
        "    crates/sim-harness/benches/core_write.rs (2x2 dies, 256 blocks x 64 pages, 7 % OP), after"
    );
    println!(
        "    fill + 2x overwrite in the shape's order; (2K run - K run) instructions / K writes"
    );
    harsh.print(
        "harsh: uniform random 4 KiB writes, 4 KiB pages",
        WRITE_GOAL,
        Some(UNIT_GOAL),
    );
    sequential.print(
        "sequential 4 KiB writes, 16 KiB pages (4 units per page)",
        SEQUENTIAL_WRITE_GOAL,
        None,
    );
    Ok(())
}

/// Goal of instructions per host 4 KiB write on the sequential shape.
const SEQUENTIAL_WRITE_GOAL: u64 = 1_500;

/// Goal of instructions per mapping unit programmed on the harsh shape (at
/// its 9.62 units programmed per host write, GC included).
const UNIT_GOAL: u64 = 1_000;

/// Instructions per steady-state host write of one `write_cost` shape.
struct WriteCost {
    one: u64,
    two: u64,
    /// GC units programmed during the K-write run.
    gc_units: u64,
}

impl WriteCost {
    /// Runs `write_cost` under callgrind with K and 2K writes of `shape`.
    fn measure(bin: &Path, shape: &str) -> Result<WriteCost, String> {
        let (one, out_one) = callgrind(bin, K, shape)?;
        let (two, _) = callgrind(bin, 2 * K, shape)?;
        let gc_units = out_one
            .split_whitespace()
            .zip(out_one.split_whitespace().skip(1))
            .find_map(|(n, w)| (w == "gc").then(|| n.parse::<u64>().ok()).flatten())
            .unwrap_or(0);
        Ok(WriteCost { one, two, gc_units })
    }

    /// Prints instructions per host write (against `goal`) and per
    /// mapping unit programmed (against `unit_goal`, if the shape has one).
    fn print(&self, shape: &str, goal: u64, unit_goal: Option<u64>) {
        let per_write = self.two.saturating_sub(self.one) / K;
        let units_per_write = (K + self.gc_units) as f64 / K as f64;
        println!("    {shape}:");
        println!(
            "      {per_write} instructions per host write   goal < {goal}   {}",
            if per_write < goal { "OK" } else { "OVER" }
        );
        let per_unit = per_write as f64 / units_per_write;
        let unit_verdict = match unit_goal {
            Some(g) if per_unit <= g as f64 => format!("   goal <= {g}   OK"),
            Some(g) => format!("   goal <= {g}   OVER"),
            None => String::new(),
        };
        println!(
            "      units programmed per host write (1 + GC relocations): {units_per_write:.2}, so {per_unit:.0} instructions per unit programmed{unit_verdict}",
        );
        println!(
            "      ({} - {}) instructions / {K} writes",
            self.two, self.one
        );
    }
}
