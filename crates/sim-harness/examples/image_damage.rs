//! `cargo xtask damage`: random damage to image files, every unit read back
//! (see `sim_harness::image::damage`). Exits 1 if a unit is served wrong.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut count, mut seed, mut data_only) = (500u64, 1u64, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--data-only" {
            data_only = true;
            continue;
        }
        let v = it.next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), v) {
            ("--count", Some(n)) => count = n,
            ("--seed", Some(s)) => seed = s,
            _ => {
                eprintln!(
                    "usage: image_damage [--count N] [--seed S] [--data-only]: bad argument {a}"
                );
                return ExitCode::from(2);
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("ftl-damage-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("damage: {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let t = std::time::Instant::now();
    let r = sim_harness::image::damage::run(count, seed, &dir, data_only, |l| eprintln!("{l}"));
    let _ = std::fs::remove_dir_all(&dir);
    let rep = match r {
        Ok(r) => r,
        Err(e) => {
            eprintln!("damage: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", rep.table());
    for r in &rep.refusals {
        println!("refused with a header left: {r}");
    }
    let t_all = rep.total();
    println!(
        "{count} damages (seed {seed}) in {:.1} s: {} units correct, {} errors, {} served wrong, \
         {} files refused (headers gone), {} refused with a header left, {} untouched units not correct",
        t.elapsed().as_secs_f64(),
        t_all.correct,
        t_all.error,
        t_all.wrong,
        t_all.refused,
        t_all.refused_with_headers,
        t_all.untouched_bad
    );
    if t_all.wrong > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
