//! `--demux`: one process's state per key (see [`crate::demux`]).
//!
//! What belongs to a process is its [`Process`]: the context and the
//! renderer (which holds a process's backtrace and module summary until
//! they end, and its path and colour state). The filter keeps the current
//! key's in its own fields, as without `--demux`, and swaps them with the
//! table's when a line of another key comes; everything else (the symbol
//! front, its caches, the lexer, diagnostics) is shared.

use std::io::{self, Write};
use std::ops::Range;

use super::Filter;
use crate::context::Context;
use crate::demux::lru::Table;
use crate::demux::{How, Recognizer};
use crate::render::Render;

/// `--demux` settings.
#[derive(Clone, Debug)]
pub struct DemuxOptions {
    pub how: How,
    /// Most processes kept at once (`--demux-keys`).
    pub max_keys: usize,
}

/// Default of [`DemuxOptions::max_keys`].
pub const DEFAULT_MAX_KEYS: usize = 4096;

/// One process's state.
pub(super) struct Process {
    pub context: Context,
    pub render: Box<dyn Render>,
    /// See [`Filter::module_line`].
    pub module_line: Option<u64>,
}

/// The demultiplexer's state.
pub(super) struct Demux {
    recognizer: Recognizer,
    /// Every live key's state but the current one's (`None` in its slot:
    /// it is in the filter's fields).
    table: Table<Option<Process>>,
    /// The current key and its slot. The empty key is the shared default.
    current: Vec<u8>,
    slot: usize,
    /// Contexts made so far (their generations are kept apart).
    made: u64,
    max_keys: usize,
}

impl Demux {
    pub fn new(opts: &DemuxOptions) -> Demux {
        let mut table = Table::new(opts.max_keys);
        let slot = table.touch(b"", || None).slot;
        Demux {
            recognizer: Recognizer::new(opts.how.clone()),
            table,
            current: Vec::new(),
            slot,
            made: 1,
            max_keys: opts.max_keys,
        }
    }
}

/// The bytes of `key` for the renderer (`current`: the current key, for
/// [`Key::Current`]); `None` for the default.
pub(super) fn key_bytes<'a>(key: &Key, line: &'a [u8], current: &'a [u8]) -> Option<&'a [u8]> {
    match key {
        Key::Default => None,
        Key::InLine(r) => Some(&line[r.clone()]),
        Key::Current => Some(current).filter(|k| !k.is_empty()),
    }
}

/// Which key a line is for.
pub(super) enum Key {
    /// The shared default (no prefix).
    Default,
    /// The bytes of the line in this range.
    InLine(Range<usize>),
    /// The current key (a line that continues the last key's record).
    Current,
}

impl Filter {
    /// Find the prefix of `line` and make its key's state the current one.
    /// Returns the length of the lead and the key.
    pub(super) fn select_process(
        &mut self,
        line: &[u8],
        number: u64,
        out: &mut dyn Write,
    ) -> io::Result<(usize, Key)> {
        let (lead, key) = self.recognise(line);
        self.enter(&key, line, number, out)?;
        Ok((lead, key))
    }

    /// The lead and key of `line`.
    fn recognise(&mut self, line: &[u8]) -> (usize, Key) {
        let Some(dm) = self.demux.as_deref_mut() else {
            return (0, Key::Default);
        };
        let body = line.strip_suffix(b"\r").unwrap_or(line);
        match dm.recognizer.recognise(body) {
            Some(p) => (p.lead, Key::InLine(p.key)),
            None if dm.recognizer.continues() => (0, Key::Current),
            None => (0, Key::Default),
        }
    }

    /// Make the state of `key` (found in `line`) the current one.
    fn enter(
        &mut self,
        key: &Key,
        line: &[u8],
        number: u64,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let Some(dm) = self.demux.as_deref_mut() else {
            return Ok(());
        };
        let bytes: &[u8] = match key {
            Key::InLine(r) => &line[r.clone()],
            Key::Default => b"",
            Key::Current => return Ok(()),
        };
        if bytes != dm.current.as_slice() {
            self.switch_process(bytes, number, out)?;
        }
        Ok(())
    }

    /// Complete lines without markup, each to its process: runs of lines
    /// without a key go to the renderer in one piece, as without
    /// `--demux`; a keyed line is given as one text event after its lead.
    pub(super) fn plain_demuxed(
        &mut self,
        out: &mut dyn Write,
        text: &[u8],
        first_line: u64,
    ) -> io::Result<()> {
        // Start and first line number of the run of unkeyed lines.
        let mut run: Option<(usize, u64)> = None;
        let mut pos = 0;
        let mut number = first_line;
        while pos < text.len() {
            let end = memchr::memchr(b'\n', &text[pos..]).map_or(text.len(), |i| pos + i + 1);
            let (body, ending) =
                text[pos..end].split_at(end - pos - usize::from(text[end - 1] == b'\n'));
            let (lead, key) = self.recognise(body);
            if let Key::Default = key {
                if run.is_none() {
                    self.enter(&key, body, number, out)?;
                    self.module_line = None;
                    run = Some((pos, number));
                }
            } else {
                if let Some((start, first)) = run.take() {
                    self.render.plain(out, &text[start..pos], first)?;
                }
                self.enter(&key, body, number, out)?;
                self.module_line = None;
                let current = match key {
                    Key::Current => self.current_key(),
                    _ => Vec::new(),
                };
                let line = crate::render::Line {
                    bytes: body,
                    ending,
                    number,
                    lead: &body[..lead],
                    key: key_bytes(&key, body, &current),
                };
                let result =
                    self.render
                        .line(out, &line, &[crate::render::Event::Text(&body[lead..])]);
                if let Key::Current = key {
                    self.restore_key(current);
                }
                result?;
            }
            pos = end;
            number += 1;
        }
        match run {
            Some((start, first)) => self.render.plain(out, &text[start..], first),
            None => Ok(()),
        }
    }

    /// Make `key`'s state the current one, creating it if need be. A key
    /// evicted to make room has its renderer finished (its held output is
    /// written now).
    fn switch_process(&mut self, key: &[u8], number: u64, out: &mut dyn Write) -> io::Result<()> {
        let dm = self.demux.as_deref_mut().expect("demux");
        let t = dm.table.touch(key, || None);
        let prev = std::mem::replace(&mut dm.slot, t.slot);
        dm.current.clear();
        dm.current.extend_from_slice(key);
        let incoming = match dm.table.value_mut(t.slot).take() {
            Some(p) => p,
            None => {
                dm.made += 1;
                let context = Context::starting_at(dm.made << 32);
                Process {
                    context,
                    render: self.make_render(),
                    module_line: None,
                }
            }
        };
        let dm = self.demux.as_deref_mut().expect("demux");
        let outgoing = Process {
            context: std::mem::replace(&mut self.context, incoming.context),
            render: std::mem::replace(&mut self.render, incoming.render),
            module_line: std::mem::replace(&mut self.module_line, incoming.module_line),
        };
        let max_keys = dm.max_keys;
        let mut evicted = None;
        match t.evicted {
            // The previous current key's slot was reused.
            Some((k, None)) => evicted = Some((k, outgoing)),
            Some((k, Some(p))) => {
                evicted = Some((k, p));
                *dm.table.value_mut(prev) = Some(outgoing);
            }
            None => *dm.table.value_mut(prev) = Some(outgoing),
        }
        if let Some((k, mut p)) = evicted {
            if !p.context.is_empty() {
                dm.table.remember_evicted(&k);
            }
            p.render.finish(out)?;
        }
        if t.returned {
            self.diagnose(
                number,
                1,
                &format!(
                    "process \"{}\" comes back after its context was dropped (more than {max_keys} \
                     processes at once; see --demux-keys): it starts with an empty context",
                    String::from_utf8_lossy(key)
                ),
            );
        }
        Ok(())
    }

    /// The current key, for a line that continues its record.
    pub(super) fn current_key(&mut self) -> Vec<u8> {
        self.demux
            .as_deref_mut()
            .map(|dm| std::mem::take(&mut dm.current))
            .unwrap_or_default()
    }

    /// Give back what [`Filter::current_key`] took.
    pub(super) fn restore_key(&mut self, key: Vec<u8>) {
        if let Some(dm) = self.demux.as_deref_mut() {
            dm.current = key;
        }
    }

    /// A renderer for a new process, like the first one.
    pub(super) fn make_render(&self) -> Box<dyn Render> {
        let render = crate::render::renderer(self.opts.format, &super::render_options(&self.opts));
        match &self.wrap {
            Some(wrap) => wrap(render),
            None => render,
        }
    }

    /// [`Render::idle`] for every process.
    pub(super) fn idle_all(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(dm) = self.demux.as_deref_mut() {
            for slot in dm.table.oldest_first() {
                if let Some(p) = dm.table.value_mut(slot) {
                    p.render.idle(out)?;
                }
            }
        }
        self.render.idle(out)
    }

    /// [`Render::finish`] for every process, the least recently seen
    /// first.
    pub(super) fn finish_all(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(dm) = self.demux.as_deref_mut() {
            for slot in dm.table.oldest_first() {
                if let Some(p) = dm.table.value_mut(slot) {
                    p.render.finish(out)?;
                }
            }
        }
        self.render.finish(out)
    }
}
