//! The filter's hook for crash-report frames without markup (see
//! [`crate::crash`]): plain text the fast path would pass through is
//! searched for frame lines; a frame whose module's symbols answer is
//! rendered as a `bt` element (a `SUMMARY` location as a `pc` element)
//! through the same renderer, everything else passes through unchanged.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::Filter;
use super::scan::count_lines;
use crate::context::{Module, Region};
use crate::crash::{Adjust, Candidates, Recognised};
use crate::markup::{Mode, RawElement};
use crate::render::{Event, Line, Lookup, Place, Resolved};
use crate::symbols::BuildId;

/// Most module names (and modules) remembered; the tables start over when
/// full, so hostile input cannot grow them without bound.
const MODULES_MAX: usize = 1 << 12;

/// Longest module name a frame may give (`PATH_MAX`); a frame naming a
/// longer one is left as it is.
const NAME_MAX: usize = 4096;

/// What the filter remembers of crash reports.
#[derive(Default)]
pub(super) struct CrashState {
    /// Shared, so that recognising frames can borrow the filter mutably
    /// (making the finder again for every text run costs more than the
    /// search itself on a log of short runs).
    candidates: Arc<Candidates>,
    /// Build ID by module name, from lines that print both (sanitizer and
    /// Android frames, systemd `Module` lines), for frames that print none.
    build_ids: HashMap<Vec<u8>, BuildId>,
    /// The modules frames name, by name and build ID; numbered in order of
    /// first appearance.
    modules: HashMap<(Vec<u8>, BuildId), Arc<Module>>,
    /// A crash frame's module is being opened: a miss is reported without a
    /// markup module ID.
    pub(super) opening: bool,
}

impl CrashState {
    fn learn(&mut self, name: &[u8], id: &BuildId) {
        if self.build_ids.get(name) == Some(id) {
            return;
        }
        if self.build_ids.len() >= MODULES_MAX {
            self.build_ids.clear();
        }
        self.build_ids.insert(name.to_vec(), id.clone());
    }

    fn module(&mut self, name: &[u8], id: BuildId) -> Arc<Module> {
        if self.modules.len() >= MODULES_MAX {
            self.modules.clear();
        }
        let n = self.modules.len() as u64;
        let key = (name.to_vec(), id);
        let module = self.modules.entry(key).or_insert_with_key(|(name, id)| {
            Arc::new(Module {
                id: n,
                name: name.clone(),
                build_id: id.clone(),
            })
        });
        Arc::clone(module)
    }
}

/// A recognised frame that resolved: how to rewrite its line.
struct Rewrite {
    /// `None` for a `SUMMARY` location.
    frame: Option<u64>,
    span: Range<usize>,
    resolved: Resolved,
}

impl Filter {
    fn crash_frames_on(&self) -> bool {
        self.opts.dialect.crash_frames
    }

    /// Complete lines without markup (the fast path): frames among them are
    /// symbolized, the rest is handed to the renderer as it is.
    pub(super) fn plain(&mut self, out: &mut dyn Write, text: &[u8], first: u64) -> io::Result<()> {
        // Under --demux each line goes to its process (frames without
        // markup are not recognised there).
        if self.demux.is_some() {
            return self.plain_demuxed(out, text, first);
        }
        // A line without a contextual element ends LLVM's module line.
        self.module_line = None;
        if !self.crash_frames_on() {
            return self.render.plain(out, text, first);
        }
        let candidates = Arc::clone(&self.crash.candidates);
        self.plain_with_frames(out, text, first, &candidates)
    }

    fn plain_with_frames(
        &mut self,
        out: &mut dyn Write,
        text: &[u8],
        first: u64,
        candidates: &Candidates,
    ) -> io::Result<()> {
        // Text before `done` is written; `counted` is where line `number`
        // starts.
        let (mut done, mut done_line) = (0, first);
        let (mut counted, mut number) = (0, first);
        for r in candidates.lines(text) {
            number += count_lines(&text[counted..r.start]);
            counted = r.start;
            let bytes = &text[r.clone()];
            let Some(rw) = self.crash_frame(bytes, number) else {
                continue;
            };
            if r.start > done {
                self.render.plain(out, &text[done..r.start], done_line)?;
            }
            self.rewrite(out, bytes, b"\n", number, rw)?;
            (done, done_line) = (r.end + 1, number + 1);
        }
        if done < text.len() {
            self.render.plain(out, &text[done..], done_line)?;
        }
        Ok(())
    }

    /// The last line of the input when it has no `\n`.
    pub(super) fn unended_line(
        &mut self,
        bytes: &[u8],
        number: u64,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        if self.crash_frames_on()
            && let Some(rw) = self.crash_frame(bytes, number)
        {
            return self.rewrite(out, bytes, b"", number, rw);
        }
        self.line(bytes, b"", number, out)
    }

    /// Recognise and resolve a line; `None` leaves it as it is.
    fn crash_frame(&mut self, bytes: &[u8], number: u64) -> Option<Rewrite> {
        let f = match crate::crash::recognise(bytes)? {
            Recognised::ModuleBuildId { name, build_id } => {
                if name.len() > NAME_MAX {
                    return None;
                }
                let id = build_id_of(build_id)?;
                self.crash.learn(name, &id);
                return None;
            }
            Recognised::Frame(f) if f.module.len() <= NAME_MAX => f,
            Recognised::Frame(_) => return None,
        };
        let id = match f.build_id {
            Some(hex) => {
                let id = build_id_of(hex)?;
                self.crash.learn(f.module, &id);
                id
            }
            None => self.crash.build_ids.get(f.module)?.clone(),
        };
        let module = self.crash.module(f.module, id);
        self.at = (number, f.span.start + 1);
        let return_address = f.adjust == Adjust::ReturnAddress;
        let offset = f.offset;
        let want = self.opts.wants.code;
        self.crash.opening = true;
        let found = self.with_source(&module, None, |src| {
            let step = if return_address {
                src.return_address_step()
            } else {
                0
            };
            (step, src.lookup_code(offset.wrapping_sub(step), want))
        });
        self.crash.opening = false;
        let (step, info) = match found? {
            (step, Ok(info)) if !info.is_empty() => (step, info),
            _ => return None,
        };
        // Frames that print no address (TSan, Android) show the offset.
        let addr = f.addr.unwrap_or(offset);
        let rel = offset.wrapping_sub(step);
        let region = Region {
            start: addr.wrapping_sub(offset),
            size: 0,
            module: module.id,
            mode: Mode::RX,
            rel: 0,
        };
        Some(Rewrite {
            frame: f.frame,
            span: f.span,
            resolved: Resolved {
                addr,
                adjusted: addr.wrapping_sub(step),
                place: Some(Place {
                    module,
                    region,
                    rel,
                }),
                lookup: Lookup::Code(info),
            },
        })
    }

    /// Render a resolved frame's line: its prefix and suffix as text, the
    /// frame as a `bt` (or `pc`) element.
    fn rewrite(
        &mut self,
        out: &mut dyn Write,
        bytes: &[u8],
        ending: &[u8],
        number: u64,
        rw: Rewrite,
    ) -> io::Result<()> {
        let raw = RawElement {
            span: rw.span.clone(),
            tag: rw.span.start..rw.span.start,
            fields: Default::default(),
        };
        let mut events: smallvec::SmallVec<[Event<'_>; 3]> = smallvec::SmallVec::new();
        if rw.span.start > 0 {
            events.push(Event::Text(&bytes[..rw.span.start]));
        }
        events.push(match rw.frame {
            Some(n) => Event::Bt(&raw, n, rw.resolved),
            None => Event::Pc(&raw, rw.resolved),
        });
        if rw.span.end < bytes.len() {
            events.push(Event::Text(&bytes[rw.span.end..]));
        }
        let line = Line {
            bytes,
            ending,
            number,
            lead: b"",
            key: None,
        };
        self.render.line(out, &line, &events)
    }
}

fn build_id_of(hex: &[u8]) -> Option<BuildId> {
    BuildId::from_hex(std::str::from_utf8(hex).ok()?)
}
