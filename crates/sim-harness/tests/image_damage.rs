//! Bounded runs of the damage harness (`cargo xtask damage` runs the full
//! one): damage on images stopped cleanly and by a kill is read back as
//! errors, never as data, and every unit the damage did not touch reads
//! back correct.

use sim_harness::image::damage::{run, Kind, Report};

fn damages(count: u64, seed: u64, data_only: bool) -> Report {
    let dir = std::env::temp_dir().join(format!(
        "ftl-damage-test-{}-{seed}-{data_only}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let rep = run(count, seed, &dir, data_only, |_| {}).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    rep
}

#[test]
fn damaged_data_pages_are_errors_never_data() {
    let rep = damages(16, 7, true);
    let t = rep.total();
    assert_eq!(t.damages, 16, "{}", rep.table());
    assert_eq!(t.wrong, 0, "units served wrong:\n{}", rep.table());
    assert_eq!(t.untouched_bad, 0, "untouched units lost:\n{}", rep.table());
    assert_eq!(t.refused_with_headers, 0, "{:?}", rep.refusals);
    assert!(t.error > 0, "no damage was detected:\n{}", rep.table());
    assert!(t.correct > 0, "{}", rep.table());
}

/// Every kind, metadata pages and the capacitor region included. A journal
/// cut short after a kill looks like a torn last batch (`docs/nbd.md`), so
/// truncation after a kill is the one row allowed to serve older data.
#[test]
fn damage_of_every_kind_is_an_error_never_data() {
    let rep = damages(40, 3, false);
    let mut metadata_hits = 0;
    for (killed, kind, c) in &rep.rows {
        if !(*killed && *kind == Kind::Truncate) {
            assert_eq!(c.wrong, 0, "units served wrong:\n{}", rep.table());
        }
        assert_eq!(c.untouched_bad, 0, "untouched units lost:\n{}", rep.table());
        metadata_hits += u64::from(!*killed && *kind == Kind::Truncate) * c.error;
    }
    assert!(
        metadata_hits > 0,
        "no truncation of a cleanly stopped image was drawn:\n{}",
        rep.table()
    );
}
