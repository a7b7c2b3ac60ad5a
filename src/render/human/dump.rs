//! Dumpfile reports in the human format: lines after the element's line
//! (the context for a downstream tool, the covered functions of a sancov
//! dump, the top of an XRay account).

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::dumpfile::{Content, ContextShown, Coverage, Described, DumpReport};
use crate::escape;
use crate::render::Line;

/// Most modules written in a context line.
const MAX_LISTED_MODULES: usize = 256;
/// Most regions written in a context line (all modules together).
const MAX_LISTED_REGIONS: usize = 1024;

/// The lines for `report`, each ending in `\n`, appended to `out`.
pub(super) fn text(out: &mut String, report: &DumpReport) {
    // Names from the log, written where a terminal reads them.
    let shown = escape::bytes(&report.name);
    if let Content::Xray(summary) = &report.content {
        if let Ok(s) = summary {
            let mut table = String::new();
            s.write_text(&mut table);
            for l in table.lines() {
                out.push_str("    ");
                out.push_str(&escape::controls(l));
                out.push('\n');
            }
        }
        return;
    }
    let kind = escape::bytes(&report.kind);
    let c = match &report.context {
        Some(ContextShown { empty: true, .. }) => "context empty".to_string(),
        Some(ContextShown {
            number,
            described: Some(d),
            ..
        }) => format!("context #{number}: {}", context_text(d)),
        Some(ContextShown { number, .. }) => format!("context #{number} (as above)"),
        None => String::new(),
    };
    let _ = writeln!(out, "[dumpfile {kind}:{shown}: {c}]");
    if let Content::Sancov(Ok(cov)) = &report.content {
        write_coverage(out, &shown, cov);
    }
}

/// Write `text` (lines ending in `\n`) after a rendered line: a line that
/// had no ending gets one first, and CRLF lines get CRLF lines.
pub(super) fn write_after(out: &mut dyn Write, line: &Line<'_>, text: &str) -> io::Result<()> {
    let crlf = line.crlf();
    if line.ending.is_empty() {
        out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
    }
    if !crlf && line.lead.is_empty() {
        return out.write_all(text.as_bytes());
    }
    for l in text.split_inclusive('\n') {
        out.write_all(line.lead)?;
        match l.strip_suffix('\n') {
            Some(body) => {
                out.write_all(body.as_bytes())?;
                out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
            }
            None => out.write_all(l.as_bytes())?,
        }
    }
    Ok(())
}

/// A non-empty context (`module 0 ...`): at most [`MAX_LISTED_MODULES`]
/// modules and [`MAX_LISTED_REGIONS`] regions.
fn context_text(d: &Described) -> String {
    let mut s = String::new();
    let mut room = MAX_LISTED_REGIONS;
    for (i, m) in d.modules.iter().enumerate() {
        if i == MAX_LISTED_MODULES {
            let _ = write!(s, "; ... {} more modules", d.total_modules() - i);
            break;
        }
        let sep = if i == 0 { "" } else { "; " };
        let _ = write!(
            s,
            "{sep}module {} \"{}\" build-id {}",
            m.module.id,
            escape::bytes(&m.module.name),
            m.module.build_id
        );
        let listed = m.regions.len().min(room);
        for (j, r) in m.regions[..listed].iter().enumerate() {
            let sep = if j == 0 { " " } else { ", " };
            let mode = match r.mode.as_str() {
                "" => "-",
                mode => mode,
            };
            let _ = write!(
                s,
                "{sep}{:#x}-{:#x} {mode} +{:#x}",
                r.start,
                r.last(),
                r.rel
            );
        }
        room -= listed;
        let more = m.regions.len() - listed + m.regions_omitted;
        if more > 0 {
            let _ = write!(s, " ... {more} more regions");
        }
    }
    s
}

fn write_coverage(out: &mut String, name: &str, cov: &Coverage) {
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let _ = write!(
        out,
        "    sancov {name}: {}, {}",
        plural(cov.pcs, "PC", "PCs"),
        plural(cov.functions.len(), "function", "functions")
    );
    if cov.unresolved > 0 {
        let _ = write!(out, ", {} unresolved", cov.unresolved);
    }
    out.push('\n');
    for (f, n) in &cov.functions {
        let f = escape::controls(f);
        let _ = writeln!(out, "    {f} ({})", plural(*n, "PC", "PCs"));
    }
}
