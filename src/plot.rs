// SPDX-License-Identifier: GPL-2.0-only
//
// scx_soryu plot: draw --report-json runs as one SVG with two charts. The
// top one is the interactive class's wake-to-run wait as a CCDF (fraction
// of wakeups waiting at least x, both axes logarithmic), summed over every
// interval after warm-up; the bottom one is int_over_1ms_pct per interval.
// Runs of one configuration (every header of a file starts a run) are
// combined into one line per chart.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::figures::Fig;
use crate::read::{load, Config, Run};
use crate::record::{FigName, Figure, EXT_WAKE_OVER_1MS_PCT};

#[derive(Debug, Clone, clap::Args)]
#[command(
    override_usage = "scx_soryu plot [OPTIONS] -o OUT.svg FILE...",
    after_help = "OUT.svg holds two charts, one above the other. Top: the interactive \
        class's wake-to-run wait as a CCDF, the fraction of wakeups waiting at least x \
        (x = histogram bucket lower bound in us; both axes logarithmic), summed over all \
        intervals after warm-up. Bottom: int_over_1ms_pct (% of interactive wakeups waiting \
        over 1 ms; for benchmark files, ext_wake_over_1ms_pct, the same share measured by \
        cyclictest) per interval; unknown values (no interactive wakeups) leave a gap. Runs \
        of one configuration (scheduler, knobs, config label; every header in a file starts \
        a run) make one line in each chart; in the bottom chart they follow one another on \
        the x axis, in the order given."
)]
pub struct PlotArgs {
    /// --report-json files, of one or more configurations
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The SVG file to write (both charts in one file)
    #[arg(short = 'o', long, value_name = "OUT.svg")]
    pub output: PathBuf,

    /// Intervals dropped at the start of every run (the first one includes loading)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
}

const SIZE: (u32, u32) = (1000, 1100);
const CCDF_TITLE: &str =
    "Interactive wake-to-run wait: CCDF, fraction of wakeups waiting at least x";
const TAIL_TITLE: &str = "Interactive wakeups waiting over 1 ms, per interval";

/// One configuration's files.
struct Series {
    config: Config,
    runs: Vec<Run>,
}

/// A line to draw: its legend label, the series' colour (the same in
/// both charts) and its points.
struct Line {
    name: String,
    color: usize,
    points: Vec<(f64, f64)>,
}

/// Group runs by configuration, in the order they first appear.
fn group(runs: Vec<Run>) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for run in runs {
        match out.iter_mut().find(|s| s.config == run.config) {
            Some(s) => s.runs.push(run),
            None => out.push(Series {
                config: run.config.clone(),
                runs: vec![run],
            }),
        }
    }
    out
}

/// Legend labels: the scheduler, the config label, and the knobs whose
/// value differs from another plotted configuration of the same scheduler.
fn labels(configs: &[&Config]) -> Vec<String> {
    configs.iter().map(|c| label(c, configs)).collect()
}

fn label(c: &Config, all: &[&Config]) -> String {
    let peers: Vec<&&Config> = all.iter().filter(|d| d.scheduler == c.scheduler).collect();
    let mut parts = vec![c.scheduler.clone()];
    parts.extend(c.label.iter().map(|l| format!("[{l}]")));
    for (k, v) in &c.knobs {
        if peers.iter().any(|d| d.knobs.get(k) != Some(v)) {
            parts.push(format!("{k}={v}"));
        }
    }
    parts.join(" ")
}

/// The interactive histogram summed over a series' intervals after
/// warm-up, with its bucket lower bounds; None when no interval has one.
fn summed_histogram(s: &Series, warmup: usize) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
    let mut sum: Option<(Vec<u64>, Vec<u64>)> = None;
    for run in &s.runs {
        let Some(bounds) = run.lat_bounds_ns() else {
            continue;
        };
        for counts in run
            .after_warmup(warmup)
            .iter()
            .filter_map(|iv| iv.lat_interactive())
        {
            let (b, total) = sum.get_or_insert_with(|| (bounds.to_vec(), vec![0; bounds.len()]));
            if b != bounds {
                bail!("{} has other latency buckets (lat_bucket_lower_ns) than the other runs of {}: plot them apart", run.name(), s.config.name());
            }
            total.iter_mut().zip(counts).for_each(|(t, c)| *t += c);
        }
    }
    Ok(sum)
}

/// CCDF points (wait in µs, fraction waiting at least that long), one per
/// bucket from the first non-zero bound, while the fraction is positive.
fn ccdf_points(bounds_ns: &[u64], counts: &[u64]) -> Vec<(f64, f64)> {
    let total: u64 = counts.iter().sum();
    let mut left = total;
    let mut points = Vec::new();
    for (&b, &c) in bounds_ns.iter().zip(counts) {
        if left == 0 {
            break;
        }
        if b > 0 {
            points.push((b as f64 / 1000.0, left as f64 / total as f64));
        }
        left -= c;
    }
    points
}

/// int_over_1ms_pct per interval; a series' later runs continue the x
/// axis where the previous one ended. An unknown value is left out.
fn tail_points(s: &Series, warmup: usize) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    let mut next_x = 0.0;
    for run in &s.runs {
        let ivs = run.after_warmup(warmup);
        let Some(first) = ivs.first() else { continue };
        let offset = if points.is_empty() {
            0.0
        } else {
            next_x - first.index as f64
        };
        for iv in ivs {
            let x = iv.index as f64 + offset;
            next_x = x + 1.0;
            // soryu's own figure, else the benchmark's outside measurement
            // of the same thing (bench/guest.py: cyclictest)
            let tail = match iv.get(Fig::int_over_1ms_pct) {
                Figure::Absent => iv.figure(&FigName::Ext(EXT_WAKE_OVER_1MS_PCT.into())),
                f => f,
            };
            if let Figure::Value(y) = tail {
                points.push((x, y));
            }
        }
    }
    points
}

/// The lines of both charts, and a note for each series left out of one.
fn lines(series: &[Series], warmup: usize) -> Result<(Vec<Line>, Vec<Line>, Vec<String>)> {
    let names = labels(&series.iter().map(|s| &s.config).collect::<Vec<_>>());
    let (mut ccdf, mut tail, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (s, name)) in series.iter().zip(names).enumerate() {
        let left_out = |chart: &str, what: &str| {
            format!(
                "{}: no {what} after warm-up; left out of the {chart} chart",
                s.config.name()
            )
        };
        let hist = summed_histogram(s, warmup)?.filter(|(_, c)| c.iter().any(|&n| n > 0));
        match hist {
            Some((b, c)) => ccdf.push(Line {
                name: name.clone(),
                color: i,
                points: ccdf_points(&b, &c),
            }),
            None => notes.push(left_out("CCDF", "interactive wake-to-run histogram")),
        }
        match tail_points(s, warmup) {
            t if t.is_empty() => notes.push(left_out("tail", "int_over_1ms_pct")),
            points => tail.push(Line {
                name,
                color: i,
                points,
            }),
        }
    }
    Ok((ccdf, tail, notes))
}

// ---------------------------------------------------------------------------
// Drawing

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// (min, max) of the values, widened when they are all equal.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
}

/// Distinct, readable line colours (the Tableau 10 palette), reused past ten.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn plot_err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("cannot draw the chart: {e}")
}

fn no_data(area: &Area, title: &str, why: &str) -> Result<()> {
    let inner = area.titled(title, ("sans-serif", 22)).map_err(plot_err)?;
    let style = ("sans-serif", 18).into_text_style(&inner);
    inner.draw_text(why, &style, (40, 40)).map_err(plot_err)
}

/// One line per series, each with its legend entry.
fn draw_lines<'a, 'b: 'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    lines: &[Line],
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for line in lines {
        let style = COLORS[line.color % COLORS.len()].stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.points.iter().copied(), style))
            .map_err(plot_err)?
            .label(&line.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)
}

fn draw_ccdf(area: &Area, lines: &[Line]) -> Result<()> {
    if lines.is_empty() {
        return no_data(
            area,
            CCDF_TITLE,
            "no interactive wake-to-run histograms in these files",
        );
    }
    let (x0, x1) = span(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    let (y0, _) = span(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(CCDF_TITLE, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d((x0..x1 * 1.25).log_scale(), (y0 / 2.0..1.0).log_scale())
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("wait x, µs (bucket lower bound, log scale)")
        .y_desc("fraction of wakeups waiting >= x (log scale)")
        .x_label_formatter(&|v| format!("{v}"))
        .y_label_formatter(&|v| format!("{v:e}"))
        .draw()
        .map_err(plot_err)?;
    draw_lines(&mut chart, lines)
}

fn draw_tail(area: &Area, lines: &[Line]) -> Result<()> {
    if lines.is_empty() {
        return no_data(
            area,
            TAIL_TITLE,
            "no int_over_1ms_pct or ext_wake_over_1ms_pct figures in these files",
        );
    }
    let (x0, x1) = span(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    let (_, y1) = span(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(TAIL_TITLE, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, 0.0..y1.max(0.001) * 1.1)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("interval index (after warm-up)")
        .y_desc("% of interactive wakeups waiting over 1 ms")
        // intervals are whole numbers: label only the ticks that are
        .x_labels(((x1 - x0) as usize + 1).min(20))
        .x_label_formatter(&|v| {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(plot_err)?;
    draw_lines(&mut chart, lines)
}

/// Both charts into one SVG file, the CCDF above the tail series.
fn draw(path: &Path, ccdf: &[Line], tail: &[Line]) -> Result<()> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (top, bottom) = root.split_vertically(SIZE.1 / 2);
    draw_ccdf(&top, ccdf)?;
    draw_tail(&bottom, tail)?;
    root.present()
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn run(args: &PlotArgs) -> Result<()> {
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for p in &args.files {
        let loaded = load(p)?;
        notes.extend(loaded.notes());
        runs.extend(loaded.runs);
    }
    let series = group(runs);
    let (ccdf, tail, chart_notes) = lines(&series, args.warmup)?;
    notes.extend(chart_notes);
    if ccdf.is_empty() && tail.is_empty() {
        bail!("nothing to plot: no file has an interactive histogram or int_over_1ms_pct after {} warm-up interval(s); record longer runs or lower --warmup", args.warmup);
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
    draw(&args.output, &ccdf, &tail)?;
    println!("wrote {}", args.output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(knobs: &str) -> String {
        format!(
            r#"{{"type":"header","scheduler":"scx_soryu","knobs":{knobs},"lat_bucket_lower_ns":[0,1024,1048576,4194304]}}"#
        )
    }

    fn interval(index: u64, tail_pct: f64, hist: [u64; 4]) -> String {
        let h = format!("[{},{},{},{}]", hist[0], hist[1], hist[2], hist[3]);
        format!(
            r#"{{"type":"interval","index":{index},"int_over_1ms_pct":{tail_pct},"hist":{{"lat_interactive":{h}}}}}"#
        )
    }

    fn file_text(knobs: &str, tail_pct: f64) -> String {
        let mut t = header(knobs) + "\n";
        for i in 0..4 {
            t += &(interval(i, tail_pct, [10, 80, 8, 2]) + "\n");
        }
        t
    }

    fn run_of(name: &str, knobs: &str, first: u64, n: u64) -> Run {
        let mut t = header(knobs) + "\n";
        for i in first..first + n {
            t += &(interval(i, i as f64, [1, 1, 1, 1]) + "\n");
        }
        crate::read::parse_runs(Path::new(name), &t)
            .unwrap()
            .runs
            .remove(0)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("scx_soryu-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn ccdf_is_the_fraction_waiting_at_least_each_bound() {
        // 100 waits: 10 below 1.024 us, 80 from there, 8 from 1.05 ms, 2 from 4.19 ms.
        let points = ccdf_points(&[0, 1024, 1048576, 4194304], &[10, 80, 8, 2]);
        assert_eq!(
            points,
            vec![(1.024, 0.9), (1048.576, 0.1), (4194.304, 0.02)]
        );
        // Empty buckets at the top end the line instead of dropping to zero.
        assert_eq!(
            ccdf_points(&[0, 1024, 2048], &[1, 1, 0]),
            vec![(1.024, 0.5)]
        );
    }

    #[test]
    fn files_of_one_configuration_make_one_series() {
        let a1 = run_of("a1", r#"{"k":1}"#, 0, 3);
        let b = run_of("b", r#"{"k":2}"#, 0, 3);
        let a2 = run_of("a2", r#"{"k":1}"#, 0, 3);
        let series = group(vec![a1, b, a2]);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].runs.len(), 2);
        // The second file continues the x axis: 1, 2 then 3, 4 (warm-up 1).
        let xs: Vec<f64> = tail_points(&series[0], 1).iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![1.0, 2.0, 3.0, 4.0]);
        let (_, counts) = summed_histogram(&series[0], 1).unwrap().unwrap();
        assert_eq!(counts, vec![4, 4, 4, 4]);
    }

    // Before: a file with a second header was refused, while the daemon
    // now appends a run (a header) per start.
    #[test]
    fn a_file_of_several_runs_continues_one_line() {
        let mut t = String::new();
        for _ in 0..2 {
            t += &(header("{}") + "\n");
            for i in 0..3 {
                t += &(interval(i, 1.0, [1, 1, 1, 1]) + "\n");
            }
        }
        // a run without interactive wakeups in one interval: a gap
        t += &(header("{}") + "\n");
        t += &(interval(0, 1.0, [1, 1, 1, 1]) + "\n");
        t += r#"{"type":"interval","index":1,"int_over_1ms_pct":null,"hist":{"lat_interactive":[0,0,0,0]}}"#;
        t += "\n";
        t += &(interval(2, 1.0, [1, 1, 1, 1]) + "\n");
        let runs = crate::read::parse_runs(Path::new("f"), &t).unwrap().runs;
        assert_eq!(runs.len(), 3);
        let series = group(runs);
        assert_eq!(series.len(), 1);
        let xs: Vec<f64> = tail_points(&series[0], 1).iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![1.0, 2.0, 3.0, 4.0, 6.0]);
        let (_, counts) = summed_histogram(&series[0], 1).unwrap().unwrap();
        assert_eq!(counts, vec![5, 5, 5, 5]);
    }

    #[test]
    fn labels_name_the_knobs_that_differ() {
        let a = run_of("a", r#"{"k":1,"same":5}"#, 0, 1).config;
        let b = run_of("b", r#"{"k":2,"same":5}"#, 0, 1).config;
        let mut e = a.clone();
        e.scheduler = "eevdf".into();
        e.knobs.clear();
        assert_eq!(
            labels(&[&a, &b, &e]),
            vec!["scx_soryu k=1", "scx_soryu k=2", "eevdf"]
        );
    }

    #[test]
    fn plots_two_configurations_into_one_svg() {
        let dir = temp_dir("plot-test");
        let a = dir.join("a.jsonl");
        let b = dir.join("b.jsonl");
        std::fs::write(&a, file_text(r#"{"clear_bitmap":false}"#, 0.5)).unwrap();
        std::fs::write(&b, file_text(r#"{"clear_bitmap":true}"#, 1.5)).unwrap();
        let output = dir.join("out.svg");
        run(&PlotArgs {
            files: vec![a, b],
            output: output.clone(),
            warmup: 1,
        })
        .unwrap();
        let svg = std::fs::read_to_string(&output).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("<path") || svg.contains("<polyline"));
        assert!(svg.contains("clear_bitmap=false") && svg.contains("clear_bitmap=true"));
        assert!(svg.contains("CCDF"));
    }

    #[test]
    fn refuses_files_with_nothing_to_plot() {
        let dir = temp_dir("plot-empty-test");
        let a = dir.join("a.jsonl");
        std::fs::write(&a, header("{}") + "\n" + &interval(0, 1.0, [1, 1, 1, 1])).unwrap();
        let output = dir.join("out.svg");
        let e = run(&PlotArgs {
            files: vec![a],
            output: output.clone(),
            warmup: 1,
        })
        .unwrap_err();
        let wrote = output.exists();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(format!("{e:#}").contains("nothing to plot"), "{e:#}");
        assert!(!wrote);
    }

    #[test]
    fn refuses_an_unwritable_output() {
        let dir = temp_dir("plot-unwritable-test");
        let a = dir.join("a.jsonl");
        std::fs::write(&a, file_text("{}", 1.0)).unwrap();
        let output = dir.join("missing-dir").join("out.svg");
        let e = run(&PlotArgs {
            files: vec![a],
            output,
            warmup: 1,
        })
        .unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(format!("{e:#}").contains("cannot write"), "{e:#}");
    }
}
