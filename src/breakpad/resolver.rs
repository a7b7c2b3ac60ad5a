//! Address lookups over a parsed `.sym` file, the way Breakpad's processor
//! does them: the FUNC covering the address and its line record (plus the
//! INLINE chain), else the nearest PUBLIC not beyond a FUNC.

use std::fs::File;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::base::mapped::FileMap;

use super::parser::{self, Corruption, ParseError, SymIndex};
use super::types::{Func, Inline, Origin, Span};
use crate::symbols::{
    CodeInfo, CodeWant, DataInfo, DataWant, Frame, Frames, Miss, Name, SourceWarning, SymbolHit,
    SymbolSource, Text,
};

/// The bytes of a symbol file: memory-mapped, or owned (tests, fuzzing).
pub enum Bytes {
    Mapped(FileMap),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// Why a symbol file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("empty file")]
    Empty,
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// One parsed symbol file, ready for lookups.
pub struct BreakpadSymbols {
    data: Bytes,
    idx: SymIndex,
    /// What `.sym` addresses are relative to, in ELF virtual addresses:
    /// dump_syms subtracts the first `PT_LOAD`'s `p_vaddr` (0 for PIE and
    /// shared libraries, e.g. 0x400000 for non-PIE executables).
    image_base: u64,
    /// Whether the file itself told the image base (section pseudo-symbols).
    base_from_file: bool,
}

/// dump_syms names section pseudo-symbols `<.text ELF section in NAME>`.
fn section_name(name: &[u8]) -> Option<&[u8]> {
    let inner = name.strip_prefix(b"<")?.strip_suffix(b">")?;
    let end = memchr::memmem::find(inner, b" ELF section in ")?;
    inner.get(..end)
}

impl BreakpadSymbols {
    /// Parse symbol-file bytes.
    pub fn parse(data: Bytes) -> Result<BreakpadSymbols, OpenError> {
        let mut idx = parser::parse(&data)?;
        let image_base = infer_image_base(&data, &mut idx);
        Ok(BreakpadSymbols {
            data,
            idx,
            image_base,
            base_from_file: image_base != 0,
        })
    }

    /// Memory-map and parse the file at `path`.
    pub fn open(path: &Path) -> Result<BreakpadSymbols, OpenError> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Err(OpenError::Empty);
        }
        let map = FileMap::open(&file, path)?;
        BreakpadSymbols::parse(Bytes::Mapped(map))
    }

    pub fn index(&self) -> &SymIndex {
        &self.idx
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The `MODULE` record's debug id.
    pub fn debug_id(&self) -> String {
        self.idx.module.debug_id.text(&self.data)
    }

    /// The `MODULE` record's architecture (`x86_64`, `arm64`, ...).
    pub fn arch(&self) -> String {
        self.idx.module.arch.text(&self.data)
    }

    /// The `MODULE` record's debug file name.
    pub fn debug_file(&self) -> String {
        self.idx.module.debug_file.text(&self.data)
    }

    /// The `INFO CODE_ID` value (for ELF: the full build ID in hex).
    pub fn code_id(&self) -> Option<String> {
        self.idx.code_id.map(|s| s.text(&self.data))
    }

    pub fn corruption(&self) -> Corruption {
        self.idx.corruption
    }

    pub fn image_base(&self) -> u64 {
        self.image_base
    }

    /// Override the inferred image base (the ELF vaddr `.sym` addresses
    /// are relative to).
    pub fn set_image_base(&mut self, base: u64) {
        self.image_base = base;
    }

    /// Take `hint`, the module's lowest load address as the log gives it
    /// (the first `PT_LOAD`'s `p_vaddr`), as the image base when the file
    /// does not tell it and its addresses lie below the hint: relative to
    /// the image base, as dump_syms writes them, rather than already ELF
    /// virtual addresses. (A PIE's symbols all lie in its mapped segments,
    /// so at or above any hint; so do the addresses of a file written with
    /// absolute addresses.) Returns whether the hint was taken.
    pub fn apply_image_base_hint(&mut self, hint: u64) -> bool {
        if self.base_from_file || hint == 0 {
            return false;
        }
        let data = &self.data;
        let lowest_func = self.idx.funcs.first().map(|f| f.address);
        let lowest_public = self
            .idx
            .publics
            .iter()
            .find(|p| section_name(p.name.bytes(data)).is_none())
            .map(|p| p.address);
        let lowest = match (lowest_func, lowest_public) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(x) => x,
                None => return false,
            },
        };
        if lowest >= hint {
            return false;
        }
        self.image_base = hint;
        rebase_section_symbols(data, &mut self.idx, hint);
        true
    }

    fn text(&self, s: Span) -> Text {
        s.text(&self.data).into()
    }

    fn name(&self, s: Span) -> Name {
        s.text(&self.data).into()
    }

    fn file(&self, id: u32) -> Option<Text> {
        let files = &self.idx.files;
        let i = files.binary_search_by_key(&id, |e| e.0).ok()?;
        files.get(i).map(|e| self.text(e.1))
    }

    fn origin_record(&self, id: u32) -> Option<&Origin> {
        let origins = &self.idx.origins;
        let i = origins.binary_search_by_key(&id, |o| o.id).ok()?;
        origins.get(i)
    }

    fn origin(&self, id: u32) -> Option<Name> {
        self.origin_record(id).map(|o| self.name(o.name))
    }

    /// The file of an INLINE record's call site. The old form of the
    /// record does not name it; the call is then in the body of the
    /// caller: the parent inlined function, whose file the old
    /// INLINE_ORIGIN form gives, or the FUNC itself, whose file is that of
    /// its own code: the first of its (first few) line records that no
    /// inline range covers, else its first line record.
    fn call_file(&self, f: &Func, rec: &Inline, parent: Option<&Inline>) -> Option<Text> {
        if rec.has_call_file {
            return self.file(rec.call_file);
        }
        if let Some(p) = parent {
            return self.file(self.origin_record(p.origin)?.file);
        }
        let lines = self
            .idx
            .lines
            .get(f.first_line as usize..f.end_line as usize)?;
        let ranges = self
            .idx
            .inlines
            .get(f.first_inline as usize..f.end_inline as usize)
            .unwrap_or_default()
            .iter()
            .flat_map(|i| {
                self.idx
                    .inline_ranges
                    .get(i.first_range as usize..i.end_range as usize)
                    .unwrap_or_default()
            });
        // Bounded: hostile files may have many of both.
        let own = lines.iter().take(16).find(|l| {
            !ranges
                .clone()
                .take(256)
                .any(|&(a, s)| l.address >= a && l.address - a < s)
        });
        self.file(own.or(lines.first())?.file)
    }

    /// The FUNC with the highest address not above `addr` (it may not
    /// cover `addr`), and the index just after it.
    fn nearest_func(&self, addr: u64) -> (Option<&Func>, usize) {
        let n = self.idx.funcs.partition_point(|f| f.address <= addr);
        let f = n.checked_sub(1).and_then(|i| self.idx.funcs.get(i));
        (f, n)
    }

    /// Code lookup at an ELF virtual address.
    pub fn lookup(&self, vaddr: u64) -> Option<CodeInfo> {
        let addr = vaddr.checked_sub(self.image_base)?;
        let (func, next_func) = self.nearest_func(addr);
        if let Some(f) = func.filter(|f| f.contains(addr)) {
            return Some(self.lookup_in_func(f, addr));
        }
        // A PUBLIC at or below the address, with no FUNC between them.
        let n = self.idx.publics.partition_point(|p| p.address <= addr);
        let p = self.idx.publics.get(n.checked_sub(1)?)?;
        if func.is_some_and(|f| p.address <= f.address) {
            return None;
        }
        // A PUBLIC has no size: it reaches to the next symbol.
        let next_pub = self.idx.publics.get(n).map(|q| q.address);
        let next_fn = self.idx.funcs.get(next_func).map(|f| f.address);
        let end = match (next_pub, next_fn) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Some(CodeInfo {
            frames: Frames::new(),
            symbol: Some(SymbolHit {
                name: self.name(p.name),
                address: p.address.saturating_add(self.image_base),
                size: end.map_or(0, |e| e - p.address),
                file: None,
            }),
            claimed: false,
            shown: Default::default(),
        })
    }

    fn lookup_in_func(&self, f: &Func, addr: u64) -> CodeInfo {
        let lines = self
            .idx
            .lines
            .get(f.first_line as usize..f.end_line as usize)
            .unwrap_or_default();
        let n = lines.partition_point(|l| l.address <= addr);
        let line = n
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .filter(|l| l.contains(addr));
        let chain = self.inline_chain(f, addr);

        let mut frames = Frames::with_capacity(chain.len() + 1);
        // Innermost: the deepest inlined function (or the FUNC itself) at
        // the line record's location.
        let innermost = match chain.last() {
            Some(i) => self.origin(i.origin),
            None => Some(self.name(f.name)),
        };
        frames.push(Frame {
            function: innermost,
            file: line.and_then(|l| self.file(l.file)),
            line: line.map_or(0, |l| l.line),
            column: 0,
        });
        // Each inline record gives its caller's call site.
        for (k, i) in chain.iter().enumerate().rev() {
            let parent = k.checked_sub(1).and_then(|j| chain.get(j)).copied();
            let function = match parent {
                Some(parent) => self.origin(parent.origin),
                None => Some(self.name(f.name)),
            };
            frames.push(Frame {
                function,
                file: self.call_file(f, i, parent),
                line: i.call_line,
                column: 0,
            });
        }
        CodeInfo {
            frames,
            symbol: Some(SymbolHit {
                name: self.name(f.name),
                address: f.address.saturating_add(self.image_base),
                size: f.size,
                file: None,
            }),
            claimed: false,
            shown: Default::default(),
        }
    }

    /// The INLINE records covering `addr`, outermost first. Records come
    /// in pre-order (a record's descendants follow it, deeper), so the walk
    /// descends into a covering record and skips the subtree of any other:
    /// at each depth the first covering record after its parent.
    fn inline_chain(&self, f: &Func, addr: u64) -> Vec<&Inline> {
        let (start, end) = (f.first_inline as usize, f.end_inline as usize);
        let mut chain: Vec<&Inline> = Vec::new();
        let mut i = start;
        while i < end {
            let Some(rec) = self.idx.inlines.get(i) else {
                break;
            };
            let depth = rec.depth as usize;
            if depth < chain.len() {
                // Left the subtree of the innermost covering record.
                break;
            }
            let covers = depth == chain.len()
                && self
                    .idx
                    .inline_ranges
                    .get(rec.first_range as usize..rec.end_range as usize)
                    .unwrap_or_default()
                    .iter()
                    .any(|&(a, s)| addr >= a && addr - a < s);
            if covers {
                chain.push(rec);
                i += 1;
            } else {
                i = (rec.subtree_end as usize).max(i + 1);
            }
        }
        chain
    }
}

/// dump_syms writes addresses relative to the first `PT_LOAD` segment, but
/// its section pseudo-symbols (`<.init ELF section in NAME>`) carry raw
/// section addresses. In a non-PIE executable the two differ by the image
/// base, visible as `<.init …>` vs `_init` (or `.fini` vs `_fini`). When
/// found, the pseudo-symbols are moved to relative addresses too.
fn infer_image_base(data: &[u8], idx: &mut SymIndex) -> u64 {
    let find = |name: &[u8]| {
        idx.publics
            .iter()
            .find(|p| p.name.bytes(data) == name)
            .map(|p| p.address)
    };
    let mut base = 0;
    // Symbols that start their section: glibc's crti gives `_init` and
    // `_fini`; crt1's `_start` usually opens `.text`. An image base is a
    // whole number of pages.
    let pairs = [
        (&b".init"[..], &b"_init"[..]),
        (b".fini", b"_fini"),
        (b".text", b"_start"),
    ];
    for (section, symbol) in pairs {
        let sect = idx
            .publics
            .iter()
            .find(|p| section_name(p.name.bytes(data)) == Some(section))
            .map(|p| p.address);
        if let (Some(s), Some(y)) = (sect, find(symbol))
            && s > y
            && (s - y) % 0x1000 == 0
        {
            base = s - y;
            break;
        }
    }
    if base != 0 {
        rebase_section_symbols(data, idx, base);
    }
    base
}

/// Move dump_syms' section pseudo-symbols (raw section addresses) to
/// addresses relative to `base`, like every other record.
fn rebase_section_symbols(data: &[u8], idx: &mut SymIndex, base: u64) {
    for p in &mut idx.publics {
        if section_name(p.name.bytes(data)).is_some() && p.address >= base {
            p.address -= base;
        }
    }
    idx.publics.sort_by_key(|p| p.address);
    idx.publics.dedup_by_key(|p| p.address);
}

/// The smallest instruction size of a Breakpad `MODULE` architecture (what
/// a return address is moved back by to land in its call).
pub fn return_address_step(arch: &str) -> u64 {
    let a = arch.to_ascii_lowercase();
    if ["arm64", "aarch64", "mips", "ppc", "sparc", "loongarch"]
        .iter()
        .any(|p| a.starts_with(p))
    {
        4
    } else if ["arm", "riscv", "s390"].iter().any(|p| a.starts_with(p)) {
        2
    } else {
        1
    }
}

/// A [`SymbolSource`] over one `.sym` file.
pub struct BreakpadSource {
    path: PathBuf,
    syms: BreakpadSymbols,
}

impl BreakpadSource {
    pub fn new(path: PathBuf, syms: BreakpadSymbols) -> BreakpadSource {
        BreakpadSource { path, syms }
    }

    pub fn symbols(&self) -> &BreakpadSymbols {
        &self.syms
    }
}

impl SymbolSource for BreakpadSource {
    fn origin(&self) -> String {
        self.path.display().to_string()
    }

    fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
        self.syms.lookup(addr).ok_or(Miss::NoInfo)
    }

    fn lookup_data(&self, _addr: u64, _: DataWant) -> Result<DataInfo, Miss> {
        Err(Miss::BreakpadNoData)
    }

    fn return_address_step(&self) -> u64 {
        return_address_step(&self.syms.arch())
    }

    fn truncated(&self) -> Option<String> {
        match &self.syms.data {
            Bytes::Mapped(m) if m.faulted() => Some(self.path.display().to_string()),
            _ => None,
        }
    }

    fn warnings(&self) -> Vec<SourceWarning> {
        let c = self.syms.corruption();
        if c.count == 0 {
            return Vec::new();
        }
        vec![SourceWarning::CorruptLinesSkipped {
            path: self.path.display().to_string(),
            count: c.count,
            first_line: c.first_line,
            first_reason: c.first_reason,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms(text: &str) -> BreakpadSymbols {
        BreakpadSymbols::parse(Bytes::Owned(text.as_bytes().to_vec())).unwrap()
    }

    const SAMPLE: &str = "MODULE Linux x86_64 ID demo\n\
FILE 0 /src/a.c\n\
FILE 1 /src/b.h\n\
INLINE_ORIGIN 0 mid\n\
INLINE_ORIGIN 1 leaf\n\
PUBLIC 900 0 _init\n\
FUNC 1000 30 0 main\n\
INLINE 0 12 0 0 1008 10\n\
INLINE 1 40 1 1 100c 4\n\
1000 8 10 0\n\
1008 4 30 1\n\
100c 4 50 1\n\
1010 20 14 0\n\
PUBLIC 1100 0 asm_entry\n\
FUNC 1200 10 0 other\n";

    fn frame(f: &str, file: &str, line: u32) -> Frame {
        Frame {
            function: Some(f.into()),
            file: Some(file.into()),
            line,
            column: 0,
        }
    }

    #[test]
    fn func_line_and_inline_chain() {
        let s = syms(SAMPLE);
        let info = s.lookup(0x1004).unwrap();
        assert_eq!(info.frames[..], [frame("main", "/src/a.c", 10)]);
        let info = s.lookup(0x100d).unwrap();
        assert_eq!(
            info.frames[..],
            [
                frame("leaf", "/src/b.h", 50),
                frame("mid", "/src/b.h", 40),
                frame("main", "/src/a.c", 12),
            ]
        );
        let sym = info.symbol.unwrap();
        assert_eq!((&*sym.name, sym.address, sym.size), ("main", 0x1000, 0x30));
        let info = s.lookup(0x1009).unwrap();
        assert_eq!(
            info.frames[..],
            [frame("mid", "/src/b.h", 30), frame("main", "/src/a.c", 12)]
        );
    }

    #[test]
    fn inline_walk_skips_subtrees_that_do_not_cover() {
        let text = "MODULE Linux x86_64 ID demo\nFILE 0 a.c\n\
INLINE_ORIGIN 0 a\nINLINE_ORIGIN 1 a1\nINLINE_ORIGIN 2 b\nINLINE_ORIGIN 3 b1\n\
INLINE_ORIGIN 4 b2\nFUNC 0 100 0 f\n\
INLINE 0 1 0 0 0 10\nINLINE 1 2 0 1 50 10\n\
INLINE 0 3 0 2 40 40\nINLINE 1 4 0 3 40 8\nINLINE 1 5 0 4 50 10\n\
INLINE 2 6 0 0 50 1\nINLINE 0 7 0 0 50 10\n0 100 9 0\n";
        let s = syms(text);
        let names = |addr| -> Vec<(String, u32)> {
            s.lookup(addr)
                .unwrap()
                .frames
                .into_iter()
                .map(|f| (f.function.as_deref().unwrap_or_default().to_owned(), f.line))
                .collect()
        };
        // `a1` covers 0x50 but its parent `a` does not: not on the chain;
        // the later depth-0 record at 0x50 is past the chain's subtree.
        assert_eq!(
            names(0x50),
            vec![
                ("a".to_string(), 9),
                ("b2".to_string(), 6),
                ("b".to_string(), 5),
                ("f".to_string(), 3)
            ]
        );
        assert_eq!(
            names(0x41),
            vec![
                ("b1".to_string(), 9),
                ("b".to_string(), 4),
                ("f".to_string(), 3)
            ]
        );
        assert_eq!(names(0x90), vec![("f".to_string(), 9)]);
    }

    #[test]
    fn public_fallback_is_bounded_by_funcs() {
        let s = syms(SAMPLE);
        let info = s.lookup(0x1150).unwrap();
        assert!(info.frames.is_empty());
        let sym = info.symbol.unwrap();
        assert_eq!(
            (&*sym.name, sym.address, sym.size),
            ("asm_entry", 0x1100, 0x100)
        );
        // Past `main` but before `asm_entry`: `_init` lies below `main`.
        assert_eq!(s.lookup(0x1040), None);
        assert_eq!(&*s.lookup(0x950).unwrap().symbol.unwrap().name, "_init");
        assert_eq!(s.lookup(0x10), None);
    }

    #[test]
    fn image_base_needs_a_page_multiple_and_can_come_from_text() {
        // `.init` pairing gives a non-page offset: ignored; `.text` and
        // `_start` give the base.
        let text = "MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\nPUBLIC 1040 0 _start\n\
FUNC 1130 7 0 f\nPUBLIC 401010 0 <.init ELF section in demo>\n\
PUBLIC 401040 0 <.text ELF section in demo>\n";
        assert_eq!(syms(text).image_base(), 0x400000);
        // PIE: pseudo-symbols only for sections without a symbol: no base.
        let text = "MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\n\
PUBLIC 1020 0 <.plt ELF section in demo>\nFUNC 1130 7 0 f\n";
        assert_eq!(syms(text).image_base(), 0);
    }

    #[test]
    fn return_address_step_follows_the_module_arch() {
        let steps: Vec<u64> = [
            "x86_64", "x86", "arm64", "arm", "riscv64", "mips64", "ppc64",
        ]
        .iter()
        .map(|a| return_address_step(a))
        .collect();
        assert_eq!(steps, vec![1, 1, 4, 2, 2, 4, 4]);
        let s = syms("MODULE Linux arm64 ID demo\n");
        let src = BreakpadSource::new(PathBuf::from("x.sym"), s);
        assert_eq!(src.return_address_step(), 4);
    }

    #[test]
    fn image_base_hint_is_taken_only_for_relative_addresses() {
        // Non-PIE, no section pseudo-symbols: relative addresses, hint taken.
        let text = "MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\nFUNC 1130 7 0 f\n\
1130 7 3 0\n";
        let mut s = syms(text);
        assert_eq!(s.image_base(), 0);
        assert!(s.apply_image_base_hint(0x400000));
        assert_eq!(s.image_base(), 0x400000);
        let info = s.lookup(0x401133).unwrap();
        let want = Frame {
            function: Some("f".into()),
            file: None,
            line: 3,
            column: 0,
        };
        assert_eq!(info.frames[..], [want]);
        assert_eq!(info.symbol.unwrap().address, 0x401130);
        assert_eq!(s.lookup(0x1130), None);

        // Addresses already ELF virtual addresses: not below the hint.
        let mut s = syms("MODULE Linux x86_64 ID demo\nFUNC 401130 7 0 f\nPUBLIC 401000 0 _init\n");
        assert!(!s.apply_image_base_hint(0x400000));
        assert_eq!(&*s.lookup(0x401133).unwrap().symbol.unwrap().name, "f");

        // A PIE whose log maps only its code segment (lowest load address
        // 0x1000): every symbol is at or above it, no base.
        let mut s = syms("MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\nFUNC 1130 7 0 f\n");
        assert!(!s.apply_image_base_hint(0x1000));
        assert_eq!(&*s.lookup(0x1133).unwrap().symbol.unwrap().name, "f");

        // The file's own pseudo-symbols win over the hint.
        let mut s = syms(
            "MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\nFUNC 1130 7 0 f\n\
PUBLIC 401000 0 <.init ELF section in demo>\n",
        );
        assert!(!s.apply_image_base_hint(0x800000));
        assert_eq!(s.image_base(), 0x400000);

        // Pseudo-symbols the inference could not pair (no `_init`, `_fini`,
        // `_start`) move with the hinted base; an empty file takes no hint.
        let mut s = syms(
            "MODULE Linux x86_64 ID demo\nFUNC 1130 7 0 f\n\
PUBLIC 401020 0 <.plt ELF section in demo>\n",
        );
        assert!(s.apply_image_base_hint(0x400000));
        let plt = s.lookup(0x401024).unwrap().symbol.unwrap();
        assert_eq!(
            (&*plt.name, plt.address),
            ("<.plt ELF section in demo>", 0x401020)
        );
        assert!(!syms("MODULE Linux x86_64 ID demo\n").apply_image_base_hint(0x400000));
        assert!(!syms(text).apply_image_base_hint(0));
    }

    #[test]
    fn non_pie_image_base_is_inferred() {
        let text = "MODULE Linux x86_64 ID demo\nPUBLIC 1000 0 _init\nFUNC 1130 7 0 f\n\
1130 7 3 0\nPUBLIC 401000 0 <.init ELF section in demo>\n\
PUBLIC 401020 0 <.plt ELF section in demo>\n";
        let s = syms(text);
        assert_eq!(s.image_base(), 0x400000);
        assert_eq!(s.lookup(0x1130), None);
        let info = s.lookup(0x401133).unwrap();
        assert_eq!(info.frames[0].function.as_deref(), Some("f"));
        assert_eq!(info.symbol.unwrap().address, 0x401130);
        let plt = s.lookup(0x401024).unwrap().symbol.unwrap();
        assert_eq!(&*plt.name, "<.plt ELF section in demo>");
    }
}
