//! The byte scanner: finds the lines with markup in the input buffer,
//! passes the rest through in big slices, reads more input, and gathers
//! multi-line `hexdict` groups and over-long lines.

use std::io::{self, Read, Write};

use super::{Filter, FilterError};
use crate::markup::{ESC, Lexer};

/// Cached position of the next occurrence of a needle in the input buffer.
#[derive(Clone, Copy, Default)]
struct Hit {
    found: Option<usize>,
    scanned_to: usize,
}

impl Hit {
    fn next(
        &mut self,
        len: usize,
        pos: usize,
        end: usize,
        find: impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        if let Some(f) = self.found {
            if f >= pos {
                return Some(f);
            }
            self.scanned_to = pos;
        }
        let from = pos.max(self.scanned_to.saturating_sub(len - 1));
        if from >= end {
            self.found = None;
            self.scanned_to = end;
            return None;
        }
        self.found = find(from).map(|i| from + i);
        self.scanned_to = end;
        self.found
    }

    fn shift(&mut self, d: usize) {
        self.found = self.found.and_then(|f| f.checked_sub(d));
        self.scanned_to = self.scanned_to.saturating_sub(d);
    }
}

impl Filter {
    pub(super) fn scan(
        &mut self,
        reader: &mut impl Read,
        out: &mut dyn Write,
        st: &mut Scan,
    ) -> Result<(), FilterError> {
        let chunk = (256 << 10).min(self.opts.max_line.max(16));
        // The last input's buffer, unless it grew for a long line.
        let mut buf = std::mem::take(&mut self.read_buf);
        buf.resize(chunk, 0);
        let result = self.scan_in(&mut buf, reader, out, st);
        if buf.len() == chunk {
            self.read_buf = buf;
        }
        result
    }

    fn scan_in(
        &mut self,
        buf: &mut Vec<u8>,
        reader: &mut impl Read,
        out: &mut dyn Write,
        st: &mut Scan,
    ) -> Result<(), FilterError> {
        loop {
            self.process(buf, st, out)?;
            if st.eof {
                break;
            }
            if st.pos > 0 {
                buf.copy_within(st.pos..st.end, 0);
                st.end -= st.pos;
                st.open.shift(st.pos);
                st.esc.shift(st.pos);
                st.nl.shift(st.pos);
                st.pos = 0;
            }
            if st.end == buf.len() {
                if buf.len() < self.opts.max_line {
                    let n = (buf.len() * 2).min(self.opts.max_line.max(16));
                    buf.resize(n, 0);
                } else {
                    // An over-long line: pass what we have through untouched
                    // and the rest of the line after it.
                    let data = &buf[..st.end];
                    if self.lexer.find_open(data).is_some() || memchr::memchr(ESC, data).is_some() {
                        let line = st.line;
                        self.diagnose(
                            line,
                            1,
                            &format!(
                                "line longer than {} bytes: passed through without symbolizing",
                                self.opts.max_line
                            ),
                        );
                    }
                    self.render.raw(out, data).map_err(FilterError::Write)?;
                    st.long_line = true;
                    st.end = 0;
                    st.open = Hit::default();
                    st.esc = Hit::default();
                    st.nl = Hit::default();
                    continue;
                }
            }
            // About to read, which may block: the renderer writes out what
            // it holds back (Render::idle), then everything is flushed.
            if !self.never_blocks {
                self.idle_all(out).map_err(FilterError::Write)?;
            }
            out.flush().map_err(FilterError::Write)?;
            let n = loop {
                match reader.read(&mut buf[st.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        // Keep what was read so far.
                        st.eof = true;
                        self.process(buf, st, out)?;
                        return Err(FilterError::Read(e));
                    }
                }
            };
            if n == 0 {
                st.eof = true;
            } else {
                st.end += n;
            }
        }
        Ok(())
    }

    /// Process everything complete in `buf[st.pos..st.end]` (and, at EOF,
    /// everything).
    pub(super) fn process(
        &mut self,
        buf: &[u8],
        st: &mut Scan,
        out: &mut dyn Write,
    ) -> Result<(), FilterError> {
        let w = FilterError::Write;
        while st.pos < st.end {
            let end = st.end;
            if st.long_line {
                let rest = &buf[st.pos..end];
                match memchr::memchr(b'\n', rest) {
                    Some(i) => {
                        self.render.raw(out, &rest[..=i]).map_err(w)?;
                        st.pos += i + 1;
                        st.line += 1;
                        st.long_line = false;
                        continue;
                    }
                    None => {
                        self.render.raw(out, rest).map_err(w)?;
                        st.pos = end;
                        return Ok(());
                    }
                }
            }
            let lexer = &self.lexer;
            let pos = st.pos;
            let open = st
                .open
                .next(3, pos, end, |from| lexer.find_open(&buf[from..end]));
            let esc = st
                .esc
                .next(1, pos, end, |from| memchr::memchr(ESC, &buf[from..end]));
            let special = match (open, esc) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let Some(s) = special else {
                // No markup in the rest: pass complete lines through.
                let rest = &buf[pos..end];
                let first_nl = st
                    .nl
                    .next(1, pos, end, |from| memchr::memchr(b'\n', &buf[from..end]));
                if first_nl.is_some()
                    && let Some(nl) = memchr::memrchr(b'\n', rest)
                {
                    let text = &rest[..=nl];
                    self.plain(out, text, st.line).map_err(w)?;
                    st.line += count_lines(text);
                    st.pos += nl + 1;
                }
                if st.eof && st.pos < end {
                    let line = &buf[st.pos..end];
                    self.unended_line(line, st.line, out).map_err(w)?;
                    st.pos = end;
                }
                return Ok(());
            };
            let line_start = memchr::memrchr(b'\n', &buf[pos..s]).map_or(pos, |i| pos + i + 1);
            if line_start > pos {
                let text = &buf[pos..line_start];
                self.plain(out, text, st.line).map_err(w)?;
                st.line += count_lines(text);
                st.pos = line_start;
            }
            let ls = st.pos;
            let le = match st
                .nl
                .next(1, s, end, |from| memchr::memchr(b'\n', &buf[from..end]))
            {
                Some(i) => i,
                None if st.eof => end,
                None => return Ok(()),
            };
            // A multi-line hexdict?
            let mut group_end = None;
            // Under --demux the lines of a dump may be another process's.
            if self.opts.dialect.multiline_hexdict
                && self.demux.is_none()
                && opens_multiline(&self.lexer, &buf[ls..le])
                && le < end
            {
                // The dump ends at the first `}}}`; a `{{{` before it means
                // it never closed (its lines are then plain lines).
                let next_open = self.lexer.find_open(&buf[le..end]).map(|o| le + o);
                let search_end = next_open.unwrap_or(end);
                match self.lexer.find_close(&buf[le..search_end]) {
                    None if next_open.is_some() => {}
                    Some(c) => {
                        let close = le + c;
                        let ge = match memchr::memchr(b'\n', &buf[close..end]) {
                            Some(i) => Some(close + i),
                            None if st.eof => Some(end),
                            None => None,
                        };
                        match ge {
                            Some(ge) => {
                                let lines = count_lines(&buf[ls..ge]);
                                if lines < self.opts.max_group_lines as u64
                                    && ge - ls <= self.opts.max_group_bytes
                                {
                                    group_end = Some(ge);
                                }
                            }
                            None => {
                                if end - ls <= self.opts.max_group_bytes {
                                    return Ok(());
                                }
                            }
                        }
                    }
                    None => {
                        let lines = count_lines(&buf[ls..end]);
                        if !st.eof
                            && end - ls <= self.opts.max_group_bytes
                            && lines < self.opts.max_group_lines as u64
                        {
                            return Ok(());
                        }
                    }
                }
            }
            let le = group_end.unwrap_or(le);
            let ending: &[u8] = if le < end { b"\n" } else { b"" };
            let number = st.line;
            self.line(&buf[ls..le], ending, number, out).map_err(w)?;
            st.line += count_lines(&buf[ls..le]) + 1;
            st.pos = (le + 1).min(end);
        }
        Ok(())
    }
}

#[derive(Default)]
pub(super) struct Scan {
    pos: usize,
    end: usize,
    eof: bool,
    long_line: bool,
    /// Number of the line at `pos`.
    pub(super) line: u64,
    open: Hit,
    esc: Hit,
    /// Next `\n`: a long line arriving in small reads is not rescanned.
    nl: Hit,
}

impl Scan {
    pub(super) fn at_line(line: u64) -> Scan {
        Scan {
            line,
            ..Scan::default()
        }
    }
}

/// Number of `\n` bytes (SIMD count: this runs over every byte of plain
/// text).
pub(super) fn count_lines(b: &[u8]) -> u64 {
    bytecount::count(b, b'\n') as u64
}

/// LLVM's rule for the start of a multi-line element: the last `{{{` on the
/// line, no `}}}` after it, and the tag before the first `:` is `hexdict`.
fn opens_multiline(lexer: &Lexer, line: &[u8]) -> bool {
    // Most markup lines end with an element: a `{{{` before their last
    // `}}}` cannot be the start of a dump (nor overlap it).
    if line.ends_with(b"}}}") {
        return false;
    }
    let Some(begin) = lexer.rfind_open(line) else {
        return false;
    };
    let after = &line[begin + 3..];
    if lexer.find_close(after).is_some() {
        return false;
    }
    match memchr::memchr(b':', after) {
        Some(i) => &after[..i] == b"hexdict",
        None => false,
    }
}
