//! The generic side of the configuration: every dotted key is found by
//! serialising the configuration to a JSON tree, so a new field in a section
//! needs no code here. Loading TOML, `--set`, `get` and `keys` live here.

use super::{suggest, to_json, ConfigError, SimConfig};
use serde_json::{Number, Value as Json};
use std::collections::BTreeMap;

/// Source name of `--set` errors.
const SET_SOURCE: &str = "--set";

/// Every dotted key of the configuration, sorted.
pub(super) fn all_keys() -> Vec<String> {
    let mut keys = Vec::new();
    if let Json::Object(sections) = to_json(&SimConfig::default()) {
        for (section, fields) in sections {
            if let Json::Object(fields) = fields {
                keys.extend(fields.keys().map(|k| format!("{section}.{k}")));
            }
        }
    }
    keys.sort();
    keys
}

/// Section names, sorted.
fn all_sections() -> Vec<String> {
    match to_json(&SimConfig::default()) {
        Json::Object(sections) => sections.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// "unknown key" with a hint: the nearest key by spelling, or a key with the
/// same name in another section.
fn unknown_key_reason(path: &str) -> String {
    let keys = all_keys();
    let sections = all_sections();
    let hint = if path.contains('.') {
        suggest(path, keys.iter().map(String::as_str))
            .map(str::to_string)
            .or_else(|| {
                let leaf = path.rsplit('.').next().unwrap_or(path);
                keys.iter()
                    .find(|k| k.rsplit('.').next() == Some(leaf))
                    .cloned()
            })
    } else {
        suggest(path, sections.iter().map(String::as_str))
            .map(str::to_string)
            .or_else(|| {
                keys.iter()
                    .find(|k| k.rsplit('.').next() == Some(path))
                    .cloned()
            })
    };
    match hint {
        Some(h) => format!("unknown key (did you mean {h}?)"),
        None => "unknown key".to_string(),
    }
}

/// The value of a dotted key as text.
pub(super) fn get(cfg: &SimConfig, key: &str) -> Option<String> {
    let (section, leaf) = key.split_once('.')?;
    let tree = to_json(cfg);
    match tree.get(section)?.get(leaf)? {
        Json::Object(_) | Json::Array(_) => None,
        Json::String(s) => Some(s.clone()),
        Json::Null => Some("null".to_string()),
        other => Some(other.to_string()),
    }
}

/// Applies `section.key=value`.
pub(super) fn apply_set(cfg: &mut SimConfig, assignment: &str) -> Result<(), ConfigError> {
    let Some((key, text)) = assignment.split_once('=') else {
        return Err(ConfigError::new(
            SET_SOURCE,
            None,
            assignment.trim(),
            "expected section.key=value (missing `=`)",
        ));
    };
    let key = key.trim();
    let text = text.trim();
    let err = |reason: String| ConfigError::new(SET_SOURCE, None, key, reason);
    if key.is_empty() {
        return Err(err("empty key; expected section.key=value".to_string()));
    }
    let mut tree = to_json(cfg);
    let Some((section, leaf)) = key.split_once('.') else {
        return Err(if tree.get(key).is_some() {
            err("is a section; give section.key=value".to_string())
        } else {
            err(unknown_key_reason(key))
        });
    };
    let current = match tree.get(section).and_then(|s| s.get(leaf)) {
        Some(Json::Object(_)) | None => return Err(err(unknown_key_reason(key))),
        Some(v) => v,
    };
    let value = parse_typed(current, text).map_err(&err)?;
    if let Some(slot) = tree.get_mut(section).and_then(|s| s.get_mut(leaf)) {
        *slot = value;
    }
    let updated: SimConfig =
        serde_json::from_value(tree).map_err(|e| err(format!("invalid value `{text}`: {e}")))?;
    *cfg = updated;
    Ok(())
}

/// Parses `text` as the type of the current value of a key.
pub(super) fn parse_typed(current: &Json, text: &str) -> Result<Json, String> {
    match current {
        Json::Bool(_) => match text {
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            _ => Err(format!("invalid value `{text}`: expected true or false")),
        },
        Json::Number(n) if n.is_f64() => {
            let cleaned: String = text.chars().filter(|&c| c != '_').collect();
            let x: f64 = cleaned
                .parse()
                .map_err(|_| format!("invalid value `{text}`: expected a number"))?;
            Number::from_f64(x)
                .map(Json::Number)
                .ok_or_else(|| format!("invalid value `{text}`: must be a finite number"))
        }
        Json::Number(_) => {
            let cleaned: String = text.chars().filter(|&c| c != '_').collect();
            if let Ok(i) = cleaned.parse::<i64>() {
                Ok(match u64::try_from(i) {
                    Ok(u) => Json::from(u),
                    Err(_) => Json::from(i),
                })
            } else if let Ok(u) = cleaned.parse::<u64>() {
                Ok(Json::from(u))
            } else {
                Err(format!("invalid value `{text}`: expected an integer"))
            }
        }
        Json::String(_) => {
            let unquoted = text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))
                .unwrap_or(text);
            Ok(Json::String(unquoted.to_string()))
        }
        Json::Null | Json::Array(_) | Json::Object(_) => {
            Err("this key cannot be set from the command line".to_string())
        }
    }
}

/// Converts a TOML value found at a leaf key to JSON.
fn toml_to_json(v: &toml::Value) -> Result<Json, String> {
    Ok(match v {
        toml::Value::String(s) => Json::String(s.clone()),
        toml::Value::Integer(i) => Json::from(*i),
        toml::Value::Float(f) => Number::from_f64(*f)
            .map(Json::Number)
            .ok_or_else(|| format!("must be a finite number, got {f}"))?,
        toml::Value::Boolean(b) => Json::Bool(*b),
        toml::Value::Datetime(d) => Json::String(d.to_string()),
        toml::Value::Array(items) => {
            Json::Array(items.iter().map(toml_to_json).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(_) => return Err("expected a value, found a table".to_string()),
    })
}

/// Byte offsets of the values of `section.key` entries, when the text has the
/// usual two-level shape (otherwise empty; lines then come from [`FirstLines`]).
fn value_offsets(text: &str) -> BTreeMap<String, usize> {
    type Doc = BTreeMap<String, BTreeMap<String, toml::Spanned<toml::Value>>>;
    let mut out = BTreeMap::new();
    if let Ok(doc) = toml::from_str::<Doc>(text) {
        for (section, entries) in doc {
            for (key, value) in entries {
                out.insert(format!("{section}.{key}"), value.span().start);
            }
        }
    }
    out
}

/// Normalises a TOML key (`a . "b"` -> `a.b`).
fn normalise_key(raw: &str) -> String {
    raw.split('.')
        .map(|part| part.trim().trim_matches(|c| c == '"' || c == '\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// Start offsets of the lines of a text, to turn byte offsets into line
/// numbers by binary search (one pass over the text, not one per error).
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineStarts(starts)
    }

    /// 1-based line of byte `offset`.
    fn line_of(&self, offset: usize) -> u64 {
        self.0.partition_point(|&s| s <= offset) as u64
    }
}

/// The first line of every table header and `key = value` line, by its
/// full dotted name: a best-effort line scan, made once, for the entries
/// that [`value_offsets`] does not place (sections, deeper keys).
struct FirstLines(BTreeMap<String, u64>);

impl FirstLines {
    fn new(text: &str) -> Self {
        let mut first = BTreeMap::new();
        let mut table = String::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let full = if let Some(header) = line.strip_prefix('[') {
                let name = header.trim_start_matches('[');
                table = normalise_key(name.split(']').next().unwrap_or(""));
                table.clone()
            } else if let Some(eq) = line.find('=') {
                let key = normalise_key(&line[..eq]);
                if table.is_empty() {
                    key
                } else {
                    format!("{table}.{key}")
                }
            } else {
                continue;
            };
            first.entry(full).or_insert(i as u64 + 1);
        }
        FirstLines(first)
    }

    /// The first line defining `path`, a table above it, or an entry below it.
    fn line_of(&self, path: &str) -> Option<u64> {
        let own = self.0.get(path).copied();
        let above = path
            .match_indices('.')
            .filter_map(|(i, _)| self.0.get(&path[..i]).copied())
            .min();
        let prefix = format!("{path}.");
        let below = self
            .0
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, &l)| l)
            .min();
        [own, above, below].into_iter().flatten().min()
    }
}

/// Unknown keys named one by one in an error; the rest are counted.
const UNKNOWN_SHOWN: usize = 5;

/// The unknown keys of a file, in file order, as one phrase: the first
/// [`UNKNOWN_SHOWN`] by name, then how many more.
fn unknown_summary(unknown: &[(Option<u64>, usize, String)]) -> String {
    let names: Vec<String> = unknown
        .iter()
        .take(UNKNOWN_SHOWN)
        .map(|(line, _, path)| match line {
            Some(l) => format!("{} (line {l})", crate::clip::clip(path)),
            None => crate::clip::clip(path),
        })
        .collect();
    let rest = unknown.len().saturating_sub(UNKNOWN_SHOWN);
    let more = if rest > 0 {
        format!(" and {rest} more")
    } else {
        String::new()
    };
    format!(
        "{} unknown keys in all: {}{more}",
        unknown.len(),
        names.join(", ")
    )
}

/// Checks one leaf value by deserialising the defaults with only that value changed.
fn check_leaf(base: &Json, section: &str, key: &str, value: &Json) -> Result<(), String> {
    let mut tree = base.clone();
    if let Some(slot) = tree.get_mut(section).and_then(|s| s.get_mut(key)) {
        *slot = value.clone();
    }
    serde_json::from_value::<SimConfig>(tree)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Loads TOML text on top of the defaults. Every entry is checked; the
/// error is the first problem in file order, followed by a summary of every
/// unknown key (a file of many unknown keys costs time linear in its size:
/// hints are looked for only for the key reported).
pub(super) fn from_toml_str(text: &str, source: &str) -> Result<SimConfig, ConfigError> {
    let starts = LineStarts::new(text);
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map(|s| starts.line_of(s.start));
        ConfigError::new(source, line, "", e.message().trim())
    })?;
    let offsets = value_offsets(text);
    let scanned = std::cell::OnceCell::new();
    let locate = |path: &str| -> Option<u64> {
        if let Some(&o) = offsets.get(path) {
            return Some(starts.line_of(o));
        }
        scanned.get_or_init(|| FirstLines::new(text)).line_of(path)
    };
    let base = to_json(&SimConfig::default());
    let mut merged = base.clone();
    let mut errors: Vec<ConfigError> = Vec::new();
    // Unknown keys: (line, order found, dotted path), reasons made later.
    let mut unknown: Vec<(Option<u64>, usize, String)> = Vec::new();
    let mut fail = |path: &str, reason: String| {
        errors.push(ConfigError::new(source, locate(path), path, reason));
    };
    for (section, value) in &table {
        let Some(Json::Object(fields)) = base.get(section) else {
            unknown.push((locate(section), unknown.len(), section.clone()));
            continue;
        };
        let toml::Value::Table(entries) = value else {
            fail(
                section,
                format!("is a section; expected a table [{section}]"),
            );
            continue;
        };
        for (key, v) in entries {
            let path = format!("{section}.{key}");
            if !fields.contains_key(key) {
                unknown.push((locate(&path), unknown.len(), path));
                continue;
            }
            let json = match toml_to_json(v) {
                Ok(j) => j,
                Err(reason) => {
                    fail(&path, reason);
                    continue;
                }
            };
            if let Err(reason) = check_leaf(&base, section, key, &json) {
                fail(&path, reason);
                continue;
            }
            if let Some(slot) = merged.get_mut(section).and_then(|s| s.get_mut(key)) {
                *slot = json;
            }
        }
    }
    // Unknown keys in file order (unplaced ones last).
    unknown.sort_by_key(|(line, i, _)| (line.unwrap_or(u64::MAX), *i));
    // Report the first problem in file order (unknown lines last).
    let first = errors
        .into_iter()
        .enumerate()
        .min_by_key(|(i, e)| (e.line.unwrap_or(u64::MAX), *i))
        .map(|(_, e)| e);
    if let Some((line, _, path)) = unknown.first() {
        let at = |l: Option<u64>| l.unwrap_or(u64::MAX);
        let (mut err, own) = match first {
            Some(e) if at(e.line) <= at(*line) => (e, false),
            _ => (
                ConfigError::new(source, *line, path, unknown_key_reason(path)),
                true,
            ),
        };
        if unknown.len() > 1 || !own {
            err.reason = format!("{}; {}", err.reason, unknown_summary(&unknown));
        }
        return Err(err);
    }
    if let Some(e) = first {
        return Err(e);
    }
    serde_json::from_value(merged).map_err(|e| ConfigError::new(source, None, "", e.to_string()))
}
