//! The core's layering, checked on its source: which files import which.
//!
//! Every `crate::…` path in a file is an edge to the file that defines the
//! module it names (the path's longest prefix that is a module file).
//! The test fails on an import cycle among the files, on a lower layer
//! importing a higher one, and on `impl … Ftl` outside the core layer's
//! folder; it also checks that the base tables carry no technique state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers, lowest first. A file may import its own layer and those below.
/// `config` names every technique's configuration type (small, always
/// built leaves of their folders), so those sit at the bottom with it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "medium",
        &[
            "error",
            "list",
            "medium",
            "config",
            "tech::rcftl::policy",
            "tech::rcftl::ctt",
            "tech::longftl::config",
            "tech::reparo::config",
            "tech::placement::config",
            "tech::crossway::config",
        ],
    ),
    ("space", &["space"]),
    ("map", &["map"]),
    ("persist", &["persist"]),
    ("core", &["ftl"]),
    ("tech", &["tech"]),
    ("assembly", &["full", "instances", "driver", "lib"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Module path (`ftl::gc`, `lib` for the root) of every source file.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src(), &mut files);
    let mut m = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|l| l == "mod") {
            parts.pop();
        }
        let name = parts.join("::");
        m.insert(name, std::fs::read_to_string(&f).unwrap());
    }
    m
}

/// The source without comments (line comments and doc comments) and
/// without its unit tests (a `#[cfg(test)]` item at the end of the file),
/// which may use the whole crate.
fn code(text: &str) -> String {
    let text = match text.find("\n#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module files each file imports (`crate::a::b::Item` -> `a::b`).
fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (name, text) in mods {
        let c = code(text);
        let mut to = BTreeSet::new();
        let mut rest = c.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + 7..];
            let path: String = rest
                .chars()
                .take_while(|ch| ch.is_alphanumeric() || *ch == '_' || *ch == ':')
                .collect();
            let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            // Longest prefix that is a module file; items of the root are `lib`.
            let mut target = "lib".to_string();
            for n in (1..=segs.len()).rev() {
                let cand = segs[..n].join("::");
                if mods.contains_key(&cand) {
                    target = cand;
                    break;
                }
            }
            if &target != name {
                to.insert(target);
            }
        }
        g.insert(name.clone(), to);
    }
    g
}

fn layer_of(module: &str) -> usize {
    let mut best = (0usize, usize::MAX);
    for (i, (_, prefixes)) in LAYERS.iter().enumerate() {
        for p in *prefixes {
            let hit = module == *p || module.starts_with(&format!("{p}::"));
            if hit && p.len() > best.0 {
                best = (p.len(), i);
            }
        }
    }
    assert_ne!(best.1, usize::MAX, "module {module} is in no layer");
    best.1
}

#[test]
fn no_import_cycle_among_the_core_files() {
    let mods = modules();
    let g = edges(&mods);
    // Depth-first search for a back edge, reporting the cycle.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut cyc = stack[at..].to_vec();
                    cyc.push(m.clone());
                    return Some(cyc);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, &g, &mut state, &mut stack) {
                panic!("import cycle: {}", c.join(" -> "));
            }
        }
    }
}

#[test]
fn layers_import_downwards_only() {
    let mods = modules();
    let mut bad = Vec::new();
    for (from, to) in edges(&mods) {
        for t in to {
            if layer_of(&t) > layer_of(&from) {
                bad.push(format!(
                    "{from} ({}) imports {t} ({})",
                    LAYERS[layer_of(&from)].0,
                    LAYERS[layer_of(&t)].0
                ));
            }
        }
    }
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn only_the_core_layer_implements_ftl() {
    let mods = modules();
    let bad: Vec<&String> = mods
        .iter()
        .filter(|(name, text)| {
            !name.starts_with("ftl")
                && code(text).lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with("impl") && (l.contains(" Ftl<") || l.contains(" Ftl {"))
                })
        })
        .map(|(n, _)| n)
        .collect();
    assert!(bad.is_empty(), "impl Ftl outside ftl/: {bad:?}");
}

#[test]
fn base_tables_carry_no_technique_state() {
    let mods = modules();
    for (name, text) in &mods {
        for ty in ["pub struct BlockMeta", "pub struct PlaneState"] {
            let Some(at) = text.find(ty) else { continue };
            let body = &text[at..at + text[at..].find("\n}").unwrap()];
            for word in [
                "quota",
                "ber",
                "cb_",
                "copyback",
                "guard",
                "gerase",
                "lidf",
                "shadow",
                "refcount",
                "superblock",
                "list_page",
            ] {
                let hit = code(body)
                    .lines()
                    .any(|l| l.trim_start().starts_with("pub") && l.contains(word));
                assert!(!hit, "{ty} in {name} has a field naming `{word}`");
            }
        }
    }
}
