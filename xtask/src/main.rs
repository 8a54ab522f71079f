//! Project automation: `cargo xtask ci` runs every check CI runs.

mod budget;
mod ci;
mod damage;
mod fs_crash;
mod fuzz;
mod nbd;
mod qemu;
mod same_figures;

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask <ci|nbd|fs-crash|damage|qemu|budget|same-figures|fuzz>");
    eprintln!("  ci      formatting, lints (host and thumbv7em), tests, target build, nbd, qemu");
    eprintln!(
        "  nbd     ftl serve --nbd against fio, qemu-img and qemu-io (installs them if missing)"
    );
    eprintln!(
        "  fs-crash [--cuts N] [--seed S]  ext4 on ftl serve --image through N SIGKILLs (default 200)"
    );
    eprintln!(
        "  damage [--count N] [--seed S] [--data-only]  random damage to image files, every unit read back (default 500)"
    );
    eprintln!("  qemu    boot the bare-metal Cortex-M4 firmware on QEMU, clean and corrupted");
    eprintln!("  budget  code size, RAM, stack and instructions per write of the core");
    eprintln!(
        "  same-figures BASE [--speed] [--only NAME]...  the figures of BASE's ftl and the working tree's are identical"
    );
    eprintln!(
        "  fuzz [--seconds N] [TARGET...]  run the cargo-fuzz targets of fuzz/ (default 25 s each)"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(),
        Some("nbd") => nbd::run(),
        Some("qemu") => qemu::run(),
        Some("budget") => budget::run(),
        Some("same-figures") => same_figures::run(args.get(1..).unwrap_or(&[])),
        Some("fuzz") => fuzz::run(args.get(1..).unwrap_or(&[])),
        Some("fs-crash") => fs_crash::run(args.get(1..).unwrap_or(&[])),
        Some("damage") => damage::run(args.get(1..).unwrap_or(&[])),
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
