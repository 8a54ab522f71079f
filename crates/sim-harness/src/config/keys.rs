//! The generic side of the configuration: every dotted key is found by
//! serialising the configuration to a JSON tree, so a new field in a section
//! needs no code here. Loading TOML, `--set`, `get` and `keys` live here.

use super::{line_of, suggest, to_json, ConfigError, SimConfig};
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
/// usual two-level shape (otherwise empty; lines then come from [`scan_line`]).
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

/// Best-effort line of the entry or table header that defines `path`, by a
/// line scan of headers and `key = value` lines.
fn scan_line(text: &str, path: &str) -> Option<u64> {
    let mut table = String::new();
    let related = |full: &str| {
        full == path
            || path.starts_with(&format!("{full}."))
            || full.starts_with(&format!("{path}."))
    };
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header.trim_start_matches('[');
            let name = name.split(']').next().unwrap_or("");
            table = normalise_key(name);
            if related(&table) {
                return Some(i as u64 + 1);
            }
            continue;
        }
        if let Some(eq) = line.find('=') {
            let key = normalise_key(&line[..eq]);
            let full = if table.is_empty() {
                key
            } else {
                format!("{table}.{key}")
            };
            if related(&full) {
                return Some(i as u64 + 1);
            }
        }
    }
    None
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

/// Loads TOML text on top of the defaults.
pub(super) fn from_toml_str(text: &str, source: &str) -> Result<SimConfig, ConfigError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map(|s| line_of(text, s.start));
        ConfigError::new(source, line, "", e.message().trim())
    })?;
    let offsets = value_offsets(text);
    let locate = |path: &str| -> Option<u64> {
        if let Some(&o) = offsets.get(path) {
            return Some(line_of(text, o));
        }
        let prefix = format!("{path}.");
        scan_line(text, path).or_else(|| {
            offsets
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix))
                .map(|(_, &o)| line_of(text, o))
                .min()
        })
    };
    let base = to_json(&SimConfig::default());
    let mut merged = base.clone();
    let mut errors: Vec<ConfigError> = Vec::new();
    let mut fail = |path: &str, reason: String| {
        errors.push(ConfigError::new(source, locate(path), path, reason));
    };
    for (section, value) in &table {
        let Some(Json::Object(fields)) = base.get(section) else {
            fail(section, unknown_key_reason(section));
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
                fail(&path, unknown_key_reason(&path));
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
    // Report the first problem in file order (unknown lines last).
    if let Some(first) = errors
        .into_iter()
        .enumerate()
        .min_by_key(|(i, e)| (e.line.unwrap_or(u64::MAX), *i))
        .map(|(_, e)| e)
    {
        return Err(first);
    }
    serde_json::from_value(merged).map_err(|e| ConfigError::new(source, None, "", e.to_string()))
}
