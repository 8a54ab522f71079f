//! SVG charts for experiment results: grouped bars, lines and CDFs.
//!
//! Drawn with `plotters`' SVG backend, which writes text as `<text>`
//! elements and estimates text sizes itself, so no font files are needed.
//! Every chart has a title, axis labels (which should carry units) and a
//! legend.

use plotters::chart::SeriesAnno;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Chart size in pixels.
const SIZE: (u32, u32) = (900, 560);

/// Height of the x label area of line charts, px.
const XY_LABEL_PX: u32 = 45;

/// Title and axis labels of a chart; axis labels should name their unit.
#[derive(Clone, Debug)]
pub struct Axes<'a> {
    /// Chart title.
    pub title: &'a str,
    /// Label of the x axis, with unit.
    pub x: &'a str,
    /// Label of the y axis, with unit.
    pub y: &'a str,
}

/// One named series of (x, y) points.
#[derive(Clone, Debug, PartialEq)]
pub struct XySeries {
    /// Legend entry.
    pub name: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// A drawing failure (only possible for degenerate input).
fn err(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

/// Upper end of an axis holding values up to `max`, with headroom.
fn top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.1
    } else {
        1.0
    }
}

/// Pixels a legend of `n` series takes from the top of the plot (rows of
/// about 20 px, plus its border and margin).
fn legend_px(n: usize) -> f64 {
    20.0 * n as f64 + 16.0
}

/// Height in pixels of the plotting area of a chart whose x label area is
/// `x_label_px` tall (the caption and margins take the rest).
fn plot_px(x_label_px: u32) -> f64 {
    f64::from(SIZE.1) - 40.0 - 24.0 - f64::from(x_label_px)
}

/// Top of a y axis from `ymin` whose data reach `ymax`, with headroom so a
/// legend of `n` series in an upper corner sits above every data point
/// instead of covering it.
fn top_with_legend(ymin: f64, ymax: f64, n: usize, x_label_px: u32) -> f64 {
    let t = top(ymax);
    let frac = (legend_px(n) / plot_px(x_label_px)).min(0.6);
    let above = (ymax - frac * ymin) / (1.0 - frac);
    t.max(above * 1.02)
}

/// Lower and upper end of an axis spanning `vals`, padded so a single value works.
fn span(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = vals
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo > hi {
        (0.0, 1.0)
    } else if hi - lo < 1e-12 {
        (lo - 0.5, hi + 0.5)
    } else {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    }
}

/// A white drawing area over `buf` with the title drawn.
fn area<'b>(buf: &'b mut String) -> Result<DrawingArea<SVGBackend<'b>, Shift>, String> {
    let root = SVGBackend::with_string(buf, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    Ok(root)
}

/// Grouped bar chart: one group per category, one bar per series in each
/// group (`values[s][c]` is series `s` in category `c`; `None` draws no bar).
pub fn grouped_bars(
    axes: &Axes<'_>,
    categories: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> Result<String, String> {
    let n = categories.len().max(1);
    let k = series.len().max(1);
    let max = series
        .iter()
        .flat_map(|s| s.1.iter().flatten().copied())
        .fold(0.0f64, f64::max);
    let mut buf = String::new();
    {
        let root = area(&mut buf)?;
        let rotate = n > 6 || categories.iter().any(|c| c.len() > 90 / n);
        let x_label_px = if rotate { 130 } else { 40 };
        let y_top = top_with_legend(0.0, max, series.len(), x_label_px);
        let mut chart = ChartBuilder::on(&root)
            .caption(axes.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(x_label_px)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..y_top)
            .map_err(err)?;
        // Category names are drawn below the axis by hand: plotters centres
        // rotated tick labels on the tick, which puts half of them inside
        // the plot.
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n + 1)
            .x_label_formatter(&|_| String::new())
            .x_desc(axes.x)
            .y_desc(axes.y)
            .draw()
            .map_err(err)?;
        for (i, name) in categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, 0.0));
            let style = if rotate {
                ("sans-serif", 12)
                    .into_font()
                    .transform(FontTransform::Rotate90)
                    .into_text_style(&root)
                    .pos(Pos::new(HPos::Left, VPos::Center))
            } else {
                ("sans-serif", 13)
                    .into_font()
                    .into_text_style(&root)
                    .pos(Pos::new(HPos::Center, VPos::Top))
            };
            root.draw(&Text::new(name.as_str(), (px, py + 8), style))
                .map_err(err)?;
        }
        let width = 0.8 / k as f64;
        for (s, (name, values)) in series.iter().enumerate() {
            let color = Palette99::pick(s).to_rgba();
            let bars = values.iter().enumerate().filter_map(|(c, v)| {
                let v = (*v)?;
                let x0 = c as f64 - 0.4 + s as f64 * width;
                Some(Rectangle::new(
                    [(x0, 0.0), (x0 + width * 0.95, v)],
                    color.filled(),
                ))
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// Line chart: one polyline with point markers per series.
pub fn lines(axes: &Axes<'_>, series: &[XySeries]) -> Result<String, String> {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = span(all().map(|p| p.0));
    let ymax = all().map(|p| p.1).fold(0.0f64, f64::max);
    let ymin = all().map(|p| p.1).fold(0.0f64, f64::min);
    xy_chart(
        axes,
        series,
        x0..x1,
        (ymin, top_with_legend(ymin, ymax, series.len(), XY_LABEL_PX)),
        true,
        SeriesLabelPosition::UpperRight,
    )
}

/// Line chart over a logarithmic x axis (positive x only; values spanning
/// orders of magnitude, such as ratios from 1 % to 100 %).
pub fn lines_log_x(axes: &Axes<'_>, series: &[XySeries]) -> Result<String, String> {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let xs = || all().map(|p| p.0).filter(|x| *x > 0.0);
    let lo = xs().fold(f64::INFINITY, f64::min);
    let hi = xs().fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo / 1.2, hi * 1.2)
    } else {
        (1.0, 10.0)
    };
    let ymax = all().map(|p| p.1).fold(0.0f64, f64::max);
    let ymin = all().map(|p| p.1).fold(0.0f64, f64::min);
    let positive: Vec<XySeries> = series
        .iter()
        .map(|s| XySeries {
            name: s.name.clone(),
            points: s.points.iter().copied().filter(|p| p.0 > 0.0).collect(),
        })
        .collect();
    xy_chart(
        axes,
        &positive,
        (lo..hi).log_scale(),
        (ymin, top_with_legend(ymin, ymax, series.len(), XY_LABEL_PX)),
        true,
        SeriesLabelPosition::UpperRight,
    )
}

/// CDF chart: each series is (value, cumulative fraction) points, drawn as a
/// line on a logarithmic value axis (latencies span orders of magnitude)
/// and a 0..1 fraction axis. Values below `MIN_LOG` are drawn at it.
pub fn cdf(axes: &Axes<'_>, series: &[XySeries]) -> Result<String, String> {
    const MIN_LOG: f64 = 0.1;
    let vals = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0.max(MIN_LOG)))
    };
    let lo = vals().fold(f64::INFINITY, f64::min);
    let hi = vals().fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo, hi * 1.2)
    } else {
        (MIN_LOG, 1.0)
    };
    let clamped: Vec<XySeries> = series
        .iter()
        .map(|s| XySeries {
            name: s.name.clone(),
            points: s.points.iter().map(|p| (p.0.max(MIN_LOG), p.1)).collect(),
        })
        .collect();
    xy_chart(
        axes,
        &clamped,
        (lo..hi).log_scale(),
        (0.0, 1.0),
        false,
        SeriesLabelPosition::LowerRight,
    )
}

/// A chart builder with the title of `axes` and room for axis labels.
fn xy_builder<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    axes: &Axes<'_>,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(axes.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(XY_LABEL_PX)
        .y_label_area_size(70);
    b
}

/// Draws the grid, ticks and axis labels of `axes`.
fn mesh<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    axes: &Axes<'_>,
) -> Result<(), String>
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    chart
        .configure_mesh()
        .x_desc(axes.x)
        .y_desc(axes.y)
        .draw()
        .map_err(err)
}

/// Two line series over one x axis: `left` against the left y axis
/// (labelled `axes.y`) and `right` against a right y axis labelled `y2`,
/// each axis scaled to its own series.
pub fn dual_lines(
    axes: &Axes<'_>,
    y2: &str,
    left: &XySeries,
    right: &XySeries,
) -> Result<String, String> {
    let both = || left.points.iter().chain(right.points.iter());
    let (x0, x1) = span(both().map(|p| p.0));
    let ymax = |s: &XySeries| {
        let m = s.points.iter().map(|p| p.1).fold(0.0f64, f64::max);
        top_with_legend(0.0, m, 2, XY_LABEL_PX)
    };
    let mut buf = String::new();
    {
        let root = area(&mut buf)?;
        let mut chart = xy_builder(&root, axes)
            .right_y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0f64..ymax(left))
            .map_err(err)?
            .set_secondary_coord(x0..x1, 0f64..ymax(right));
        mesh(&mut chart, axes)?;
        chart
            .configure_secondary_axes()
            .y_desc(y2)
            .draw()
            .map_err(err)?;
        let (c0, c1) = (Palette99::pick(0).to_rgba(), Palette99::pick(1).to_rgba());
        let anno = chart.draw_series(line_of(left, c0)).map_err(err)?;
        labelled(anno, left, c0);
        let anno = chart
            .draw_secondary_series(line_of(right, c1))
            .map_err(err)?;
        labelled(anno, right, c1);
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// Lines (with point markers if `markers`) over the x axis `x` and the
/// linear y range `y`, legend at `at`.
fn xy_chart<X>(
    axes: &Axes<'_>,
    series: &[XySeries],
    x: X,
    y: (f64, f64),
    markers: bool,
    at: SeriesLabelPosition,
) -> Result<String, String>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut buf = String::new();
    {
        let root = area(&mut buf)?;
        let mut chart = xy_builder(&root, axes)
            .build_cartesian_2d(x, y.0..y.1)
            .map_err(err)?;
        mesh(&mut chart, axes)?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let anno = chart.draw_series(line_of(s, color)).map_err(err)?;
            labelled(anno, s, color);
            if markers {
                chart
                    .draw_series(s.points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                    .map_err(err)?;
            }
        }
        legend(&mut chart, at)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// The polyline of series `s` in `color`.
fn line_of<DB: DrawingBackend>(s: &XySeries, color: RGBAColor) -> LineSeries<DB, (f64, f64)> {
    LineSeries::new(s.points.iter().copied(), color.stroke_width(2))
}

/// Names a drawn line series `s` in the legend, with a line swatch.
fn labelled<DB: DrawingBackend>(anno: &mut SeriesAnno<'_, DB>, s: &XySeries, color: RGBAColor) {
    anno.label(s.name.as_str())
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
}

/// Draws the legend of every labelled series at `at`.
fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    at: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legends_get_headroom_above_the_data() {
        for n in 1..=8 {
            for (ymin, ymax) in [(0.0, 100.0), (-5.0, 3.0), (0.0, 1e-3)] {
                for x_label in [40, 130, XY_LABEL_PX] {
                    let top = top_with_legend(ymin, ymax, n, x_label);
                    // Pixels between the highest point and the plot's top.
                    let free = plot_px(x_label) * (top - ymax) / (top - ymin);
                    assert!(
                        free >= legend_px(n),
                        "n {n}: {free} px < legend {}",
                        legend_px(n)
                    );
                }
            }
        }
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    /// The colour of series `s` as the SVG writes it.
    fn colour(s: usize) -> String {
        let RGBAColor(r, g, b, _) = Palette99::pick(s).to_rgba();
        format!("\"#{r:02X}{g:02X}{b:02X}\"")
    }

    /// `element`s drawn in the colour of series `s`.
    fn drawn(svg: &str, element: &str, s: usize) -> usize {
        svg.lines()
            .filter(|l| l.contains(element) && l.contains(&colour(s)))
            .count()
    }

    fn well_formed(svg: &str) {
        assert!(svg.trim_start().starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(count(svg, "<text"), count(svg, "</text>"));
    }

    #[test]
    fn grouped_bars_have_title_axes_legend_and_one_rect_per_bar() {
        let cats: Vec<String> = ["oltp", "ntrx", "varmail"].map(String::from).to_vec();
        let series = vec![
            (
                "off-chip".to_string(),
                vec![Some(1.0), Some(1.0), Some(1.0)],
            ),
            ("rcFTL2".to_string(), vec![Some(1.4), None, Some(1.2)]),
        ];
        let axes = Axes {
            title: "Normalised throughput",
            x: "workload",
            y: "throughput (x off-chip)",
        };
        let svg = grouped_bars(&axes, &cats, &series).unwrap();
        well_formed(&svg);
        for t in [
            "Normalised throughput",
            "workload",
            "throughput (x off-chip)",
            "oltp",
            "varmail",
            "rcFTL2",
            "off-chip",
        ] {
            assert!(svg.contains(t), "missing {t}");
        }
        // Bars plus one legend swatch per series.
        assert_eq!(drawn(&svg, "<rect", 0), 3 + 1);
        assert_eq!(drawn(&svg, "<rect", 1), 2 + 1);
    }

    #[test]
    fn lines_and_cdf_draw_one_polyline_per_series_plus_legend() {
        let series = vec![
            XySeries {
                name: "oltp".into(),
                points: vec![(2.0, 1.2), (3.0, 1.4), (4.0, 1.5)],
            },
            XySeries {
                name: "ntrx".into(),
                points: vec![(2.0, 1.1), (3.0, 1.3), (4.0, 1.7)],
            },
        ];
        let axes = Axes {
            title: "Throughput vs threshold",
            x: "max copyback threshold (copies)",
            y: "throughput (MiB/s)",
        };
        let svg = lines(&axes, &series).unwrap();
        well_formed(&svg);
        for t in [
            "Throughput vs threshold",
            "max copyback threshold (copies)",
            "throughput (MiB/s)",
            "oltp",
            "ntrx",
        ] {
            assert!(svg.contains(t), "missing {t}");
        }
        // The line plus its legend entry, and a marker per point.
        for s in 0..2 {
            assert_eq!(drawn(&svg, "<polyline", s), 2);
            assert_eq!(drawn(&svg, "<circle", s), 3);
        }
        let c = cdf(
            &Axes {
                title: "Latency CDF",
                x: "latency (us)",
                y: "fraction of requests",
            },
            &series[..1],
        )
        .unwrap();
        well_formed(&c);
        assert!(c.contains("Latency CDF") && c.contains("latency (us)"));
        assert_eq!(drawn(&c, "<polyline", 0), 2);
        let l = lines_log_x(&axes, &series).unwrap();
        well_formed(&l);
        for s in 0..2 {
            assert_eq!(drawn(&l, "<polyline", s), 2);
            assert_eq!(drawn(&l, "<circle", s), 3);
        }
    }

    #[test]
    fn empty_input_still_draws() {
        let axes = Axes {
            title: "t",
            x: "x (u)",
            y: "y (u)",
        };
        assert!(grouped_bars(&axes, &[], &[]).unwrap().contains("x (u)"));
        assert!(lines(&axes, &[]).unwrap().contains("y (u)"));
        assert!(lines_log_x(&axes, &[]).unwrap().contains("y (u)"));
    }
}
