//! Every configuration key is documented in docs/config.md.

use sim_harness::config::SimConfig;

#[test]
fn every_key_is_documented() {
    let doc = include_str!("../../../docs/config.md");
    let missing: Vec<String> = SimConfig::keys()
        .into_iter()
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "undocumented keys: {missing:?}");
}
