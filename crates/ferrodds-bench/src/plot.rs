//! The plots: round trip by payload (ours, Cyclone's, the UDP floor) and throughput by
//! payload, as SVG (plotters' SVG backend: text is left to the viewer's fonts, so nothing
//! here needs fontconfig or freetype).

use std::path::Path;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::parse::RoundTrip;
use crate::report::size_label;
use crate::results::{Agg, Results};
use crate::stats::ThroughputFigures;
use crate::suite::{Variant, MAX_DATAGRAM};

/// One line of a panel: a name, a colour, and a value per payload (or a gap).
struct Series {
    name: String,
    colour: RGBColor,
    values: Vec<Option<f64>>,
}

const CYCLONE: RGBColor = RGBColor(31, 119, 180);
const OURS: RGBColor = RGBColor(214, 39, 40);
const OURS_EXTRA: RGBColor = RGBColor(255, 127, 14);
const FLOOR_BLOCK: RGBColor = RGBColor(90, 90, 90);
const FLOOR_BUSY: RGBColor = RGBColor(44, 160, 44);

fn values(sizes: &[u64], f: impl Fn(u64) -> Option<Agg>) -> Vec<Option<f64>> {
    sizes.iter().map(|&s| f(s).map(|a| a.value)).collect()
}

/// A plot: a title, a y-axis name, where the legend goes, and the lines.
struct Panel {
    title: String,
    y_name: String,
    legend: SeriesLabelPosition,
    series: Vec<Series>,
}

/// Draws panels side by side over `labels` (log y).
fn draw(path: &Path, labels: &[String], panels: &[Panel]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let width = 560 * u32::try_from(panels.len().max(1)).unwrap_or(1);
    let root = SVGBackend::new(path, (width, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    let n = labels.len();
    for (area, panel) in areas.iter().zip(panels) {
        let all: Vec<f64> = panel
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .filter(|v| *v > 0.0 && v.is_finite())
            .collect();
        if all.is_empty() || n == 0 {
            continue;
        }
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min) / 1.5;
        // Room above the data for the legend.
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 8.0;
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            // Integer ranges are inclusive here: n categories are 0..n - 1.
            .build_cartesian_2d((0..n - 1).into_segmented(), (lo..hi).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_labels(n)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&|v| {
                if *v >= 10.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            })
            .light_line_style(WHITE.mix(0.0))
            .y_desc(panel.y_name.as_str())
            .x_desc("payload")
            .draw()
            .map_err(|e| err(&e))?;
        for s in &panel.series {
            let points: Vec<(SegmentValue<usize>, f64)> = s
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.filter(|v| *v > 0.0)
                        .map(|v| (SegmentValue::CenterOf(i), v))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let colour = s.colour;
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, colour.filled())),
                )
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(panel.legend.clone())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A line per variant over `sizes`.
fn by_variant(
    sizes: &[u64],
    variants: &[(Variant, RGBColor)],
    f: impl Fn(u64, Variant) -> Option<Agg>,
) -> Vec<Series> {
    variants
        .iter()
        .map(|&(v, colour)| Series {
            name: v.label().to_string(),
            colour,
            values: values(sizes, |s| f(s, v)),
        })
        .collect()
}

/// Round trip (p50 and p99) by payload.
pub(crate) fn latency(r: &Results, path: &Path) -> Result<(), String> {
    let sizes = &r.plan.latency_sizes;
    let labels: Vec<String> = sizes.iter().map(|&s| size_label(s)).collect();
    let mut variants = vec![(Variant::Cyclone, CYCLONE), (Variant::Ours, OURS)];
    if r.busy_poll {
        variants.push((Variant::OursBusyPoll, OURS_EXTRA));
    }
    let panel = |which: &str, f: fn(&RoundTrip) -> f64| {
        let mut series = by_variant(sizes, &variants, |s, v| r.latency(s, v, f));
        for (mode, colour) in [("block", FLOOR_BLOCK), ("busy", FLOOR_BUSY)] {
            series.push(Series {
                name: format!("UDP floor, {mode}"),
                colour,
                values: values(sizes, |s| r.floor(s.min(MAX_DATAGRAM), mode, f)),
            });
        }
        Panel {
            title: format!("Round trip {which}, loopback"),
            y_name: "µs (log)".to_string(),
            legend: SeriesLabelPosition::UpperLeft,
            series,
        }
    };
    draw(
        path,
        &labels,
        &[panel("p50", |x| x.p50), panel("p99", |x| x.p99)],
    )
}

/// Throughput (MB/s and samples/s) by payload.
pub(crate) fn throughput(r: &Results, path: &Path) -> Result<(), String> {
    let sizes = &r.plan.throughput_sizes;
    let labels: Vec<String> = sizes.iter().map(|&s| size_label(s)).collect();
    let mut variants = vec![(Variant::Cyclone, CYCLONE), (Variant::Ours, OURS)];
    if r.no_batch {
        variants.push((Variant::OursNoBatch, OURS_EXTRA));
    }
    let panel = |title: &str,
                 y: &str,
                 legend: SeriesLabelPosition,
                 f: fn(&ThroughputFigures) -> f64| Panel {
        title: title.to_string(),
        y_name: y.to_string(),
        legend,
        series: by_variant(sizes, &variants, |s, v| r.throughput(s, v, f)),
    };
    draw(
        path,
        &labels,
        &[
            panel(
                "Throughput, reliable KEEP_ALL",
                "MB/s (log)",
                SeriesLabelPosition::UpperLeft,
                |f| f.mb_per_s,
            ),
            // Samples per second fall with the payload: the legend goes right.
            panel(
                "Samples received per second",
                "samples/s (log)",
                SeriesLabelPosition::UpperRight,
                |f| f.samples_per_s,
            ),
        ],
    )
}
