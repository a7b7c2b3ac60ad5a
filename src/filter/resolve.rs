//! Resolving addresses: the place an address falls in, opening its
//! module's symbols (with the diagnostics and `--explain` notes that go
//! with a first opening), return-address adjustment, and the lookups.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;

use super::{Filter, MAX_MISSING_REPORTS};
use crate::context::Module;
use crate::markup::PcKind;
use crate::render::{Lookup, Place, Resolved};
use crate::report::Report;
use crate::symbols::{Locator, ModuleKey};

impl Filter {
    pub(super) fn report_unresolved(
        &mut self,
        bytes: &[u8],
        number: u64,
        at: usize,
        res: &Resolved,
    ) {
        if let Lookup::NoRegion = res.lookup {
            // Made in a kept buffer: a log may name many such addresses.
            let mut msg = std::mem::take(&mut self.message);
            msg.clear();
            // Writing to a `String` cannot fail.
            let _ = if res.adjusted != res.addr {
                write!(
                    msg,
                    "no mmap covers address {:#x} (return address {:#x} minus {})",
                    res.adjusted,
                    res.addr,
                    res.addr.wrapping_sub(res.adjusted)
                )
            } else {
                write!(msg, "no mmap covers address {:#x}", res.addr)
            };
            self.report(bytes, number, at, &msg);
            self.message = msg;
        }
    }

    /// Opening a module may take long (a debuginfod download): write out
    /// what earlier lines produced first, so a reader sees them meanwhile,
    /// and so that the module's diagnostics follow them. Done at the
    /// filter's first asking, even when a background search has already
    /// found the module: its diagnostics come at that asking all the same.
    /// A write error shows up again at the next write and is handled there.
    /// The module whose symbols were last found is remembered (a found
    /// module stays open): most elements are in it, and the symbolizer's
    /// table of modules is not asked again for them.
    fn flush_before_first_open(&mut self, module: &Arc<Module>, out: &mut dyn Write) {
        if !self.is_last_opened(module) && !self.symbolizer.was_asked(&module.build_id) {
            let _ = self.render.pause(out);
            let _ = out.flush();
        }
    }

    /// Remember `module` as the one whose symbols were last found.
    fn opened_in(&mut self, module: &Arc<Module>) {
        if !self.is_last_opened(module) {
            self.opened = Some(Arc::clone(module));
        }
    }

    /// Whether `module` is the one remembered by [`Filter::opened_in`].
    fn is_last_opened(&self, module: &Arc<Module>) -> bool {
        self.opened
            .as_ref()
            .is_some_and(|last| Arc::ptr_eq(last, module))
    }

    /// Find the place of `addr` and open its module's source, reporting a
    /// missing module once per build ID.
    pub(super) fn place(&mut self, addr: u64) -> Option<Place> {
        let loc = self.context.lookup(addr)?;
        Some(Place {
            module: Arc::clone(loc.module),
            region: *loc.region,
            rel: loc.rel,
        })
    }

    /// `f` of `module`'s source, if it has one, opening it the first time
    /// (with `out`, after writing out what earlier lines produced, see
    /// [`Filter::flush_before_first_open`]).
    pub(super) fn with_source<T>(
        &mut self,
        module: &Arc<Module>,
        out: Option<&mut dyn Write>,
        f: impl FnOnce(&crate::symbols::Memo) -> T,
    ) -> Option<T> {
        if let Some(out) = out {
            self.flush_before_first_open(module, out);
        }
        let explain = self.opts.explain;
        let context = &self.context;
        let opened = self
            .symbolizer
            .open_with(&module.build_id, || ModuleKey::of(context, module));
        let first = opened.first_time;
        let (result, miss_trail_len, warnings) = match opened.source {
            Ok(src) => {
                let warnings = if first { src.warnings() } else { Vec::new() };
                (Some(f(src)), None, warnings)
            }
            Err(trail) => (None, Some(trail.len()), Vec::new()),
        };
        if first {
            // Problems the source found in its data but got past (e.g.
            // corrupt Breakpad records): once per module.
            let (line, col) = self.at;
            for w in &warnings {
                self.diagnose(line, col, &w.to_string());
            }
            if self.explained.len() >= 1 << 14 {
                self.explained.clear();
            }
            if explain && self.explained.insert(module.build_id.clone()) {
                self.explain(module);
            }
            if miss_trail_len.is_some() && self.missing_reports.0 >= MAX_MISSING_REPORTS {
                self.missing_reports.1 += 1;
                self.diagnostics += 1;
            } else if let Some(n) = miss_trail_len {
                self.missing_reports.0 += 1;
                let how = if n == 0 {
                    "no symbol source is configured (see --build-id-dir, --symbol-path)".to_string()
                } else {
                    format!("{n} place(s) tried; --explain lists them")
                };
                let (line, col) = self.at;
                self.diagnose(
                    line,
                    col,
                    &format!(
                        "no symbols for module {} (build ID {}): {how}",
                        self.module_label(module),
                        module.build_id
                    ),
                );
            }
        }
        // A symbol file truncated by another process while mapped reads as
        // zeros from then on (see `mapped`): say which, where it was seen.
        for path in crate::base::mapped::take_faults() {
            let (line, col) = self.at;
            self.diagnose(line, col, &crate::base::mapped::fault_message(&path));
        }
        if result.is_some() {
            self.opened_in(module);
        }
        result
    }

    /// Why `module` has no source: none found, or the file LLVM would have
    /// read for it could not be read. LLVM reads the first
    /// `DIR/.build-id/xx/rest.debug` that exists and looks nowhere else; a
    /// valid object there with another build ID is used, not refused.
    pub(super) fn no_source(&self, module: &Module) -> Lookup {
        use crate::symbols::Miss;
        let llvm_file = self.symbolizer.trail(&module.build_id).and_then(|trail| {
            trail.iter().find(|a| {
                matches!(a.provider, Locator::BuildIdDir | Locator::SystemDebugDir)
                    && a.place.ends_with(".debug")
                    && a.place.contains("/.build-id/")
                    && !matches!(a.failure, Some(Miss::NotFound))
            })
        });
        match llvm_file.and_then(|a| a.failure.as_ref()) {
            Some(Miss::Unreadable { .. }) => Lookup::Unreadable,
            _ => Lookup::NoSource,
        }
    }

    /// `#ID "NAME"`; a crash frame's module has no ID (`"NAME"`).
    pub(super) fn module_label(&self, module: &Module) -> String {
        if self.crash.opening {
            format!("\"{}\"", module.name_lossy())
        } else {
            format!("#{} \"{}\"", module.id, module.name_lossy())
        }
    }

    pub(super) fn explain(&mut self, module: &Module) {
        let mut lines = vec![format!(
            "explain: module {} build ID {}:",
            self.module_label(module),
            module.build_id
        )];
        match self.symbolizer.trail(&module.build_id) {
            Some(trail) if !trail.is_empty() => {
                for a in trail {
                    let what = match (&a.failure, a.note) {
                        (None, Some(note)) => format!("found; {note}"),
                        (None, None) => "found".to_string(),
                        // These name their file: the place, printed already.
                        (
                            Some(crate::symbols::Miss::BuildIdMismatch {
                                path,
                                found,
                                expected,
                            }),
                            _,
                        ) if *path == a.place => {
                            format!("build ID is {found}, expected {expected}")
                        }
                        (Some(crate::symbols::Miss::Unreadable { path, reason }), _)
                            if *path == a.place =>
                        {
                            reason.clone()
                        }
                        (Some(m), _) => m.to_string(),
                    };
                    lines.push(format!("  [{}] {}: {}", a.provider, a.place, what));
                }
            }
            _ => lines.push("  no symbol source is configured".to_string()),
        }
        for l in lines {
            self.reporter.report(&Report::Note(&l));
        }
    }

    /// The answer for code address `addr`. With `out`, what earlier lines
    /// produced is written out first if the address's module is about to
    /// be opened (see [`Filter::flush_before_first_open`]).
    pub(super) fn resolve_code(
        &mut self,
        addr: u64,
        kind: PcKind,
        default_ra: bool,
        out: Option<&mut dyn Write>,
    ) -> Resolved {
        let ra = match kind {
            PcKind::ReturnAddress => true,
            PcKind::Precise => false,
            PcKind::Unspecified => default_ra,
        };
        let mut adjusted = if ra { addr.wrapping_sub(1) } else { addr };
        // Fixed-width ISAs step back a whole instruction; the source knows
        // its architecture (LLVM always steps back one byte).
        let step_back = ra && self.opts.dialect.instruction_step;
        let want = self.opts.wants.code;
        // Only elements' lookups are left to the printing thread: a crash
        // frame's line is rewritten from its answer here.
        let defer = out.is_some() && self.defer.as_ref().is_some_and(|now| now());
        let mut place = self.place(adjusted);
        // `Some` once the source was asked about `place` (`Some(None)`: there
        // is none).
        let mut answer = None;
        if let Some(p) = &place {
            let rel = p.rel;
            // One opening of the source for the step and the lookup, unless
            // the step is not one byte (then the address moves).
            let first = self.with_source(&p.module, out, |src| {
                let step = if step_back {
                    src.return_address_step()
                } else {
                    1
                };
                (step <= 1)
                    .then(|| match defer {
                        false => src
                            .lookup_code(rel, want)
                            .map_or_else(Lookup::Failed, Lookup::Code),
                        true => match src.remembered_code(rel, want) {
                            Some(answer) => answer.map_or_else(Lookup::Failed, Lookup::Code),
                            None => Lookup::Deferred(src.deferred(rel, want)),
                        },
                    })
                    .ok_or(step)
            });
            match first {
                Some(Err(step)) => {
                    adjusted = addr.wrapping_sub(step);
                    place = self.place(adjusted);
                }
                Some(Ok(found)) => answer = Some(Some(found)),
                None => answer = Some(None),
            }
        }
        let Some(place) = place else {
            return Resolved {
                addr,
                adjusted,
                place: None,
                lookup: Lookup::NoRegion,
            };
        };
        let rel = place.rel;
        let answer = match answer {
            Some(answer) => answer,
            None => self.with_source(&place.module, None, |src| {
                src.lookup_code(rel, want)
                    .map_or_else(Lookup::Failed, Lookup::Code)
            }),
        };
        let lookup = match answer {
            None => self.no_source(&place.module),
            Some(lookup) => lookup,
        };
        Resolved {
            addr,
            adjusted,
            place: Some(place),
            lookup,
        }
    }

    /// The answer for data address `addr`; `out` as for
    /// [`Filter::resolve_code`].
    pub(super) fn resolve_data(&mut self, addr: u64, out: Option<&mut dyn Write>) -> Resolved {
        let Some(place) = self.place(addr) else {
            return Resolved {
                addr,
                adjusted: addr,
                place: None,
                lookup: Lookup::NoRegion,
            };
        };
        let (rel, want) = (place.rel, self.opts.wants.data);
        let lookup = match self.with_source(&place.module, out, |src| src.lookup_data(rel, want)) {
            None => self.no_source(&place.module),
            Some(Ok(info)) => Lookup::Data(info),
            Some(Err(miss)) => Lookup::Failed(miss),
        };
        Resolved {
            addr,
            adjusted: addr,
            place: Some(place),
            lookup,
        }
    }
}
