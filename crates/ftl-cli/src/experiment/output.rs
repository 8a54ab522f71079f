//! What an experiment writes: the results table (CSV and markdown), every
//! cell's full report (JSON) and the SVG charts.

use std::path::Path;

use serde_json::{json, Value};

use super::registry::{Cell, ChartDef, ChartKind, Experiment};
use crate::chart::{self, Axes, XySeries};
use crate::CliError;

/// Columns every results table starts with.
const FIXED: [&str; 5] = ["label", "group", "series", "preset", "workload"];

/// The results table: column names and one row of text cells per cell
/// (empty text for a missing value).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, one per experiment cell, in cell order.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Index of a column.
    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// The numeric value of `column` in row `r`, if any.
    fn num(&self, r: usize, column: &str) -> Option<f64> {
        let c = self.col(column)?;
        self.rows.get(r)?.get(c)?.parse().ok()
    }
}

/// The value at a dotted path of a report, if it is there.
pub fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |cur, k| cur.get(k))
}

/// Text of a report value for the table: numbers and strings as they are,
/// anything else (or nothing) empty.
pub(crate) fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// Builds the results table of `exp` from its cells and their reports.
pub fn table(exp: &Experiment, cells: &[Cell], reports: &[Value]) -> Table {
    let mut columns: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    for c in cells {
        for (name, _) in &c.attrs {
            if !columns.contains(name) {
                columns.push(name.clone());
            }
        }
    }
    let attr_end = columns.len();
    columns.extend(exp.keys.iter().map(|k| k.to_string()));
    columns.extend(exp.normalise.iter().map(|n| format!("{}.norm", n.key)));
    let mut rows: Vec<Vec<String>> = cells
        .iter()
        .zip(reports)
        .map(|(c, r)| {
            let mut row = vec![
                c.label.clone(),
                c.group.clone(),
                c.series.clone(),
                c.preset.clone(),
                c.workload.clone(),
            ];
            for name in &columns[FIXED.len()..attr_end] {
                let v = c.attrs.iter().find(|(n, _)| n == name);
                row.push(v.map(|(_, v)| v.clone()).unwrap_or_default());
            }
            row.extend(exp.keys.iter().map(|k| text(lookup(r, k))));
            row
        })
        .collect();
    for n in exp.normalise {
        let value = |r: &Value| lookup(r, n.key).and_then(Value::as_f64);
        for (i, c) in cells.iter().enumerate() {
            let base = cells
                .iter()
                .zip(reports)
                .find(|(b, _)| b.group == c.group && b.series == n.baseline_series)
                .and_then(|(_, r)| value(r));
            let norm = match (value(&reports[i]), base) {
                (Some(v), Some(b)) if b > 0.0 => json!(v / b).to_string(),
                _ => String::new(),
            };
            rows[i].push(norm);
        }
    }
    Table { columns, rows }
}

/// CSV text (RFC 4180 quoting).
pub fn csv(t: &Table) -> String {
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let line = |cells: &[String]| cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
    let mut out = line(&t.columns);
    out.push('\n');
    for r in &t.rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// A markdown table; fractional numbers are rounded to 3 decimals.
pub fn markdown(t: &Table) -> String {
    let show = |s: &String| match s.parse::<f64>() {
        Ok(v) if s.contains('.') || s.contains('e') => format!("{v:.3}"),
        _ => s.clone(),
    };
    let mut out = format!("| {} |\n", t.columns.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(t.columns.len())));
    for r in &t.rows {
        let cells: Vec<String> = r.iter().map(show).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Every cell's description and full report.
pub fn report_json(exp: &Experiment, cells: &[Cell], reports: &[Value]) -> Value {
    let list: Vec<Value> = cells
        .iter()
        .zip(reports)
        .map(|(c, r)| {
            json!({
                "label": c.label,
                "group": c.group,
                "series": c.series,
                "preset": c.preset,
                "sets": c.sets,
                "workload": c.workload,
                "report": r,
            })
        })
        .collect();
    json!({"experiment": exp.name, "description": exp.description, "cells": list})
}

/// Unique values in first-seen order.
fn unique<'a>(it: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in it {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// Draws one chart as SVG text.
pub fn draw(
    def: &ChartDef,
    cells: &[Cell],
    reports: &[Value],
    t: &Table,
) -> Result<String, String> {
    let axes = Axes {
        title: def.title,
        x: def.x,
        y: def.y,
    };
    match def.kind {
        ChartKind::Bars => {
            let groups = unique(cells.iter().map(|c| c.group.as_str()));
            let row_of = |g: &str, s: Option<&str>| {
                cells
                    .iter()
                    .position(|c| c.group == g && s.iter().all(|s| c.series == *s))
            };
            let series: Vec<(String, Vec<Option<f64>>)> = if let [(col, _)] = def.columns {
                unique(cells.iter().map(|c| c.series.as_str()))
                    .into_iter()
                    .map(|s| {
                        let vals = groups
                            .iter()
                            .map(|g| row_of(g, Some(&s)).and_then(|r| t.num(r, col)))
                            .collect();
                        (s, vals)
                    })
                    .collect()
            } else {
                def.columns
                    .iter()
                    .map(|(col, name)| {
                        let vals = groups
                            .iter()
                            .map(|g| row_of(g, None).and_then(|r| t.num(r, col)))
                            .collect();
                        (name.to_string(), vals)
                    })
                    .collect()
            };
            chart::grouped_bars(&axes, &groups, &series)
        }
        ChartKind::Lines | ChartKind::SeriesLines => {
            let col = def.columns.first().map_or("", |c| c.0);
            let line_of = |c: &Cell| match def.kind {
                ChartKind::SeriesLines => format!("{} {}", c.workload, c.series),
                _ => c.group.clone(),
            };
            let on_chart = || cells.iter().enumerate().filter(|(_, c)| c.x.is_some());
            let lines: Vec<String> = on_chart().map(|(_, c)| line_of(c)).collect();
            let series = unique(lines.iter().map(String::as_str))
                .into_iter()
                .map(|g| {
                    let mut points: Vec<(f64, f64)> = on_chart()
                        .filter(|(_, c)| line_of(c) == g)
                        .filter_map(|(r, c)| Some((c.x?, t.num(r, col)?)))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    XySeries { name: g, points }
                })
                // A group without values for this column is not on the chart.
                .filter(|s| !s.points.is_empty())
                .collect::<Vec<_>>();
            chart::lines(&axes, &series)
        }
        ChartKind::Cdf => {
            let key = def.columns.first().map_or("", |c| c.0);
            let series: Vec<XySeries> = cells
                .iter()
                .zip(reports)
                .map(|(c, r)| XySeries {
                    name: c.label.clone(),
                    points: cdf_points(lookup(r, key)),
                })
                .collect();
            chart::cdf(&axes, &series)
        }
    }
}

/// The `[value, fraction]` pairs of a report's CDF key (empty if absent).
pub fn cdf_points(v: Option<&Value>) -> Vec<(f64, f64)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `results.csv`, `table.md`, `report.json`, the charts and the
/// experiment's own summary files into `dir` (created if missing); returns
/// the markdown table followed by the summary's markdown, and the report.
pub fn write_all(
    dir: &Path,
    exp: &Experiment,
    cells: &[Cell],
    reports: &[Value],
) -> Result<(String, Value), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Run(format!("{}: {e}", dir.display())))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
    };
    let t = table(exp, cells, reports);
    let md = markdown(&t);
    let json = report_json(exp, cells, reports);
    write("results.csv", &csv(&t))?;
    write("table.md", &md)?;
    let text = serde_json::to_string_pretty(&json).map_err(|e| CliError::Run(e.to_string()))?;
    write("report.json", &text)?;
    for def in exp.charts {
        let svg = draw(def, cells, reports, &t).map_err(CliError::Run)?;
        write(def.file, &svg)?;
    }
    let mut md = md;
    if let Some(summary) = exp.summary {
        md.push('\n');
        md.push_str(&summary(dir, cells, reports).map_err(CliError::Run)?);
    }
    Ok((md, json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::registry::{experiment, Normalise};

    fn cell(label: &str, group: &str, series: &str) -> Cell {
        Cell {
            label: label.into(),
            group: group.into(),
            series: series.into(),
            x: None,
            preset: "default".into(),
            sets: vec![],
            workload: "oltp".into(),
            job: crate::synth::SynthJob {
                profile: None,
                params: Default::default(),
                qd: None,
                precondition: false,
                precondition_fast: false,
                verify: false,
                lifetime: false,
            },
            attrs: vec![("pe".into(), "0".into())],
        }
    }

    #[test]
    fn missing_keys_are_empty_and_normalisation_uses_the_group_baseline() {
        let base = experiment("rcftl").unwrap();
        let exp = Experiment {
            keys: &["perf.throughput_mib_s", "epm.active_blocks_max"],
            normalise: &[Normalise {
                key: "perf.throughput_mib_s",
                baseline_series: "off-chip",
            }],
            ..*base
        };
        let cells = vec![
            cell("a off", "a", "off-chip"),
            cell("a rc", "a", "rcFTL2"),
            cell("b rc", "b", "rcFTL2"),
        ];
        let reports = vec![
            json!({"perf": {"throughput_mib_s": 100.0}}),
            json!({"perf": {"throughput_mib_s": 150.0}}),
            json!({"perf": {"throughput_mib_s": 90.0}}),
        ];
        let t = table(&exp, &cells, &reports);
        assert_eq!(
            t.columns,
            [
                "label",
                "group",
                "series",
                "preset",
                "workload",
                "pe",
                "perf.throughput_mib_s",
                "epm.active_blocks_max",
                "perf.throughput_mib_s.norm"
            ]
        );
        assert_eq!(t.rows[1][7], "", "missing key is empty");
        assert_eq!(t.num(1, "perf.throughput_mib_s.norm"), Some(1.5));
        assert_eq!(t.rows[2][8], "", "no baseline in group b");
        let text = csv(&t);
        assert_eq!(text.lines().count(), 4);
        assert!(text
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("a rc,a,rcFTL2,default,oltp,0,150.0,,1.5"));
        let md = markdown(&t);
        assert!(
            md.contains("| a rc | a | rcFTL2 | default | oltp | 0 | 150.000 |  | 1.500 |"),
            "{md}"
        );
        let svg = draw(&exp.charts[0], &cells, &reports, &t).unwrap();
        assert!(svg.contains("rcFTL2") && svg.contains(exp.charts[0].title));
    }

    #[test]
    fn csv_quotes_commas() {
        let t = Table {
            columns: vec!["a".into()],
            rows: vec![vec!["x,\"y\"".into()]],
        };
        assert_eq!(csv(&t), "a\n\"x,\"\"y\"\"\"\n");
    }
}
