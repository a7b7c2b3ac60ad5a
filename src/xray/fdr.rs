//! Decoder for XRay flight-data-recorder (FDR) traces.
//!
//! Reads version 1 exactly as the format document describes it (buffers of
//! the header's fixed size ending in `EndOfBuffer`) and versions 2 to 5 as
//! compiler-rt writes them (each buffer introduced by a `BufferExtents`
//! record giving its used size), in either byte order.
//!
//! Decoding is two passes over the mapped bytes, with no per-record
//! allocation: [`Trace::parse`] finds the buffers (blocks) and reads their
//! prelude (thread, process, wall clock); [`Trace::for_each_event`] then
//! walks each thread's blocks in time order and hands every record, with its
//! absolute TSC, to a callback. Damage is local: a block that breaks the
//! grammar is decoded up to the bad record, the place and reason are
//! recorded as a [`Diagnostic`], and decoding goes on with the next block.

use std::fmt;

/// Size of the file header.
pub const HEADER_SIZE: usize = 32;
const METADATA_SIZE: usize = 16;
const FUNCTION_SIZE: usize = 8;

/// Metadata record kinds (the 7-bit kind of the first byte).
mod kind {
    pub const NEW_BUFFER: u8 = 0;
    pub const END_OF_BUFFER: u8 = 1;
    pub const NEW_CPU_ID: u8 = 2;
    pub const TSC_WRAP: u8 = 3;
    pub const WALLTIME: u8 = 4;
    pub const CUSTOM_EVENT: u8 = 5;
    pub const CALL_ARGUMENT: u8 = 6;
    pub const BUFFER_EXTENTS: u8 = 7;
    pub const TYPED_EVENT: u8 = 8;
    pub const PID: u8 = 9;
}

fn metadata_name(k: u8) -> &'static str {
    match k {
        kind::NEW_BUFFER => "NewBuffer",
        kind::END_OF_BUFFER => "EndOfBuffer",
        kind::NEW_CPU_ID => "NewCPUId",
        kind::TSC_WRAP => "TSCWrap",
        kind::WALLTIME => "WalltimeMarker",
        kind::CUSTOM_EVENT => "CustomEventMarker",
        kind::CALL_ARGUMENT => "CallArgument",
        kind::BUFFER_EXTENTS => "BufferExtents",
        kind::TYPED_EVENT => "TypedEventMarker",
        kind::PID => "Pid",
        _ => "unknown metadata record",
    }
}

/// Byte order of the machine that wrote the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Endian::Little => u16::from_le_bytes(a),
            Endian::Big => u16::from_be_bytes(a),
        }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        }
    }
    fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Endian::Little => u64::from_le_bytes(a),
            Endian::Big => u64::from_be_bytes(a),
        }
    }
    /// `(is_metadata, metadata kind)` of a record's first byte: bit fields
    /// run from the least significant bit on little-endian machines and from
    /// the most significant bit on big-endian ones.
    fn introducer(self, b: u8) -> (bool, u8) {
        match self {
            Endian::Little => (b & 1 == 1, b >> 1),
            Endian::Big => (b >> 7 == 1, b & 0x7f),
        }
    }
    /// `(action, function id)` of a function record's first 32 bits.
    fn function_word(self, w: u32) -> (u8, u32) {
        match self {
            Endian::Little => (((w >> 1) & 7) as u8, w >> 4),
            Endian::Big => (((w >> 28) & 7) as u8, w & 0x0fff_ffff),
        }
    }
}

/// The 32-byte file header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    /// 1 for FDR traces.
    pub trace_type: u16,
    pub constant_tsc: bool,
    pub nonstop_tsc: bool,
    /// Hz of the timestamp counter; 0 when the runtime did not know it.
    pub cycle_frequency: u64,
    /// Version 1: the size of every thread buffer.
    pub buffer_size: u64,
    pub endian: Endian,
}

/// Why a trace cannot be read at all (problems past the header are
/// [`Diagnostic`]s instead).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TraceError {
    #[error("file is {0} bytes, too short for an XRay file header (32 bytes)")]
    TooShort(usize),
    #[error(
        "not an XRay FDR trace: header says version {version}, type {trace_type} (FDR traces are type 1, versions 1 to 5)"
    )]
    NotFdr { version: u16, trace_type: u16 },
}

/// Where decoding of a block stopped early, or bytes that were skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte offset in the file.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {:#x}: {}", self.offset, self.message)
    }
}

/// A thread of a traced process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ThreadKey {
    pub pid: u32,
    pub tid: u32,
}

/// Function record actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FnKind {
    Entry,
    Exit,
    TailExit,
    EntryArgs,
}

impl FnKind {
    pub fn is_entry(self) -> bool {
        matches!(self, FnKind::Entry | FnKind::EntryArgs)
    }
}

/// One decoded record with its absolute timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Function {
        kind: FnKind,
        func_id: u32,
        tsc: u64,
        cpu: u16,
    },
    /// An argument of the `EntryArgs` record just before it.
    Arg(u64),
    Custom {
        tsc: u64,
        cpu: u16,
        data: &'a [u8],
    },
    Typed {
        tsc: u64,
        cpu: u16,
        event_type: u16,
        data: &'a [u8],
    },
}

/// One thread buffer: where its records are and whose they are.
#[derive(Clone, Debug)]
pub struct Block {
    /// File offset of the first record (the `NewBuffer`).
    pub start: usize,
    /// File offset one past the last byte that may hold records.
    pub end: usize,
    pub thread: ThreadKey,
    pub wall_seconds: u64,
    pub wall_micros: u32,
}

/// A parsed trace: header and block index over borrowed bytes.
pub struct Trace<'a> {
    data: &'a [u8],
    pub header: Header,
    pub blocks: Vec<Block>,
    /// Problems found while indexing (garbage between buffers, truncation).
    pub diagnostics: Vec<Diagnostic>,
}

fn read_header(data: &[u8], endian: Endian) -> Header {
    let bits = endian.u32(&data[4..8]);
    Header {
        version: endian.u16(&data[0..2]),
        trace_type: endian.u16(&data[2..4]),
        constant_tsc: bits & 1 != 0,
        nonstop_tsc: bits & 2 != 0,
        cycle_frequency: endian.u64(&data[8..16]),
        buffer_size: endian.u64(&data[16..24]),
        endian,
    }
}

fn plausible(h: &Header) -> bool {
    h.trace_type == 1 && (1..=5).contains(&h.version)
}

/// Parse the header, guessing the byte order from it.
pub fn parse_header(data: &[u8]) -> Result<Header, TraceError> {
    if data.len() < HEADER_SIZE {
        return Err(TraceError::TooShort(data.len()));
    }
    let le = read_header(data, Endian::Little);
    if plausible(&le) {
        return Ok(le);
    }
    let be = read_header(data, Endian::Big);
    if plausible(&be) {
        return Ok(be);
    }
    Err(TraceError::NotFdr {
        version: le.version,
        trace_type: le.trace_type,
    })
}

/// Cap on diagnostics kept per trace so hostile input cannot grow them
/// without bound; the count of dropped ones is reported instead.
const MAX_DIAGNOSTICS: usize = 64;

struct DiagSink {
    list: Vec<Diagnostic>,
    dropped: u64,
}

impl DiagSink {
    fn new() -> DiagSink {
        DiagSink {
            list: Vec::new(),
            dropped: 0,
        }
    }
    fn push(&mut self, offset: usize, message: String) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list.push(Diagnostic {
                offset: offset as u64,
                message,
            });
        } else {
            self.dropped += 1;
        }
    }
    fn finish(mut self) -> Vec<Diagnostic> {
        if self.dropped > 0 {
            let offset = self.list.last().map_or(0, |d| d.offset);
            self.list.push(Diagnostic {
                offset,
                message: format!("{} further problems not shown", self.dropped),
            });
        }
        self.list
    }
}

impl<'a> Trace<'a> {
    /// Read the header and index the buffers.
    pub fn parse(data: &'a [u8]) -> Result<Trace<'a>, TraceError> {
        let header = parse_header(data)?;
        let mut diags = DiagSink::new();
        let blocks = if header.version >= 2 {
            index_extents(data, &header, &mut diags)
        } else {
            index_v1(data, &header, &mut diags)
        };
        Ok(Trace {
            data,
            header,
            blocks,
            diagnostics: diags.finish(),
        })
    }

    /// Threads in order of first appearance.
    pub fn threads(&self) -> Vec<ThreadKey> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for b in &self.blocks {
            if seen.insert(b.thread) {
                out.push(b.thread);
            }
        }
        out
    }

    /// Block indices grouped by thread (first-appearance order), each
    /// thread's blocks in time order (wall clock, then file order).
    pub fn blocks_by_thread(&self) -> Vec<(ThreadKey, Vec<usize>)> {
        let mut groups: Vec<(ThreadKey, Vec<usize>)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (i, b) in self.blocks.iter().enumerate() {
            let g = *index.entry(b.thread).or_insert_with(|| {
                groups.push((b.thread, Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(i);
        }
        for (_, list) in &mut groups {
            list.sort_by_key(|&i| (self.blocks[i].wall_seconds, self.blocks[i].wall_micros, i));
        }
        groups
    }

    /// Decode every block, thread by thread, calling `f` for each event.
    /// `thread_done` is called after each thread's last block. Returns the
    /// problems met (indexing problems first).
    pub fn for_each_event(
        &self,
        mut f: impl FnMut(ThreadKey, &Event<'a>),
        mut thread_done: impl FnMut(ThreadKey),
    ) -> Vec<Diagnostic> {
        let mut diags = DiagSink::new();
        for d in &self.diagnostics {
            diags.list.push(d.clone());
        }
        for (thread, blocks) in self.blocks_by_thread() {
            for i in blocks {
                self.decode_block(&self.blocks[i], &mut diags, |e| f(thread, e));
            }
            thread_done(thread);
        }
        diags.finish()
    }

    /// Decode one block (see [`Trace::blocks`]).
    pub fn decode_block_events(
        &self,
        block: &Block,
        f: &mut dyn FnMut(&Event<'a>),
    ) -> Vec<Diagnostic> {
        let mut diags = DiagSink::new();
        self.decode_block(block, &mut diags, |e| f(e));
        diags.finish()
    }

    fn decode_block(&self, block: &Block, diags: &mut DiagSink, mut f: impl FnMut(&Event<'a>)) {
        let h = &self.header;
        let e = h.endian;
        let data = &self.data[..block.end.min(self.data.len())];
        let mut off = block.start;
        let mut state = State::Start;
        let mut tsc: u64 = 0;
        let mut cpu: u16 = 0;
        while off < data.len() {
            let (is_meta, k) = e.introducer(data[off]);
            if !is_meta {
                if data.len() - off < FUNCTION_SIZE {
                    diags.push(
                        off,
                        format!(
                            "truncated function record ({} of 8 bytes); rest of buffer skipped",
                            data.len() - off
                        ),
                    );
                    return;
                }
                let word = e.u32(&data[off..off + 4]);
                let delta = e.u32(&data[off + 4..off + 8]);
                let (action, func_id) = e.function_word(word);
                let fk = match action {
                    0 => FnKind::Entry,
                    1 => FnKind::Exit,
                    2 => FnKind::TailExit,
                    3 => FnKind::EntryArgs,
                    _ => {
                        diags.push(
                            off,
                            format!(
                                "function record with unknown action {action}; rest of buffer skipped"
                            ),
                        );
                        return;
                    }
                };
                if state != State::Body && state != State::Args {
                    diags.push(off, format!("function record {}", state.misplaced()));
                    return;
                }
                tsc = tsc.wrapping_add(u64::from(delta));
                f(&Event::Function {
                    kind: fk,
                    func_id,
                    tsc,
                    cpu,
                });
                state = if fk == FnKind::EntryArgs {
                    State::Args
                } else {
                    State::Body
                };
                off += FUNCTION_SIZE;
                continue;
            }
            let name = metadata_name(k);
            if data.len() - off < METADATA_SIZE {
                diags.push(
                    off,
                    format!(
                        "truncated {name} record ({} of 16 bytes); rest of buffer skipped",
                        data.len() - off
                    ),
                );
                return;
            }
            let body = &data[off + 1..off + METADATA_SIZE];
            let mut next = off + METADATA_SIZE;
            match (k, state) {
                (kind::NEW_BUFFER, State::Start) => state = State::AfterNewBuffer,
                (kind::WALLTIME, State::AfterNewBuffer) => state = State::AfterWalltime,
                (kind::PID, State::AfterWalltime) if h.version >= 3 => state = State::AfterPid,
                (kind::NEW_CPU_ID, State::AfterWalltime | State::AfterPid) => {
                    cpu = e.u16(&body[0..2]);
                    tsc = e.u64(&body[2..10]);
                    state = State::Body;
                }
                (kind::NEW_CPU_ID, State::Body | State::Args) => {
                    cpu = e.u16(&body[0..2]);
                    tsc = e.u64(&body[2..10]);
                    state = State::Body;
                }
                (kind::TSC_WRAP, State::Body | State::Args) => {
                    tsc = e.u64(&body[0..8]);
                    state = State::Body;
                }
                (kind::CALL_ARGUMENT, State::Args) => f(&Event::Arg(e.u64(&body[0..8]))),
                (kind::CALL_ARGUMENT, State::Body) => {
                    diags.push(
                        off,
                        "CallArgument record not after an Entry_Args function record; rest of buffer skipped"
                            .to_string(),
                    );
                    return;
                }
                (kind::CUSTOM_EVENT | kind::TYPED_EVENT, State::Body | State::Args) => {
                    let size = e.u32(&body[0..4]) as i32;
                    if size <= 0 {
                        diags.push(
                            off,
                            format!(
                                "{name} with invalid payload size {size}; rest of buffer skipped"
                            ),
                        );
                        return;
                    }
                    let size = size as usize;
                    if data.len() - next < size {
                        diags.push(
                            off,
                            format!(
                                "{name} payload of {size} bytes runs past the end of the buffer ({} bytes left); rest of buffer skipped",
                                data.len() - next
                            ),
                        );
                        return;
                    }
                    let payload = &data[next..next + size];
                    next += size;
                    if k == kind::CUSTOM_EVENT {
                        let ev_tsc = if h.version >= 5 {
                            tsc = tsc.wrapping_add(u64::from(e.u32(&body[4..8])));
                            tsc
                        } else {
                            e.u64(&body[4..12])
                        };
                        // Versions 1-3 record no CPU with the event
                        // (llvm-xray reports 0); version 4 does; version 5
                        // events belong to the current CPU.
                        let ev_cpu = match h.version {
                            4 => e.u16(&body[12..14]),
                            5.. => cpu,
                            _ => 0,
                        };
                        f(&Event::Custom {
                            tsc: ev_tsc,
                            cpu: ev_cpu,
                            data: payload,
                        });
                    } else {
                        tsc = tsc.wrapping_add(u64::from(e.u32(&body[4..8])));
                        f(&Event::Typed {
                            tsc,
                            cpu,
                            event_type: e.u16(&body[8..10]),
                            data: payload,
                        });
                    }
                    state = State::Body;
                }
                (kind::END_OF_BUFFER, _) if h.version == 1 => {
                    if !matches!(state, State::Body | State::Args) {
                        diags.push(off, format!("EndOfBuffer {}", state.misplaced()));
                    }
                    return;
                }
                (kind::PID | kind::WALLTIME | kind::NEW_BUFFER | kind::NEW_CPU_ID, _)
                | (kind::TSC_WRAP | kind::CUSTOM_EVENT | kind::TYPED_EVENT, _)
                | (kind::CALL_ARGUMENT, _) => {
                    diags.push(off, format!("{name} record {}", state.misplaced()));
                    return;
                }
                (kind::END_OF_BUFFER, _) => {
                    diags.push(
                        off,
                        format!(
                            "EndOfBuffer record in a version {} trace (only version 1 has them); rest of buffer skipped",
                            h.version
                        ),
                    );
                    return;
                }
                (kind::BUFFER_EXTENTS, _) => {
                    diags.push(
                        off,
                        "BufferExtents record inside a buffer; rest of buffer skipped".to_string(),
                    );
                    return;
                }
                _ => {
                    diags.push(
                        off,
                        format!("unknown metadata record kind {k}; rest of buffer skipped"),
                    );
                    return;
                }
            }
            off = next;
        }
        if !matches!(state, State::Body | State::Args) {
            diags.push(block.end, format!("buffer ended {}", state.incomplete()));
        }
    }
}

/// Where the block grammar is: `NewBuffer WalltimeMarker [Pid] NewCPUId
/// Body*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Start,
    AfterNewBuffer,
    AfterWalltime,
    AfterPid,
    Body,
    /// After an Entry_Args record or one of its CallArguments.
    Args,
}

impl State {
    fn misplaced(self) -> &'static str {
        match self {
            State::Start => "where a buffer must start with NewBuffer; rest of buffer skipped",
            State::AfterNewBuffer => {
                "where WalltimeMarker must follow NewBuffer; rest of buffer skipped"
            }
            State::AfterWalltime => {
                "where NewCPUId (or Pid) must follow WalltimeMarker; rest of buffer skipped"
            }
            State::AfterPid => "where NewCPUId must follow Pid; rest of buffer skipped",
            State::Body | State::Args => "out of place in a buffer body; rest of buffer skipped",
        }
    }
    fn incomplete(self) -> &'static str {
        match self {
            State::Start => "empty",
            State::AfterNewBuffer => "after NewBuffer, before WalltimeMarker",
            State::AfterWalltime => "after WalltimeMarker, before NewCPUId",
            State::AfterPid => "after Pid, before NewCPUId",
            State::Body | State::Args => "normally",
        }
    }
}

/// The block from `start` to `end`. Its thread and wall clock come from its
/// prelude (NewBuffer, Walltime, Pid), read without validating the rest.
fn block(data: &[u8], h: &Header, start: usize, end: usize) -> Block {
    let e = h.endian;
    let mut thread = ThreadKey::default();
    let (mut secs, mut micros) = (0, 0);
    let mut off = start;
    for _ in 0..3 {
        if end.saturating_sub(off) < METADATA_SIZE {
            break;
        }
        let (is_meta, k) = e.introducer(data[off]);
        if !is_meta {
            break;
        }
        let body = &data[off + 1..off + METADATA_SIZE];
        match k {
            kind::NEW_BUFFER => {
                thread.tid = if h.version == 1 {
                    u32::from(e.u16(&body[0..2]))
                } else {
                    e.u32(&body[0..4])
                };
                if h.version == 2 {
                    thread.pid = thread.tid;
                }
            }
            kind::WALLTIME => {
                secs = e.u64(&body[0..8]);
                micros = e.u32(&body[8..12]);
            }
            kind::PID => thread.pid = e.u32(&body[0..4]),
            _ => break,
        }
        off += METADATA_SIZE;
    }
    Block {
        start,
        end,
        thread,
        wall_seconds: secs,
        wall_micros: micros,
    }
}

/// Versions 2+: `BufferExtents(size) <size bytes>` repeated. Garbage between
/// buffers is skipped up to the next BufferExtents introducer.
fn index_extents(data: &[u8], h: &Header, diags: &mut DiagSink) -> Vec<Block> {
    let e = h.endian;
    let mut blocks = Vec::new();
    let mut off = HEADER_SIZE;
    while off < data.len() {
        let (is_meta, k) = e.introducer(data[off]);
        if !(is_meta && k == kind::BUFFER_EXTENTS) {
            let from = off;
            off += 1;
            while off < data.len() && e.introducer(data[off]) != (true, kind::BUFFER_EXTENTS) {
                off += 1;
            }
            diags.push(
                from,
                format!(
                    "expected a BufferExtents record; skipped {} bytes{}",
                    off - from,
                    if off >= data.len() {
                        " to the end of the file"
                    } else {
                        ""
                    }
                ),
            );
            continue;
        }
        if data.len() - off < METADATA_SIZE {
            diags.push(
                off,
                format!(
                    "truncated BufferExtents record ({} of 16 bytes)",
                    data.len() - off
                ),
            );
            break;
        }
        let size = e.u64(&data[off + 1..off + 9]);
        let start = off + METADATA_SIZE;
        let avail = (data.len() - start) as u64;
        let end = if size > avail {
            diags.push(
                off,
                format!(
                    "buffer announces {size} bytes but only {avail} remain: trace truncated, decoding what is there"
                ),
            );
            data.len()
        } else {
            start + size as usize
        };
        // Every buffer holds NewBuffer, WalltimeMarker and NewCPUId before
        // any event; a smaller one holds nothing (and indexing it would let
        // hostile input grow the block list faster than its own size).
        if end > start && end - start < 3 * METADATA_SIZE {
            diags.push(
                off,
                format!(
                    "buffer of {} bytes is too small to hold any event; skipped",
                    end - start
                ),
            );
        }
        if end - start >= 3 * METADATA_SIZE {
            blocks.push(block(data, h, start, end));
        }
        off = end;
    }
    blocks
}

/// Version 1: buffers of `buffer_size` bytes, each `NewBuffer ...
/// EndOfBuffer garbage`. A buffer may also be followed by a repeated file
/// header (logs of several flushes concatenated).
fn index_v1(data: &[u8], h: &Header, diags: &mut DiagSink) -> Vec<Block> {
    let e = h.endian;
    let mut blocks = Vec::new();
    let mut off = HEADER_SIZE;
    let mut fixed = usable_v1_size(h.buffer_size);
    if fixed.is_none() {
        diags.push(
            16,
            format!(
                "header buffer size {} is not usable; finding buffers by their EndOfBuffer records",
                h.buffer_size
            ),
        );
    }
    while off < data.len() {
        // A repeated header (same version, type and frequency)?
        if data.len() - off >= HEADER_SIZE {
            let again = read_header(&data[off..], e);
            // NewBuffer's 13 reserved bytes are zero; a header carries its
            // frequency and buffer size there.
            if again.version == h.version
                && again.trace_type == h.trace_type
                && (again.cycle_frequency, again.buffer_size) != (0, 0)
            {
                fixed = usable_v1_size(again.buffer_size);
                off += HEADER_SIZE;
                continue;
            }
        }
        if e.introducer(data[off]) != (true, kind::NEW_BUFFER) {
            let from = off;
            off += 1;
            while off < data.len() && e.introducer(data[off]) != (true, kind::NEW_BUFFER) {
                off += 1;
            }
            diags.push(
                from,
                format!(
                    "expected a NewBuffer record; skipped {} bytes{}",
                    off - from,
                    if off >= data.len() {
                        " to the end of the file"
                    } else {
                        ""
                    }
                ),
            );
            continue;
        }
        let start = off;
        let end = match fixed {
            Some(size) => {
                let window = start.saturating_add(size);
                let within = &data[..window.min(data.len())];
                match end_of_buffer_record(within, e, start) {
                    // Some writers end a buffer at its EndOfBuffer record
                    // instead of padding it to the header's size (llvm-xray
                    // reads those): the next buffer starts right after it.
                    Some(q) if !padded(data, e, q, window) => q,
                    Some(_) => window.min(data.len()),
                    None if window <= data.len() => window,
                    None => {
                        // Truncated final buffer: decode what is there.
                        diags.push(
                            start,
                            format!(
                                "buffer of {size} bytes truncated to {} bytes",
                                data.len() - start
                            ),
                        );
                        data.len()
                    }
                }
            }
            None => find_end_of_buffer(data, e, start),
        };
        blocks.push(block(data, h, start, end));
        off = end;
    }
    blocks
}

fn usable_v1_size(size: u64) -> Option<usize> {
    usize::try_from(size)
        .ok()
        .filter(|&s| s >= 3 * METADATA_SIZE)
}

/// Whether the bytes from `q` (right after an EndOfBuffer record) to the
/// buffer's fixed end `window` are padding: all zero, or (as the format
/// document leaves their content open) followed by what must come after a
/// whole buffer: the end of the file, a NewBuffer record or a header.
fn padded(data: &[u8], e: Endian, q: usize, window: usize) -> bool {
    if q >= window {
        return true;
    }
    if data[q..window.min(data.len())].iter().all(|&b| b == 0) {
        return true;
    }
    window == data.len()
        || (window < data.len() && e.introducer(data[window]) == (true, kind::NEW_BUFFER))
        || (data.len() - window.min(data.len()) >= HEADER_SIZE && {
            let again = read_header(&data[window..], e);
            (1..=5).contains(&again.version) && again.trace_type == 1
        })
}

/// Without a usable buffer size: walk records to the EndOfBuffer and end
/// the block right after it.
fn find_end_of_buffer(data: &[u8], e: Endian, start: usize) -> usize {
    end_of_buffer_record(data, e, start).unwrap_or(data.len())
}

/// The offset right after the first EndOfBuffer record from `start`, if
/// `data` has one.
fn end_of_buffer_record(data: &[u8], e: Endian, start: usize) -> Option<usize> {
    let mut off = start;
    while off < data.len() {
        let (is_meta, k) = e.introducer(data[off]);
        if !is_meta {
            off += FUNCTION_SIZE;
            continue;
        }
        let mut next = off + METADATA_SIZE;
        if k == kind::END_OF_BUFFER {
            return Some(next.min(data.len()));
        }
        if (k == kind::CUSTOM_EVENT || k == kind::TYPED_EVENT) && data.len() - off >= 5 {
            let size = e.u32(&data[off + 1..off + 5]) as i32;
            if size > 0 {
                next = next.saturating_add(size as usize);
            }
        }
        off = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_LE: &[u8] = include_bytes!("../../testdata/xray/hand/v1-le.xray");
    const V1_BE: &[u8] = include_bytes!("../../testdata/xray/hand/v1-be.xray");
    const V5_LE: &[u8] = include_bytes!("../../testdata/xray/hand/v5-le.xray");
    const V5_BE: &[u8] = include_bytes!("../../testdata/xray/hand/v5-be.xray");
    const REAL: &[u8] = include_bytes!("../../testdata/xray/traces/mb.xray");

    fn events(data: &[u8]) -> (Vec<(ThreadKey, String)>, Vec<Diagnostic>) {
        let trace = Trace::parse(data).expect("header");
        let mut out = Vec::new();
        let diags = trace.for_each_event(|t, e| out.push((t, format!("{e:?}"))), |_| {});
        (out, diags)
    }

    #[test]
    fn header_fields_and_byte_order() {
        for (data, endian, version) in [
            (V1_LE, Endian::Little, 1),
            (V1_BE, Endian::Big, 1),
            (V5_LE, Endian::Little, 5),
            (V5_BE, Endian::Big, 5),
        ] {
            let h = parse_header(data).expect("header");
            assert_eq!(h.endian, endian);
            assert_eq!(h.version, version);
            assert_eq!(h.trace_type, 1);
            assert!(h.constant_tsc && h.nonstop_tsc);
            assert_eq!(h.cycle_frequency, 1_000_000);
        }
        assert_eq!(parse_header(V1_LE).expect("v1").buffer_size, 512);
    }

    #[test]
    fn byte_orders_decode_alike() {
        assert_eq!(events(V1_LE), events(V1_BE));
        assert_eq!(events(V5_LE), events(V5_BE));
        let (ev, diags) = events(V1_LE);
        assert!(diags.is_empty(), "{diags:?}");
        let t7 = ThreadKey { pid: 0, tid: 7 };
        assert_eq!(
            ev[0],
            (
                t7,
                "Function { kind: Entry, func_id: 1, tsc: 1000, cpu: 1 }".into()
            )
        );
        assert_eq!(ev[2], (t7, "Arg(42)".into()));
        assert_eq!(ev[3], (t7, "Arg(3735928559)".into()));
        assert_eq!(ev.len(), 15);
    }

    #[test]
    fn v5_blocks_carry_pid_and_extents() {
        let trace = Trace::parse(V5_LE).expect("trace");
        assert_eq!(trace.blocks.len(), 2);
        assert_eq!(trace.blocks[0].thread, ThreadKey { pid: 4242, tid: 7 });
        assert_eq!((trace.blocks[0].start, trace.blocks[0].end), (48, 272));
        assert_eq!(trace.blocks[1].wall_micros, 13);
    }

    #[test]
    fn real_trace_blocks_interleave_and_decode_cleanly() {
        let trace = Trace::parse(REAL).expect("trace");
        assert_eq!(trace.header.version, 5);
        let groups = trace.blocks_by_thread();
        assert_eq!(groups.len(), 3);
        assert!(groups.iter().any(|(_, b)| b.len() > 5));
        let (ev, diags) = events(REAL);
        assert!(diags.is_empty(), "{diags:?}");
        assert!(ev.len() > 1000);
    }

    /// Every prefix of every trace decodes without panicking, and what a
    /// prefix yields is a prefix of what the whole trace yields per thread.
    #[test]
    fn every_truncation_is_handled() {
        for data in [V1_LE, V1_BE, V5_LE, V5_BE] {
            let (full, _) = events(data);
            for cut in 0..data.len() {
                let Ok(trace) = Trace::parse(&data[..cut]) else {
                    assert!(cut < HEADER_SIZE);
                    continue;
                };
                let mut got = Vec::new();
                trace.for_each_event(|t, e| got.push((t, format!("{e:?}"))), |_| {});
                for t in [7, 8] {
                    let mine: Vec<_> = got.iter().filter(|(k, _)| k.tid == t).collect();
                    let all: Vec<_> = full.iter().filter(|(k, _)| k.tid == t).collect();
                    assert!(all.starts_with(&mine), "cut {cut}");
                }
            }
        }
    }

    /// Corrupting any byte never panics and never reads out of bounds.
    #[test]
    fn every_byte_flip_is_handled() {
        for data in [V1_LE, V5_LE, V5_BE] {
            for i in 0..data.len() {
                for v in [0x00, 0xff, 0x01, 0x0f, 0x80, data[i] ^ 0x10] {
                    let mut d = data.to_vec();
                    d[i] = v;
                    if let Ok(trace) = Trace::parse(&d) {
                        let mut n = 0usize;
                        let diags = trace.for_each_event(|_, _| n += 1, |_| {});
                        assert!(diags.len() <= MAX_DIAGNOSTICS + 1);
                    }
                }
            }
        }
    }

    #[test]
    fn misplaced_records_stop_the_buffer_with_a_reason() {
        // A function record right after NewBuffer (no WalltimeMarker).
        let mut d = V5_LE[..48 + 16].to_vec();
        for _ in 0..5 {
            d.extend_from_slice(&[0x10, 0, 0, 0, 0, 0, 0, 0]);
        }
        let extents = (d.len() - 48) as u64;
        d[33..41].copy_from_slice(&extents.to_le_bytes());
        let (ev, diags) = events(&d);
        assert!(ev.is_empty());
        assert_eq!(
            diags[0].to_string(),
            "offset 0x40: function record where WalltimeMarker must follow NewBuffer; rest of buffer skipped"
        );
        // A buffer too small for its prelude is skipped with a note.
        let mut d = V5_LE[..48].to_vec();
        d.extend_from_slice(&[0u8; 8]);
        d[33..41].copy_from_slice(&8u64.to_le_bytes());
        let (ev, diags) = events(&d);
        assert!(ev.is_empty());
        assert_eq!(
            diags[0].to_string(),
            "offset 0x20: buffer of 8 bytes is too small to hold any event; skipped"
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bodies_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..600), v in 1u16..=5) {
            let mut d = V5_LE[..32].to_vec();
            d[0..2].copy_from_slice(&v.to_le_bytes());
            d[16..24].copy_from_slice(&64u64.to_le_bytes());
            d.extend_from_slice(&body);
            let trace = Trace::parse(&d).expect("header is valid");
            trace.for_each_event(|_, _| {}, |_| {});
        }
    }
}

#[cfg(test)]
mod exercise_tests {
    #[test]
    fn fuzz_body_runs_on_every_fixture() {
        for (data, want) in [
            (
                &include_bytes!("../../testdata/xray/hand/v1-garbage-le.xray")[..],
                13,
            ),
            (
                &include_bytes!("../../testdata/xray/hand/v5-be.xray")[..],
                14,
            ),
            (
                &include_bytes!("../../testdata/xray/traces/st.xray")[..],
                323, // records in llvm-xray's YAML of this trace
            ),
        ] {
            assert_eq!(crate::xray::exercise(data), want);
        }
        assert_eq!(crate::xray::exercise(b"short"), 0);
    }
}
