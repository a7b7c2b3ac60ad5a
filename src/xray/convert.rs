//! Trace conversion: YAML in `llvm-xray convert -f yaml`'s layout, and
//! Chrome `trace_event` JSON (opens in Perfetto and chrome://tracing).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::fdr::{Diagnostic, Event, FnKind, Header, ThreadKey, Trace};
use super::names::Names;
use super::open::OpenStack;

/// What a flattened record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecKind {
    Function(FnKind),
    Custom,
    Typed(u16),
}

/// One record of the flattened trace.
#[derive(Clone, Debug)]
pub struct Record<'a> {
    pub thread: ThreadKey,
    pub kind: RecKind,
    /// For events, the ID of the thread's previous function record (as
    /// `llvm-xray` reports it).
    pub func_id: u32,
    pub tsc: u64,
    pub cpu: u16,
    pub args: Vec<u64>,
    pub data: &'a [u8],
}

/// All records, thread by thread (blocks in time order), optionally sorted
/// by TSC (stable) as `llvm-xray convert` does by default.
pub fn flatten<'a>(trace: &Trace<'a>, sort: bool) -> (Vec<Record<'a>>, Vec<Diagnostic>) {
    let mut recs: Vec<Record<'a>> = Vec::new();
    let mut last_func: HashMap<ThreadKey, u32> = HashMap::new();
    let diags = trace.for_each_event(
        |thread, e| match *e {
            Event::Function {
                kind,
                func_id,
                tsc,
                cpu,
            } => {
                last_func.insert(thread, func_id);
                recs.push(Record {
                    thread,
                    kind: RecKind::Function(kind),
                    func_id,
                    tsc,
                    cpu,
                    args: Vec::new(),
                    data: &[],
                });
            }
            Event::Arg(v) => {
                if let Some(r) = recs.last_mut()
                    && r.thread == thread
                {
                    r.args.push(v);
                }
            }
            Event::Custom { tsc, cpu, data } => recs.push(Record {
                thread,
                kind: RecKind::Custom,
                func_id: last_func.get(&thread).copied().unwrap_or(0),
                tsc,
                cpu,
                args: Vec::new(),
                data,
            }),
            Event::Typed {
                tsc,
                cpu,
                event_type,
                data,
            } => recs.push(Record {
                thread,
                kind: RecKind::Typed(event_type),
                func_id: last_func.get(&thread).copied().unwrap_or(0),
                tsc,
                cpu,
                args: Vec::new(),
                data,
            }),
        },
        |_| {},
    );
    if sort {
        recs.sort_by_key(|r| r.tsc);
    }
    (recs, diags)
}

fn kind_name(k: RecKind, args: bool) -> &'static str {
    match k {
        RecKind::Function(FnKind::Entry) if args => "function-enter-arg",
        RecKind::Function(FnKind::Entry) => "function-enter",
        RecKind::Function(FnKind::EntryArgs) => "function-enter-arg",
        RecKind::Function(FnKind::Exit) => "function-exit",
        RecKind::Function(FnKind::TailExit) => "function-tail-exit",
        RecKind::Custom => "custom-event",
        RecKind::Typed(_) => "typed-event",
    }
}

/// YAML as `llvm-xray convert -f yaml` writes it. With `symbolize`, the
/// `function` field holds names; otherwise the ID again.
pub fn write_yaml<W: std::fmt::Write>(
    out: &mut W,
    header: &Header,
    recs: &[Record<'_>],
    names: Option<&Names>,
) {
    let _ = out.write_str("---\nheader:\n");
    let _ = writeln!(out, "  version:         {}", header.version);
    let _ = writeln!(out, "  type:            {}", header.trace_type);
    let _ = writeln!(out, "  constant-tsc:    {}", header.constant_tsc);
    let _ = writeln!(out, "  nonstop-tsc:     {}", header.nonstop_tsc);
    let _ = writeln!(out, "  cycle-frequency: {}", header.cycle_frequency);
    if recs.is_empty() {
        let _ = out.write_str("records:         []\n...\n");
        return;
    }
    let _ = out.write_str("records:\n");
    let mut quoted: HashMap<u32, String> = HashMap::new();
    for r in recs {
        let rtype = match r.kind {
            RecKind::Typed(t) => t,
            _ => 0,
        };
        let function = quoted.entry(r.func_id).or_insert_with(|| {
            let name = match names {
                Some(n) => n.name(r.func_id),
                None => r.func_id.to_string(),
            };
            yaml_scalar(name.as_bytes())
        });
        let _ = write!(
            out,
            "  - {{ type: {rtype}, func-id: {}, function: {function}",
            r.func_id,
        );
        if !r.args.is_empty() {
            let list: Vec<String> = r.args.iter().map(|a| a.to_string()).collect();
            let _ = write!(out, ", args: [ {} ]", list.join(", "));
        }
        let _ = write!(out, ", cpu: {}", r.cpu);
        if r.thread.tid != 0 {
            let _ = write!(out, ", thread: {}", r.thread.tid);
        }
        if r.thread.pid != 0 {
            let _ = write!(out, ", process: {}", r.thread.pid);
        }
        let _ = writeln!(
            out,
            ", kind: {}, tsc: {}, data: {} }}",
            kind_name(r.kind, !r.args.is_empty()),
            r.tsc,
            yaml_scalar(r.data)
        );
    }
    let _ = out.write_str("...\n");
}

/// Quote a scalar the way LLVM's YAML writer decides to.
pub fn yaml_scalar(s: &[u8]) -> String {
    #[derive(PartialEq, PartialOrd)]
    enum Q {
        None,
        Single,
        Double,
    }
    let text = String::from_utf8_lossy(s);
    if s.is_empty() {
        return "''".to_string();
    }
    let mut q = Q::None;
    let t: &str = &text;
    if s[0].is_ascii_whitespace() || s[s.len() - 1].is_ascii_whitespace() {
        q = Q::Single;
    }
    if matches!(t, "null" | "Null" | "NULL" | "~")
        || matches!(t, "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
        || is_numeric(t)
    {
        q = Q::Single;
    }
    if br"-?:\,[]{}#&*!|>'%@`".contains(&s[0]) || s[0] == b'"' {
        q = Q::Single;
    }
    for &c in s {
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'^' | b'.' | b',' | b' ' | 9) {
            continue;
        }
        if c == b'\n' || c == b'\r' || c == 0x7f || c <= 0x1f || c & 0x80 != 0 {
            q = Q::Double;
            break;
        }
        if q < Q::Single {
            q = Q::Single;
        }
    }
    match q {
        Q::None => text.into_owned(),
        Q::Single => format!("'{}'", text.replace('\'', "''")),
        Q::Double => {
            let mut o = String::from("\"");
            for &c in s {
                match c {
                    b'"' => o.push_str("\\\""),
                    b'\\' => o.push_str("\\\\"),
                    b'\n' => o.push_str("\\n"),
                    b'\r' => o.push_str("\\r"),
                    b'\t' => o.push_str("\\t"),
                    0x20..=0x7e => o.push(c as char),
                    _ => {
                        let _ = write!(o, "\\x{c:02X}");
                    }
                }
            }
            o.push('"');
            o
        }
    }
}

fn is_numeric(t: &str) -> bool {
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    if body.is_empty() {
        return false;
    }
    if let Some(h) = body.strip_prefix("0x") {
        return !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(o) = body.strip_prefix("0o") {
        return !o.is_empty() && o.bytes().all(|c| (b'0'..=b'7').contains(&c));
    }
    if matches!(body, ".inf" | ".Inf" | ".INF") || matches!(t, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    body.bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+'))
        && body
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == b'.')
        && body.parse::<f64>().is_ok()
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Chrome trace_event JSON: a `B`/`E` pair per call (exits close every
/// frame up to the matching entry), instant events for custom and typed
/// events, timestamps in microseconds.
pub fn write_trace_event<W: std::fmt::Write>(
    out: &mut W,
    header: &Header,
    recs: &[Record<'_>],
    names: &Names,
) {
    let freq = if header.cycle_frequency == 0 {
        1_000_000.0
    } else {
        header.cycle_frequency as f64
    };
    let us = |tsc: u64| tsc as f64 * 1_000_000.0 / freq;
    let mut stacks: HashMap<ThreadKey, OpenStack<()>> = HashMap::new();
    let mut name_cache: HashMap<u32, String> = HashMap::new();
    let mut first = true;
    let _ = out.write_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut emit = |out: &mut W, line: String| {
        if !first {
            let _ = out.write_str(",\n");
        }
        first = false;
        let _ = out.write_str(&line);
    };
    let mut name_of = |id: u32| -> String {
        name_cache
            .entry(id)
            .or_insert_with(|| json_str(&names.name(id)))
            .clone()
    };
    for r in recs {
        let t = r.thread;
        match r.kind {
            RecKind::Function(k) if k.is_entry() => {
                stacks.entry(t).or_default().push(r.func_id, ());
                let mut line = format!(
                    "{{\"name\":{},\"ph\":\"B\",\"pid\":{},\"tid\":{},\"ts\":{:.4}",
                    name_of(r.func_id),
                    t.pid,
                    t.tid,
                    us(r.tsc)
                );
                if !r.args.is_empty() {
                    let args: Vec<String> = r
                        .args
                        .iter()
                        .enumerate()
                        .map(|(i, a)| format!("\"arg{i}\":{a}"))
                        .collect();
                    let _ = write!(line, ",\"args\":{{{}}}", args.join(","));
                }
                line.push('}');
                emit(out, line);
            }
            RecKind::Function(_) => {
                let Some(stack) = stacks.get_mut(&t) else {
                    continue;
                };
                let Some(pos) = stack.find(r.func_id) else {
                    continue;
                };
                while stack.len() > pos {
                    let Some((f, ())) = stack.pop() else { break };
                    let line = format!(
                        "{{\"name\":{},\"ph\":\"E\",\"pid\":{},\"tid\":{},\"ts\":{:.4}}}",
                        name_of(f),
                        t.pid,
                        t.tid,
                        us(r.tsc)
                    );
                    emit(out, line);
                }
            }
            RecKind::Custom | RecKind::Typed(_) => {
                let (name, ty) = match r.kind {
                    RecKind::Typed(ty) => ("typed-event", Some(ty)),
                    _ => ("custom-event", None),
                };
                let mut line = format!(
                    "{{\"name\":\"{name}\",\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},\"ts\":{:.4},\"args\":{{\"data\":{}",
                    t.pid,
                    t.tid,
                    us(r.tsc),
                    json_str(&String::from_utf8_lossy(r.data))
                );
                if let Some(ty) = ty {
                    let _ = write!(line, ",\"type\":{ty}");
                }
                line.push_str("}}");
                emit(out, line);
            }
        }
    }
    let _ = out.write_str("\n]}\n");
}
