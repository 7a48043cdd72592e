// SPDX-License-Identifier: GPL-2.0-only
//
// What the figure table (figures.rs) says of each figure, and the const
// builders its entries are written with. Every outlet reads these: the
// text report its line and label, scx_stats and Prometheus the help text
// and unit, compare the kind (counts are compared per second) and whether
// it is compared by default, Prometheus how the figure adds up across
// intervals and which family it goes to.

/// What a figure measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Events counted over the interval.
    Count,
    /// A state at the end of the interval (tasks on a run queue).
    State,
    /// A share or a mean, of two counts of the interval.
    Ratio,
    /// A quantile of a distribution of the interval.
    Percentile,
    /// A length of time.
    Duration,
}

/// The unit of a figure's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A number of events or tasks.
    Number,
    /// Level DSQs probed per dispatch call.
    Probes,
    Seconds,
    Micros,
    Jiffies,
    Percent,
}

impl Unit {
    /// As the descriptions write it after the text ("" for a number).
    pub const fn symbol(self) -> &'static str {
        match self {
            Unit::Number => "",
            Unit::Probes => "probes",
            Unit::Seconds => "s",
            Unit::Micros => "us",
            Unit::Jiffies => "jiffies",
            Unit::Percent => "%",
        }
    }
}

/// How the figures of several intervals make the figure of all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Added up (counts, lengths): Prometheus' counters are these sums.
    Sum,
    /// The largest (longest waits).
    Max,
    /// The last interval's (a state, a constant of the run).
    Last,
    /// Not from the figures themselves: computed again from the summed
    /// counts or histograms (shares, means, percentiles).
    Recompute,
}

/// The latency class of a wake-to-run figure: the task's boost when it
/// woke was below 0 (interactive) or not (other).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Interactive,
    Other,
}

impl Class {
    /// Index of the class in the BPF side's arrays (intf.h: SORYU_CLASS_*).
    pub const fn index(self) -> usize {
        match self {
            Class::Interactive => crate::bpf_intf::soryu_consts_SORYU_CLASS_INTERACTIVE as usize,
            Class::Other => crate::bpf_intf::soryu_consts_SORYU_CLASS_OTHER as usize,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Class::Interactive => "interactive",
            Class::Other => "other",
        }
    }
}

/// Where a figure goes in the Prometheus file (prometheus.rs). Counter
/// families are cumulative since the daemon started (the figure must add
/// up: Combine::Sum); gauges hold the last interval's value, in seconds
/// for a figure in microseconds (the family's name says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prom {
    /// Not exported (a percentile or share: the histograms are).
    None,
    /// A family of its own: scx_soryu_NAME_total.
    Counter(&'static str),
    /// One series of a family: scx_soryu_NAME_total{LABEL="VALUE"}.
    CounterBy(&'static str, &'static str, &'static str),
    /// A gauge family of its own: scx_soryu_NAME.
    Gauge(&'static str),
    /// One series of a gauge family: scx_soryu_NAME{LABEL="VALUE"}.
    GaugeBy(&'static str, &'static str, &'static str),
}

/// The lines of the text report, in the order they are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Line {
    /// "[soryu] #N": the interval, dispatch, probes, starvation serves.
    Head,
    /// "wake->run interactive".
    Interactive,
    /// "wake->run other".
    Other,
    /// "preempt": preemption attempts and their results, boosts.
    Preempt,
    /// "health": what must stay 0 or small, where tasks were placed.
    Health,
    /// "starvation": the longest queued wait against its bound.
    Starvation,
}

impl Line {
    pub const ALL: [Line; 6] = [
        Line::Head,
        Line::Interactive,
        Line::Other,
        Line::Preempt,
        Line::Health,
        Line::Starvation,
    ];
}

/// A figure's place in the text report: its line, its group on the line
/// (groups are separated by " | "), the label printed before its value
/// ("" for none), the width its value is right-aligned to, and the
/// decimals of a fractional value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text {
    pub line: Line,
    pub group: u8,
    pub label: &'static str,
    pub width: usize,
    pub decimals: usize,
}

/// Everything the outlets need to know of one figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FigSpec {
    pub kind: Kind,
    pub unit: Unit,
    pub combine: Combine,
    pub class: Option<Class>,
    /// One sentence, no unit, no final period.
    pub help: &'static str,
    /// When the interval cannot define the figure (it is then NaN in
    /// memory, null in JSON, "-" in the text, absent in Prometheus), e.g.
    /// "without wakeups"; None when it always can.
    pub unknown: Option<&'static str>,
    pub text: Option<Text>,
    pub prom: Prom,
    /// compare tests it when --figure names none.
    pub compared: bool,
    /// The record format's minor version that first carried it (record.rs:
    /// FORMAT_MINOR is the largest of these).
    pub since: u32,
}

const fn base(kind: Kind, unit: Unit, combine: Combine, help: &'static str) -> FigSpec {
    FigSpec {
        kind,
        unit,
        combine,
        class: None,
        help,
        unknown: None,
        text: None,
        prom: Prom::None,
        compared: false,
        since: 0,
    }
}

/// Events counted over the interval.
pub const fn count(help: &'static str) -> FigSpec {
    base(Kind::Count, Unit::Number, Combine::Sum, help)
}

/// A state at the end of the interval.
pub const fn state(help: &'static str) -> FigSpec {
    base(Kind::State, Unit::Number, Combine::Last, help)
}

/// A share or a mean of the interval's counts.
pub const fn ratio(unit: Unit, help: &'static str) -> FigSpec {
    base(Kind::Ratio, unit, Combine::Recompute, help)
}

/// A quantile of one of the interval's distributions.
pub const fn percentile(unit: Unit, help: &'static str) -> FigSpec {
    base(Kind::Percentile, unit, Combine::Recompute, help)
}

/// A length of time.
pub const fn duration(unit: Unit, combine: Combine, help: &'static str) -> FigSpec {
    base(Kind::Duration, unit, combine, help)
}

impl FigSpec {
    pub const fn class(mut self, c: Class) -> Self {
        self.class = Some(c);
        self
    }

    pub const fn unknown(mut self, when: &'static str) -> Self {
        self.unknown = Some(when);
        self
    }

    pub const fn combine(mut self, c: Combine) -> Self {
        self.combine = c;
        self
    }

    /// Print it on `line`, in group `group`, after `label`.
    pub const fn text(mut self, line: Line, group: u8, label: &'static str) -> Self {
        self.text = Some(Text {
            line,
            group,
            label,
            width: 0,
            decimals: match self.unit {
                Unit::Number => 0,
                Unit::Probes => 2,
                _ => 1,
            },
        });
        self
    }

    /// Right-align its value to `w` characters in the text report.
    pub const fn width(mut self, w: usize) -> Self {
        if let Some(t) = &mut self.text {
            t.width = w;
        }
        self
    }

    /// Print a fractional value with `d` decimals in the text report.
    pub const fn decimals(mut self, d: usize) -> Self {
        if let Some(t) = &mut self.text {
            t.decimals = d;
        }
        self
    }

    pub const fn prom(mut self, p: Prom) -> Self {
        self.prom = p;
        self
    }

    pub const fn compared(mut self) -> Self {
        self.compared = true;
        self
    }

    pub const fn since(mut self, minor: u32) -> Self {
        self.since = minor;
        self
    }

    /// The description scx_stats and --help-stats give: the help, the unit
    /// and when it is unknown (null).
    pub fn describe(&self) -> String {
        let mut s = self.help.to_string();
        let unit = self.unit.symbol();
        if !unit.is_empty() {
            s += &format!(" ({unit})");
        }
        if let Some(when) = self.unknown {
            s += &format!("; null {when}");
        }
        s
    }

    /// A count of events: comparable between intervals only per second.
    pub fn per_second(&self) -> bool {
        self.kind == Kind::Count
    }
}
