//! `--format=json`: one JSON object per input line (JSON Lines).
//!
//! Schema (version 1). Every input line gives one object; a multi-line
//! `hexdict` group gives one object whose `line` is its first line:
//!
//! ```text
//! {"line": 12, "spans": [SPAN, ...]}
//! ```
//!
//! The spans cover the line in order, without its final line ending. A SPAN
//! is one of:
//!
//! * `{"text": "..."}`: plain text (invalid UTF-8 replaced by U+FFFD; the
//!   exact bytes are then also given as `"bytes": [n, ...]`).
//! * `{"sgr": "\u001b[31m"}`: a recognised SGR escape.
//! * `{"element": KIND, "raw": "{{{...}}}", ...}`: a markup element. KIND is
//!   `symbol`, `pc`, `bt`, `data`, `hexdict`, `dumpfile`, `reset`, `module`,
//!   `mmap`, `unknown`, or `invalid` (malformed; a diagnostic went to
//!   stderr). Further members by kind:
//!   * `symbol`: `"name"` (raw), `"demangled"`.
//!   * `pc`, `bt`, `data`: `"address"` (as written) and `"adjusted"` (after
//!     return-address adjustment; what is looked up), both `"0x..."` strings;
//!     `bt` adds `"frame"` (number). When a region covers the address:
//!     `"module": {"id": N, "name": "...", "build_id": "hex"}` and
//!     `"offset": "0x..."` (module-relative address). Then
//!     `"status"`: `"ok"`, `"no_region"`, `"no_symbols"` (the module's file
//!     was not found) or `"no_info"` (with `"reason"`).
//!     Code (`pc`, `bt`): `"frames": [{"function", "mangled", "file", "line",
//!     "column", "inlined"}]`, innermost first, `inlined` true for every frame
//!     but the last (the physical function); absent members are null, unknown
//!     line/column are 0. `"symbol": {"name", "mangled", "offset"}` when the
//!     symbol table covers the address.
//!     Data: `"symbol": {"name", "mangled", "offset"}`, `"decl_file"`,
//!     `"decl_line"`.
//!   * `hexdict`: `"values": [{"key", "value", ...as for pc or data}]` for
//!     values that fall in a region.
//!   * `dumpfile`: `"type"`, `"id"`, and `"dumpfile"`: what symfilter made
//!     of the dump (`"kind"`, `"name"`, `"modules"` with their regions, and
//!     `"sancov"` covered functions, `"xray"` top functions, or `"error"`;
//!     see [`crate::dumpfile`]).
//!   * `module`: `"id"`, `"name"`, `"build_id"`; `mmap`: `"start"`, `"size"`,
//!     `"module"`, `"mode"`, `"offset"`; `reset`: nothing more. A refused
//!     contextual element has `"refused": true`.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::{ContextEvent, Event, Line, Lookup, Render, RenderOptions, Resolved, hex};
use crate::demangle::demangle_full;
use crate::markup::RawElement;

pub struct Json {
    _opts: RenderOptions,
    /// `dumpfile` members for the dumpfile spans of the coming line.
    dump_notes: std::collections::VecDeque<Value>,
}

impl Json {
    pub fn new(opts: RenderOptions) -> Json {
        Json {
            _opts: opts,
            dump_notes: Default::default(),
        }
    }
}

fn text_span(t: &[u8]) -> Value {
    match std::str::from_utf8(t) {
        Ok(s) => json!({ "text": s }),
        Err(_) => json!({ "text": String::from_utf8_lossy(t), "bytes": t }),
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn element(kind: &str, el: &RawElement, line: &[u8]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("element".into(), kind.into());
    m.insert("raw".into(), lossy(el.text(line)).into());
    m
}

fn name_pair(raw: &str) -> (Value, Value) {
    (demangle_full(raw).into(), raw.into())
}

fn resolved(m: &mut Map<String, Value>, res: &Resolved) {
    m.insert("address".into(), hex(res.addr).into());
    m.insert("adjusted".into(), hex(res.adjusted).into());
    if let Some(p) = &res.place {
        m.insert(
            "module".into(),
            json!({
                "id": p.module.id,
                "name": p.module.name_lossy(),
                "build_id": p.module.build_id.to_hex(),
            }),
        );
        m.insert("offset".into(), hex(p.rel).into());
    }
    let rel = res.place.as_ref().map_or(0, |p| p.rel);
    let status = match &res.lookup {
        Lookup::NoRegion => "no_region",
        Lookup::NoSource | Lookup::Unreadable => "no_symbols",
        Lookup::Failed(miss) => {
            m.insert("reason".into(), miss.to_string().into());
            "no_info"
        }
        Lookup::Code(info) => {
            let n = info.frames.len();
            let frames: Vec<Value> = info
                .frames
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let (function, mangled) = match &f.function {
                        Some(raw) => name_pair(raw),
                        None => (Value::Null, Value::Null),
                    };
                    json!({
                        "function": function,
                        "mangled": mangled,
                        "file": f.file,
                        "line": f.line,
                        "column": f.column,
                        "inlined": i + 1 != n,
                    })
                })
                .collect();
            m.insert("frames".into(), frames.into());
            if let Some(s) = &info.symbol {
                let (name, mangled) = name_pair(&s.name);
                m.insert(
                    "symbol".into(),
                    json!({"name": name, "mangled": mangled, "offset": hex(rel.wrapping_sub(s.address))}),
                );
            }
            "ok"
        }
        Lookup::Data(d) => {
            if let Some(s) = &d.symbol {
                let (name, mangled) = name_pair(&s.name);
                m.insert(
                    "symbol".into(),
                    json!({"name": name, "mangled": mangled, "offset": hex(rel.wrapping_sub(s.address))}),
                );
            }
            if let Some(f) = &d.decl_file {
                m.insert("decl_file".into(), f.clone().into());
                m.insert("decl_line".into(), d.decl_line.into());
            }
            "ok"
        }
    };
    m.insert("status".into(), status.into());
}

fn span(ev: &Event<'_>, line: &[u8]) -> Value {
    let m = match ev {
        Event::Text(t) => return text_span(t),
        Event::Sgr(_, t) => return json!({ "sgr": lossy(t) }),
        Event::Invalid(el) => element("invalid", el, line),
        Event::Unknown(el) => element("unknown", el, line),
        Event::Dumpfile(el) => {
            let mut m = element("dumpfile", el, line);
            m.insert("type".into(), lossy(el.field(line, 0)).into());
            m.insert("id".into(), lossy(el.field(line, 1)).into());
            m
        }
        Event::Symbol(el, name) => {
            let mut m = element("symbol", el, line);
            let raw = lossy(name);
            m.insert("demangled".into(), demangle_full(&raw).into());
            m.insert("name".into(), raw.into());
            m
        }
        Event::Pc(el, res) => {
            let mut m = element("pc", el, line);
            resolved(&mut m, res);
            m
        }
        Event::Bt(el, frame, res) => {
            let mut m = element("bt", el, line);
            m.insert("frame".into(), (*frame).into());
            resolved(&mut m, res);
            m
        }
        Event::Data(el, res) => {
            let mut m = element("data", el, line);
            resolved(&mut m, res);
            m
        }
        Event::Hexdict(el, values) => {
            let mut m = element("hexdict", el, line);
            let vals: Vec<Value> = values
                .iter()
                .map(|v| {
                    let mut vm = Map::new();
                    vm.insert("key".into(), lossy(v.pair.key).into());
                    vm.insert("value".into(), lossy(v.pair.value_text).into());
                    resolved(&mut vm, &v.resolved);
                    Value::Object(vm)
                })
                .collect();
            m.insert("values".into(), vals.into());
            m
        }
        Event::Context(el, ce) => {
            let tag = lossy(el.tag(line));
            let mut m = element(&tag, el, line);
            match ce {
                ContextEvent::Refused => {
                    m.insert("refused".into(), true.into());
                }
                ContextEvent::Reset { .. } => {}
                ContextEvent::Module(md) => {
                    m.insert("id".into(), md.id.into());
                    m.insert("name".into(), md.name_lossy().into());
                    m.insert("build_id".into(), md.build_id.to_hex().into());
                }
                ContextEvent::Mmap { region, .. } => {
                    m.insert("start".into(), hex(region.start).into());
                    m.insert("size".into(), hex(region.size).into());
                    m.insert("module".into(), region.module.into());
                    m.insert("mode".into(), region.mode.as_str().into());
                    m.insert("offset".into(), hex(region.rel).into());
                }
            }
            m
        }
    };
    Value::Object(m)
}

fn write_obj(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, v).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

impl Render for Json {
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], first_line: u64) -> io::Result<()> {
        for (n, l) in (first_line..).zip(text.split_inclusive(|&b| b == b'\n')) {
            let l = l.strip_suffix(b"\n").unwrap_or(l);
            write_obj(out, &json!({ "line": n, "spans": [text_span(l)] }))?;
        }
        Ok(())
    }

    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        let mut spans: Vec<Value> = events.iter().map(|e| span(e, line.bytes)).collect();
        if !self.dump_notes.is_empty() {
            for (e, sp) in events.iter().zip(spans.iter_mut()) {
                if let Event::Dumpfile(_) = e
                    && let Some(note) = self.dump_notes.pop_front()
                {
                    sp["dumpfile"] = note;
                }
            }
            self.dump_notes.clear();
        }
        write_obj(out, &json!({ "line": line.number, "spans": spans }))
    }

    fn dumpfile_note(&mut self, note: Value) {
        self.dump_notes.push_back(note);
    }

    fn raw(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        write_obj(
            out,
            &json!({ "spans": [text_span(bytes)], "partial": true }),
        )
    }

    fn finish(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}
