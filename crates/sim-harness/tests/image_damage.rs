//! A bounded run of the damage harness (`cargo xtask damage` runs the full
//! one): damage to data pages and their records, on images stopped cleanly
//! and by a kill, is read back as errors, never as data, and every unit
//! the damage did not touch reads back correct.

#[test]
fn damaged_data_pages_are_errors_never_data() {
    let dir = std::env::temp_dir().join(format!("ftl-damage-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rep = sim_harness::image::damage::run(16, 7, &dir, true, |_| {}).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let t = rep.total();
    assert_eq!(t.damages, 16, "{}", rep.table());
    assert_eq!(t.wrong, 0, "units served wrong:\n{}", rep.table());
    assert_eq!(t.untouched_bad, 0, "untouched units lost:\n{}", rep.table());
    assert_eq!(t.refused_with_headers, 0, "{:?}", rep.refusals);
    assert!(t.error > 0, "no damage was detected:\n{}", rep.table());
    assert!(t.correct > 0, "{}", rep.table());
}
