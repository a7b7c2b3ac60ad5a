//! Function call accounting: per function (and per thread) call counts,
//! total and self time, min/median/p90/p99/max, like `llvm-xray account`
//! but correct on multi-threaded traces.

use std::collections::HashMap;
use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use super::fdr::{Diagnostic, Event, FnKind, ThreadKey, Trace};
use super::names::Names;
use super::open::OpenStack;

#[derive(Clone, Copy, Debug, Default)]
pub struct AccountOptions {
    /// When an exit matches a function deeper in the stack, also record the
    /// frames above it (entries whose exits were lost) as ending there, as
    /// `llvm-xray account -d` does. Default: drop them uncounted.
    pub deduce_sibling_calls: bool,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    entry: u64,
    children: u64,
}

/// Durations of one function's calls.
#[derive(Clone, Debug, Default)]
pub struct FuncTimes {
    pub durations: Vec<u64>,
    pub self_sum: u64,
}

/// Per-thread accounting state and results.
#[derive(Clone, Debug, Default)]
pub struct ThreadAccount {
    pub thread: ThreadKey,
    stack: OpenStack<Frame>,
    pub funcs: FxHashMap<u32, FuncTimes>,
    /// Exits with no matching entry on the thread's stack.
    pub unmatched_exits: u64,
    /// Entries that never saw their exit (lost, or still running at the end).
    pub unmatched_entries: u64,
}

/// The accountant: feed it events thread by thread.
#[derive(Debug, Default)]
pub struct Accountant {
    opts: AccountOptions,
    pub threads: Vec<ThreadAccount>,
    index: HashMap<ThreadKey, usize>,
    last: Option<(ThreadKey, usize)>,
    pub diagnostics: Vec<Diagnostic>,
}

fn diff(a: u64, b: u64) -> u64 {
    a.max(b) - a.min(b)
}

impl Accountant {
    pub fn new(opts: AccountOptions) -> Accountant {
        Accountant {
            opts,
            ..Accountant::default()
        }
    }

    /// Decode `trace` and account every function record.
    pub fn run(trace: &Trace<'_>, opts: AccountOptions) -> Accountant {
        let mut acc = Accountant::new(opts);
        let mut ends = Vec::new();
        let diags = trace.for_each_event(|t, e| acc.event(t, e), |t| ends.push(t));
        for t in ends {
            acc.finish_thread(t);
        }
        acc.diagnostics = diags;
        acc
    }

    fn thread(&mut self, t: ThreadKey) -> &mut ThreadAccount {
        let i = match self.last {
            Some((k, i)) if k == t => i,
            _ => {
                let n = self.threads.len();
                let i = *self.index.entry(t).or_insert(n);
                if i == n {
                    self.threads.push(ThreadAccount {
                        thread: t,
                        ..ThreadAccount::default()
                    });
                }
                self.last = Some((t, i));
                i
            }
        };
        &mut self.threads[i]
    }

    pub fn event(&mut self, t: ThreadKey, e: &Event<'_>) {
        let &Event::Function {
            kind, func_id, tsc, ..
        } = e
        else {
            return;
        };
        let deduce = self.opts.deduce_sibling_calls;
        let th = self.thread(t);
        match kind {
            FnKind::Entry | FnKind::EntryArgs => th.stack.push(
                func_id,
                Frame {
                    entry: tsc,
                    children: 0,
                },
            ),
            FnKind::Exit | FnKind::TailExit => {
                let Some(pos) = th.stack.find(func_id) else {
                    th.unmatched_exits += 1;
                    return;
                };
                while th.stack.len() > pos {
                    let Some((top_func, top)) = th.stack.pop() else {
                        break;
                    };
                    let is_match = th.stack.len() == pos;
                    if !is_match && !deduce {
                        th.unmatched_entries += 1;
                        continue;
                    }
                    let d = diff(top.entry, tsc);
                    if let Some(parent) = th.stack.last_mut() {
                        parent.children = parent.children.saturating_add(d);
                    }
                    let ft = th.funcs.entry(top_func).or_default();
                    ft.durations.push(d);
                    ft.self_sum = ft.self_sum.saturating_add(d.saturating_sub(top.children));
                }
            }
        }
    }

    /// Frames left open at the end of a thread are unmatched entries.
    pub fn finish_thread(&mut self, t: ThreadKey) {
        let th = self.thread(t);
        th.unmatched_entries += th.stack.len() as u64;
        th.stack.clear();
    }

    pub fn unmatched(&self) -> (u64, u64) {
        self.threads.iter().fold((0, 0), |(a, b), t| {
            (a + t.unmatched_entries, b + t.unmatched_exits)
        })
    }

    /// Rows for all threads together.
    pub fn total_rows(&self) -> Vec<Row> {
        let mut merged: FxHashMap<u32, FuncTimes> = FxHashMap::default();
        for th in &self.threads {
            for (&id, ft) in &th.funcs {
                let m = merged.entry(id).or_default();
                m.durations.extend_from_slice(&ft.durations);
                m.self_sum = m.self_sum.saturating_add(ft.self_sum);
            }
        }
        rows_of(merged.into_iter())
    }

    /// Rows of one thread.
    pub fn thread_rows(&self, th: &ThreadAccount) -> Vec<Row> {
        rows_of(th.funcs.iter().map(|(&id, ft)| (id, ft.clone())))
    }
}

/// One function's statistics, in TSC ticks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub func_id: u32,
    pub count: u64,
    pub min: u64,
    pub median: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub sum: u64,
    pub self_sum: u64,
}

fn rows_of(it: impl Iterator<Item = (u32, FuncTimes)>) -> Vec<Row> {
    let mut rows: Vec<Row> = it
        .filter(|(_, ft)| !ft.durations.is_empty())
        .map(|(id, mut ft)| stats(id, &mut ft.durations, ft.self_sum))
        .collect();
    rows.sort_by_key(|r| r.func_id);
    rows
}

/// Percentiles chosen as `llvm-xray` chooses them: the element at
/// `n/2`, `floor(n*0.9)`, `floor(n*0.99)` of the sorted durations (found
/// by selection, not a full sort).
fn stats(func_id: u32, d: &mut [u64], self_sum: u64) -> Row {
    let n = d.len();
    let (mut min, mut max, mut sum) = (u64::MAX, 0u64, 0u64);
    for &v in d.iter() {
        min = min.min(v);
        max = max.max(v);
        sum = sum.saturating_add(v);
    }
    let idx = |q: f64| ((n as f64 * q).floor() as usize).min(n - 1);
    // Select the highest rank first; each later selection only needs the
    // part below the previous one.
    let (i99, i90, i50) = (idx(0.99), idx(0.9), n / 2);
    let p99 = *d.select_nth_unstable(i99).1;
    let p90 = *d[..=i99].select_nth_unstable(i90).1;
    let median = *d[..=i90].select_nth_unstable(i50).1;
    Row {
        func_id,
        count: n as u64,
        min,
        median,
        p90,
        p99,
        max,
        sum,
        self_sum,
    }
}

/// Sort keys (`llvm-xray account --sort` names, plus `self`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortField {
    #[default]
    Funcid,
    Count,
    Min,
    Med,
    P90,
    P99,
    Max,
    Sum,
    SelfTime,
    Func,
}

/// Sort `rows` by `field` (ties by function ID), descending if asked, and
/// keep the first `top` if given.
pub fn sort_rows(
    rows: &mut Vec<Row>,
    field: SortField,
    descending: bool,
    top: Option<usize>,
    names: &Names,
) {
    rows.sort_by(|a, b| {
        let o = match field {
            SortField::Funcid => a.func_id.cmp(&b.func_id),
            SortField::Count => a.count.cmp(&b.count),
            SortField::Min => a.min.cmp(&b.min),
            SortField::Med => a.median.cmp(&b.median),
            SortField::P90 => a.p90.cmp(&b.p90),
            SortField::P99 => a.p99.cmp(&b.p99),
            SortField::Max => a.max.cmp(&b.max),
            SortField::Sum => a.sum.cmp(&b.sum),
            SortField::SelfTime => a.self_sum.cmp(&b.self_sum),
            SortField::Func => names.name(a.func_id).cmp(&names.name(b.func_id)),
        };
        let o = if descending { o.reverse() } else { o };
        o.then(a.func_id.cmp(&b.func_id))
    });
    if let Some(n) = top {
        rows.truncate(n);
    }
}

/// Ticks to seconds (raw ticks when the frequency is unknown, as
/// `llvm-xray` does).
pub fn seconds(ticks: u64, freq: u64) -> f64 {
    if freq == 0 {
        ticks as f64
    } else {
        ticks as f64 / freq as f64
    }
}

/// `printf("%e")`: six decimals, signed exponent of at least two digits.
pub fn fmt_exp(v: f64) -> String {
    let s = format!("{v:.6e}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let e: i32 = exp.parse().unwrap_or(0);
            let sign = if e < 0 { '-' } else { '+' };
            format!("{mant}e{sign}{:02}", e.unsigned_abs())
        }
        None => s,
    }
}

/// Text table in `llvm-xray account`'s layout, with a `self` column added
/// after `sum`. `functions` is the number of functions before `--top`.
pub fn write_text(out: &mut String, functions: usize, rows: &[Row], freq: u64, names: &Names) {
    let _ = writeln!(out, "Functions with latencies: {functions}");
    let _ = writeln!(
        out,
        "{:>9} {:>10} [{:>9}, {:>9}, {:>9}, {:>9}, {:>9}] {:>9} {:>9}  {:<12}",
        "funcid", "count", "min", "med", "90p", "99p", "max", "sum", "self", "function"
    );
    for r in rows {
        let s = |t| seconds(t, freq);
        let _ = writeln!(
            out,
            "{:>9} {:>10} [{:>9.6}, {:>9.6}, {:>9.6}, {:>9.6}, {:>9.6}] {:>9.6} {:>9.6}  {}: {}",
            r.func_id,
            r.count,
            s(r.min),
            s(r.median),
            s(r.p90),
            s(r.p99),
            s(r.max),
            s(r.sum),
            s(r.self_sum),
            names.location(r.func_id),
            names.name(r.func_id)
        );
    }
}

fn csv_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// CSV with the header `funcid,count,min,median,90p,99p,max,sum,function`,
/// times in seconds.
pub fn write_csv(out: &mut String, rows: &[Row], freq: u64, names: &Names) {
    out.push_str("funcid,count,min,median,90p,99p,max,sum,function\n");
    write_csv_rows(out, rows, freq, names, false);
}

/// CSV exactly as `llvm-xray account --format=csv` (LLVM 22) writes it.
pub fn write_llvm_csv(out: &mut String, rows: &[Row], freq: u64, names: &Names) {
    out.push_str("funcid,count,min,median,90%ile,99%ile,max,sum,debug,function\n");
    write_csv_rows(out, rows, freq, names, true);
}

/// The rows of both CSV forms; llvm-xray's has a `debug` (location) column
/// before the name.
fn write_csv_rows(out: &mut String, rows: &[Row], freq: u64, names: &Names, debug: bool) {
    for r in rows {
        let s = |t| fmt_exp(seconds(t, freq));
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},",
            r.func_id,
            r.count,
            s(r.min),
            s(r.median),
            s(r.p90),
            s(r.p99),
            s(r.max),
            s(r.sum),
        );
        if debug {
            let _ = write!(out, "{},", csv_quote(&names.location(r.func_id)));
        }
        let _ = writeln!(out, "{}", csv_quote(&names.name(r.func_id)));
    }
}

/// JSON: every row with raw ticks and seconds.
pub fn json_rows(rows: &[Row], freq: u64, names: &Names) -> serde_json::Value {
    let s = |t| seconds(t, freq);
    serde_json::Value::Array(
        rows.iter()
            .map(|r| {
                serde_json::json!({
                    "funcid": r.func_id,
                    "function": names.name(r.func_id),
                    "location": names.location(r.func_id),
                    "count": r.count,
                    "ticks": {"min": r.min, "median": r.median, "p90": r.p90, "p99": r.p99,
                              "max": r.max, "sum": r.sum, "self": r.self_sum},
                    "seconds": {"min": s(r.min), "median": s(r.median), "p90": s(r.p90),
                                "p99": s(r.p99), "max": s(r.max), "sum": s(r.sum),
                                "self": s(r.self_sum)},
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(kind: FnKind, func_id: u32, tsc: u64) -> Event<'static> {
        Event::Function {
            kind,
            func_id,
            tsc,
            cpu: 0,
        }
    }

    /// f1 calls f2, f2's exit is lost (an exception unwound it), f1 exits.
    fn lost_exit(deduce: bool) -> Accountant {
        let t = ThreadKey { pid: 1, tid: 2 };
        let mut acc = Accountant::new(AccountOptions {
            deduce_sibling_calls: deduce,
        });
        for e in [
            f(FnKind::Entry, 1, 100),
            f(FnKind::Entry, 2, 110),
            f(FnKind::Exit, 1, 150),
            f(FnKind::Exit, 7, 160),
            f(FnKind::Entry, 3, 170),
        ] {
            acc.event(t, &e);
        }
        acc.finish_thread(t);
        acc
    }

    #[test]
    fn lost_exits_are_dropped_or_deduced() {
        let acc = lost_exit(false);
        let rows = acc.total_rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].func_id, rows[0].sum, rows[0].self_sum),
            (1, 50, 50)
        );
        // f2 (lost) and f3 (still open) never exited; f7 never entered.
        assert_eq!(acc.unmatched(), (2, 1));

        let acc = lost_exit(true);
        let rows = acc.total_rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].func_id, rows[0].sum, rows[0].self_sum),
            (1, 50, 10)
        );
        assert_eq!((rows[1].func_id, rows[1].sum), (2, 40));
        assert_eq!(acc.unmatched(), (1, 1));
    }

    #[test]
    fn percentiles_pick_llvm_xray_elements() {
        let mut d: Vec<u64> = (1..=10).rev().collect();
        let r = stats(5, &mut d, 0);
        assert_eq!(
            (r.count, r.min, r.median, r.p90, r.p99, r.max, r.sum),
            (10, 1, 6, 10, 10, 10, 55)
        );
    }

    #[test]
    fn exponent_format_is_printf_e() {
        assert_eq!(fmt_exp(9.2e-8), "9.200000e-08");
        assert_eq!(fmt_exp(4294.966), "4.294966e+03");
        assert_eq!(fmt_exp(0.0), "0.000000e+00");
        assert_eq!(fmt_exp(1.5e120), "1.500000e+120");
    }
}
