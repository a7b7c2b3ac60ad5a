//! The merged ELF symbol table of a module, with LLVM's lookup rules.
//!
//! LLVM (`SymbolizableObjectFile`) keeps function, object, no-type and IFUNC
//! symbols defined in a section the program has in memory (`SHF_ALLOC`),
//! sorts them by (address, size), keeps one entry per address (the last of
//! the largest size), and answers a probe with the last entry at or below
//! it, unless that entry has a non-zero size that ends at or before the
//! probe. Local symbols carry the name of the `STT_FILE` symbol preceding
//! them. We do the same, over the `.symtab` of every file of the module (or
//! their `.dynsym` when no `.symtab` exists).
//!
//! [`elf_symbols`] is the one reader of ELF symbol tables: this table,
//! `gsym create` and XRay's fallback names each keep what their rules keep
//! from it.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use object::read::StringTable;
use object::read::elf::{ElfFile, FileHeader, SectionHeader, Sym};
use object::{Endianness, elf};

use rustc_hash::FxHashMap;

use crate::base::{lock, search};
use crate::symbols::{Name, SymbolHit, Text};

/// Lookups answered by scanning the tables before the sorted table is
/// built: a process asked for one address should not pay for the sort, and
/// a module asked for many should not pay much more than the sort. A build
/// costs about three scans (BENCHMARKS.md), so scanning three times costs
/// at most about twice the cheaper of the two ways.
const SCANS: u32 = 3;

/// The symbol table of a module, built on demand: the first [`SCANS`]
/// lookups scan the files' tables (same answers), later ones use the
/// sorted [`SymbolTable`].
pub(crate) struct Symbols<'a> {
    /// In priority order (later ones win exact ties).
    files: Vec<object::File<'a>>,
    scans: AtomicU32,
    table: OnceLock<SymbolTable<'a>>,
}

impl<'a> Symbols<'a> {
    pub(crate) fn new(files: Vec<object::File<'a>>) -> Symbols<'a> {
        Symbols {
            files,
            scans: AtomicU32::new(0),
            table: OnceLock::new(),
        }
    }

    /// The symbol covering `addr` (by LLVM's rule, see
    /// [`SymbolTable::index`]) as answers carry it, its name and file made
    /// by `make` (once the table is sorted, once per symbol while the table
    /// keeps them).
    pub(crate) fn hit(
        &self,
        addr: u64,
        make: impl FnOnce(&SymEntry<'a>) -> Made,
    ) -> Option<SymbolHit> {
        match self.scan_or_table(addr) {
            Ok(scanned) => scanned.map(|s| {
                let (name, file) = make(&s);
                SymbolHit {
                    name,
                    address: s.addr,
                    size: s.size,
                    file,
                }
            }),
            Err(table) => table.hit(addr, make),
        }
    }

    /// A scan's answer for `addr` while lookups are still answered by
    /// scanning, else the sorted table (built on first use).
    fn scan_or_table(&self, addr: u64) -> Result<Option<SymEntry<'a>>, &SymbolTable<'a>> {
        // Threads sharing the table may scan a few times more between
        // them; the answers are the same.
        if self.table.get().is_none() && self.scans.load(Ordering::Relaxed) < SCANS {
            self.scans.fetch_add(1, Ordering::Relaxed);
            return Ok(self.scan(addr));
        }
        Err(self
            .table
            .get_or_init(|| SymbolTable::build(&self.files.iter().collect::<Vec<_>>())))
    }

    /// One pass over the tables, keeping the entry the sorted table would
    /// answer with: the largest address at or below `addr`, then the
    /// largest size, then the last one seen. Only its name is read.
    fn scan(&self, addr: u64) -> Option<SymEntry<'a>> {
        for table in [Table::Static, Table::Dynamic] {
            let mut any = false;
            let best: Cell<Option<(ElfSymbol<'a>, u64)>> = Cell::new(None);
            let want = |a: u64, size: u64| {
                a <= addr && best.get().is_none_or(|(b, at)| (a, size) >= (at, b.size))
            };
            let keep = |sym: &ElfSymbol<'a>, at| best.set(Some((*sym, at)));
            for file in &self.files {
                match file {
                    object::File::Elf32(f) => visit(f, table, &mut any, want, &keep),
                    object::File::Elf64(f) => visit(f, table, &mut any, want, &keep),
                    _ => {}
                }
            }
            if any {
                let (sym, at) = best.get()?;
                return sym
                    .kept(0)
                    .entry(at, &sym.strings)
                    .filter(|s| s.size == 0 || s.addr.saturating_add(s.size) > addr);
            }
        }
        None
    }
}

/// One symbol; names borrow the mapped file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SymEntry<'a> {
    pub addr: u64,
    pub size: u64,
    pub name: &'a [u8],
    /// `STT_FILE` name for local symbols.
    pub file: Option<&'a [u8]>,
}

#[derive(Default)]
pub(crate) struct SymbolTable<'a> {
    /// The symbols' addresses alone, for the binary search of every lookup.
    addrs: Vec<u64>,
    /// The rest of each symbol, at the same index.
    kept: Vec<Kept>,
    /// The string tables [`Kept`] names point into.
    strings: Vec<StringTable<'a>>,
    /// The name and file of each symbol lookups have landed on, as answers
    /// carry them, by index: later lookups neither read its strings again
    /// nor look them up in the module's interner. Kept for the symbols
    /// asked for only (a table of the 400 libraries of a process has
    /// hundreds of thousands of symbols), at most [`MADE`] of them.
    made: Mutex<FxHashMap<usize, Made>>,
}

/// Symbols whose names a table keeps made, at most (the table is emptied
/// when full: names are then made again from the interner).
const MADE: usize = 1 << 14;

/// A symbol's name and `STT_FILE` name as answers carry them.
pub(crate) type Made = (Name, Option<Text>);

/// A symbol as the sorted table keeps it: its name and its file's as
/// offsets into one of the table's string tables, read only for the symbol
/// a lookup lands on (most are never asked for, and their strings never
/// paged in).
#[derive(Clone, Copy)]
struct Kept {
    size: u64,
    name: u32,
    /// Where the `STT_FILE` name of a local symbol starts.
    file: Option<u32>,
    /// Index in [`SymbolTable::strings`].
    strings: u32,
}

impl Kept {
    /// This symbol at `addr`, as a lookup answers with it, its strings read
    /// from `strings`; `None` when its name cannot be read.
    fn entry<'a>(&self, addr: u64, strings: &StringTable<'a>) -> Option<SymEntry<'a>> {
        Some(SymEntry {
            addr,
            size: self.size,
            name: strings.get(self.name).ok()?,
            file: self.file.and_then(|f| strings.get(f).ok()),
        })
    }
}

/// Which table of a file to read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Static,
    Dynamic,
}

impl<'a> SymbolTable<'a> {
    /// Build the table from the files of one module, in priority order
    /// (later entries win ties, as LLVM's stable sort + "keep last" does).
    pub(crate) fn build(files: &[&object::File<'a>]) -> SymbolTable<'a> {
        let mut syms = Vec::new();
        let mut strings = Vec::new();
        for table in [Table::Static, Table::Dynamic] {
            for file in files {
                match file {
                    object::File::Elf32(f) => collect(f, table, &mut syms, &mut strings),
                    object::File::Elf64(f) => collect(f, table, &mut syms, &mut strings),
                    _ => {}
                }
            }
            if !syms.is_empty() {
                break;
            }
        }
        Self::sorted(syms, strings)
    }

    fn sorted(mut syms: Vec<(u64, Kept)>, strings: Vec<StringTable<'a>>) -> SymbolTable<'a> {
        // Stable: among equal (addr, size) the later one is kept below.
        syms.sort_by_key(|(addr, k)| (*addr, k.size));
        let mut addrs: Vec<u64> = Vec::with_capacity(syms.len());
        let mut kept: Vec<Kept> = Vec::with_capacity(syms.len());
        for (addr, k) in syms {
            match (addrs.last(), kept.last_mut()) {
                (Some(&last), Some(same)) if last == addr => *same = k,
                _ => {
                    addrs.push(addr);
                    kept.push(k);
                }
            }
        }
        addrs.shrink_to_fit();
        kept.shrink_to_fit();
        SymbolTable {
            addrs,
            kept,
            strings,
            made: Mutex::default(),
        }
    }

    /// The symbol covering `addr`.
    #[cfg(test)]
    pub(crate) fn find(&self, addr: u64) -> Option<SymEntry<'a>> {
        self.entry(self.index(addr)?)
    }

    /// The symbol covering `addr` as answers carry it, its name and file
    /// made by `make` the first time.
    fn hit(&self, addr: u64, make: impl FnOnce(&SymEntry<'a>) -> Made) -> Option<SymbolHit> {
        let i = self.index(addr)?;
        let kept = lock(&self.made).get(&i).cloned();
        let (name, file) = match kept {
            Some(made) => made,
            None => {
                let made = make(&self.entry(i)?);
                crate::base::insert_bounded(&mut lock(&self.made), MADE, i, made.clone());
                made
            }
        };
        Some(SymbolHit {
            name,
            address: self.addrs[i],
            size: self.kept[i].size,
            file,
        })
    }

    /// The index of the symbol covering `addr`, by LLVM's rule (a size-0
    /// symbol covers everything up to the next symbol).
    fn index(&self, addr: u64) -> Option<usize> {
        let i = search::partition_point(&self.addrs, |&a| a <= addr).checked_sub(1)?;
        let k = self.kept[i];
        if k.size != 0 && self.addrs[i].saturating_add(k.size) <= addr {
            return None;
        }
        Some(i)
    }

    /// Symbol `i`, its strings read (readable when the table was built; a
    /// file truncated since reads as zeros, an empty name).
    fn entry(&self, i: usize) -> Option<SymEntry<'a>> {
        let k = self.kept[i];
        k.entry(self.addrs[i], &self.strings[k.strings as usize])
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.addrs.len()
    }
}

fn collect<'a, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'a, Elf, &'a [u8]>,
    which: Table,
    out: &mut Vec<(u64, Kept)>,
    strings: &mut Vec<StringTable<'a>>,
) {
    let Ok(id) = u32::try_from(strings.len()) else {
        return;
    };
    let mut any = false;
    let mut table = None;
    visit(
        file,
        which,
        &mut any,
        |_, _| true,
        |sym, addr| {
            table.get_or_insert(sym.strings);
            out.push((addr, sym.kept(id)));
        },
    );
    strings.extend(table);
}

/// Hand the symbols LLVM keeps from one table to `keep` with their
/// addresses, in table order, skipping those `want(address, size)` refuses.
/// `any` is set once the table is known to keep at least one symbol. Names
/// are not read, only checked to be readable (mapping symbols aside).
fn visit<'a, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'a, Elf, &'a [u8]>,
    which: Table,
    any: &mut bool,
    want: impl Fn(u64, u64) -> bool,
    mut keep: impl FnMut(&ElfSymbol<'a>, u64),
) {
    let machine = file.elf_header().e_machine(file.endian());
    let is_arm = machine == elf::EM_ARM;
    let mapping_symbols = matches!(
        machine,
        elf::EM_ARM | elf::EM_AARCH64 | elf::EM_RISCV | elf::EM_CSKY | elf::EM_LOONGARCH
    );
    for sym in ElfSymbolsOf::new(file, which) {
        if !matches!(
            sym.kind,
            elf::STT_NOTYPE | elf::STT_FUNC | elf::STT_OBJECT | elf::STT_GNU_IFUNC
        ) || !sym.allocated
        {
            continue;
        }
        let mut addr = sym.value;
        if is_arm && sym.kind == elf::STT_FUNC {
            addr &= !1;
        }
        let wanted = want(addr, sym.size);
        if !wanted && *any {
            continue;
        }
        let readable = if mapping_symbols {
            sym.name().is_some_and(|name| !is_mapping_symbol(name))
        } else {
            sym.has_name()
        };
        if !readable {
            continue;
        }
        *any = true;
        if wanted {
            keep(&sym, addr);
        }
    }
}

/// One entry of an ELF symbol table as stored; the name is read on demand
/// (most readers decide from the type and address whether they want it).
#[derive(Clone, Copy)]
pub(crate) struct ElfSymbol<'a> {
    pub kind: elf::SymbolType,
    pub bind: elf::SymbolBind,
    /// `st_value` as stored (with the Thumb bit of ARM functions).
    pub value: u64,
    pub size: u64,
    /// Defined in one of the file's sections (not undefined, absolute or
    /// common) that the program has in memory (`SHF_ALLOC`): the others
    /// (`.gnu.warning.*`, `.comment`) have no run-time address.
    pub allocated: bool,
    /// In `SHN_COMMON`: the value is an alignment, not an address.
    pub common: bool,
    /// Where the name of the last non-empty `STT_FILE` symbol before this
    /// one starts in `strings`.
    file: Option<u32>,
    name: u32,
    strings: StringTable<'a>,
    /// The size of `strings` when they end with a NUL: then every name
    /// that starts inside them can be read.
    names_len: Option<usize>,
}

impl<'a> ElfSymbol<'a> {
    /// The name, `None` when its offset is outside the string table.
    pub(crate) fn name(&self) -> Option<&'a [u8]> {
        self.strings.get(self.name).ok()
    }

    /// Whether [`Self::name`] is `Some`, mostly without reading it.
    fn has_name(&self) -> bool {
        match self.names_len {
            Some(len) => usize::try_from(self.name).is_ok_and(|n| n < len),
            None => self.name().is_some(),
        }
    }

    /// This symbol as the sorted table keeps it, its strings being table
    /// `strings` of the table's: local symbols carry their file.
    fn kept(&self, strings: u32) -> Kept {
        Kept {
            size: self.size,
            name: self.name,
            file: self.file.filter(|_| self.bind == elf::STB_LOCAL),
            strings,
        }
    }
}

/// The symbols of one table of an ELF file, in table order, without the
/// null symbol at index 0. Other files give no symbols.
pub(crate) fn elf_symbols<'f, 'a>(file: &'f object::File<'a>, which: Table) -> ElfSymbols<'f, 'a> {
    match file {
        object::File::Elf32(f) => ElfSymbols::Elf32(ElfSymbolsOf::new(f, which)),
        object::File::Elf64(f) => ElfSymbols::Elf64(ElfSymbolsOf::new(f, which)),
        _ => ElfSymbols::None,
    }
}

/// [`elf_symbols`] of either class.
pub(crate) enum ElfSymbols<'f, 'a> {
    Elf32(ElfSymbolsOf<'f, 'a, elf::FileHeader32<Endianness>>),
    Elf64(ElfSymbolsOf<'f, 'a, elf::FileHeader64<Endianness>>),
    None,
}

impl<'a> Iterator for ElfSymbols<'_, 'a> {
    type Item = ElfSymbol<'a>;

    fn next(&mut self) -> Option<ElfSymbol<'a>> {
        match self {
            ElfSymbols::Elf32(it) => it.next(),
            ElfSymbols::Elf64(it) => it.next(),
            ElfSymbols::None => None,
        }
    }
}

/// The symbols of one table of an ELF file of class `Elf`.
pub(crate) struct ElfSymbolsOf<'f, 'a, Elf: FileHeader> {
    table: &'f object::read::elf::SymbolTable<'a, Elf>,
    endian: Elf::Endian,
    sections: &'f object::read::elf::SectionTable<'a, Elf>,
    next: usize,
    file: Option<u32>,
    names_len: Option<usize>,
}

impl<'f, 'a, Elf: FileHeader<Endian = Endianness>> ElfSymbolsOf<'f, 'a, Elf> {
    pub(crate) fn new(file: &'f ElfFile<'a, Elf, &'a [u8]>, which: Table) -> Self {
        let table = match which {
            Table::Static => file.elf_symbol_table(),
            Table::Dynamic => file.elf_dynamic_symbol_table(),
        };
        let endian = file.endian();
        let sections = file.elf_section_table();
        let names_len = sections
            .section(table.string_section())
            .ok()
            .filter(|s| s.sh_type(endian) == elf::SHT_STRTAB)
            .and_then(|s| s.data(endian, file.data()).ok())
            .filter(|names| names.last() == Some(&0))
            .map(<[u8]>::len);
        ElfSymbolsOf {
            table,
            endian,
            sections,
            next: 1,
            file: None,
            names_len,
        }
    }
}

impl<'a, Elf: FileHeader<Endian = Endianness>> Iterator for ElfSymbolsOf<'_, 'a, Elf> {
    type Item = ElfSymbol<'a>;

    fn next(&mut self) -> Option<ElfSymbol<'a>> {
        let index = object::SymbolIndex(self.next);
        let sym = self.table.symbols().get(self.next)?;
        self.next += 1;
        let endian = self.endian;
        let kind = sym.st_type();
        let strings = self.table.strings();
        let name = sym.st_name(endian);
        if kind == elf::STT_FILE {
            // (A name that cannot be read leaves the current file as it was.)
            if let Ok(file) = strings.get(name) {
                self.file = (!file.is_empty()).then_some(name);
            }
        }
        let allocated = match self.table.symbol_section(endian, sym, index) {
            Ok(Some(section)) => self
                .sections
                .section(section)
                .is_ok_and(|s| s.sh_flags(endian).contains(elf::SHF_ALLOC)),
            _ => false,
        };
        Some(ElfSymbol {
            kind,
            bind: sym.st_bind(),
            value: sym.st_value(endian).into(),
            size: sym.st_size(endian).into(),
            allocated,
            common: sym.is_common(endian),
            file: self.file,
            name,
            strings,
            names_len: self.names_len,
        })
    }
}

/// ARM/AArch64/RISC-V mapping symbols (`$a`, `$d`, `$t`, `$x`, `$d.foo`...).
fn is_mapping_symbol(name: &[u8]) -> bool {
    match name {
        [b'$', c] | [b'$', c, b'.', ..] => matches!(c, b'a' | b'd' | b't' | b'x'),
        _ => name.starts_with(b"$x") || name.starts_with(b"$d"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of `syms` (address, size, name), in this order.
    fn table(syms: &[(u64, u64, &str)]) -> SymbolTable<'static> {
        let mut names = Vec::new();
        let mut kept = Vec::new();
        for &(addr, size, name) in syms {
            let k = Kept {
                size,
                name: names.len() as u32,
                file: None,
                strings: 0,
            };
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            kept.push((addr, k));
        }
        let names: &'static [u8] = names.leak();
        let strings = StringTable::new(names, 0, names.len() as u64);
        SymbolTable::sorted(kept, vec![strings])
    }

    #[test]
    fn llvm_alias_rule_keeps_largest_then_last() {
        let t = table(&[
            (0x10, 8, "big_first"),
            (0x10, 0, "nosize"),
            (0x10, 8, "big_last"),
            (0x20, 4, "next"),
        ]);
        assert_eq!(t.len(), 2);
        assert_eq!(t.find(0x10).map(|s| s.name), Some(&b"big_last"[..]));
        assert_eq!(t.find(0x17).map(|s| s.name), Some(&b"big_last"[..]));
        // Gap after a sized symbol: nothing.
        assert!(t.find(0x18).is_none());
        assert!(t.find(0x0f).is_none());
        assert_eq!(t.find(0x23).map(|s| s.name), Some(&b"next"[..]));
        assert!(t.find(0x24).is_none());
    }

    /// Past the scans, a hit on a symbol already answered reuses the names
    /// made the first time, and answers as `find` does.
    #[test]
    fn hits_make_each_symbols_names_once() {
        let t = table(&[(0x10, 8, "first"), (0x20, 0, "second")]);
        let made = std::cell::Cell::new(0);
        let make = |s: &SymEntry<'_>| {
            made.set(made.get() + 1);
            (Name::new(std::str::from_utf8(s.name).unwrap()), None)
        };
        let a = t.hit(0x10, make).unwrap();
        let b = t.hit(0x17, make).unwrap();
        assert!(Name::ptr_eq(&a.name, &b.name));
        assert_eq!((b.address, b.size, b.name.raw()), (0x10, 8, "first"));
        assert!(t.hit(0x18, make).is_none());
        let c = t.hit(0x30, make).unwrap();
        assert_eq!((c.address, c.size, c.name.raw()), (0x20, 0, "second"));
        assert_eq!(made.get(), 2);
        // The scans before the table is built make names each time.
        let data = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/elf/bin/c_stripped.debug"),
        )
        .unwrap();
        let symbols = Symbols::new(vec![object::File::parse(&*data).unwrap()]);
        let table = SymbolTable::build(&[&object::File::parse(&*data).unwrap()]);
        let addr = (0..table.len())
            .map(|i| table.entry(i).unwrap())
            .find(|s| s.size > 0)
            .unwrap()
            .addr;
        made.set(0);
        let hits: Vec<_> = (0..SCANS + 2)
            .map(|_| symbols.hit(addr, make).unwrap())
            .collect();
        assert_eq!(made.get(), SCANS + 1);
        let want = table.find(addr).unwrap();
        for h in &hits {
            assert_eq!(
                (h.address, h.size, h.name.as_bytes()),
                (want.addr, want.size, want.name)
            );
        }
        assert!(Name::ptr_eq(
            &hits[SCANS as usize].name,
            &hits[SCANS as usize + 1].name
        ));
    }

    #[test]
    fn size_zero_covers_to_the_end() {
        let t = table(&[(0x10, 0, "asm")]);
        assert_eq!(t.find(u64::MAX).map(|s| s.name), Some(&b"asm"[..]));
    }

    /// A name is readable when it starts inside the strings and a NUL ends
    /// it: known from the table's last byte when that is a NUL, else read.
    #[test]
    fn names_are_checked_without_reading_them() {
        let sym = |names: &'static [u8], name: u32| ElfSymbol {
            kind: elf::STT_FUNC,
            bind: elf::STB_GLOBAL,
            value: 0,
            size: 0,
            allocated: true,
            common: false,
            file: None,
            name,
            strings: StringTable::new(names, 0, names.len() as u64),
            names_len: (names.last() == Some(&0)).then_some(names.len()),
        };
        for (names, name) in [
            (&b"\0ab\0"[..], 1),
            (&b"\0ab\0"[..], 3),
            (&b"\0ab\0"[..], 4),
            (&b"\0ab\0"[..], u32::MAX),
            (&b"\0ab\0c"[..], 1),
            (&b"\0ab\0c"[..], 4),
            (&b""[..], 0),
        ] {
            let s = sym(names, name);
            assert_eq!(s.has_name(), s.name().is_some(), "{names:?} {name}");
        }
        assert!(!sym(b"\0ab\0c", 4).has_name());
        assert!(sym(b"\0ab\0", 1).has_name());
    }

    /// The scan answers as the sorted table, at every symbol's edges, on
    /// every fixture (C, C++, Rust, shared library, stripped + debug file).
    #[test]
    fn scan_answers_as_the_table() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths: Vec<std::path::PathBuf> = Vec::new();
        for dir in ["testdata/elf/bin", "testdata/bin", "testdata/latency/bin"] {
            if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
                paths.extend(entries.flatten().map(|e| e.path()));
            }
        }
        if let Some(extra) = std::env::var_os("SYMFILTER_TEST_DWARF_FILE") {
            paths.push(extra.into());
        }
        paths.sort();
        let datas: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
        let mut checked = 0;
        // Each file alone, and a binary with its debug file (both orders).
        let mut sets: Vec<Vec<usize>> = (0..datas.len()).map(|i| vec![i]).collect();
        let find = |name: &str| paths.iter().position(|p| p.ends_with(name));
        if let (Some(a), Some(b)) = (find("elf/bin/c_stripped"), find("elf/bin/c_stripped.debug")) {
            sets.push(vec![a, b]);
            sets.push(vec![b, a]);
        }
        for set in sets {
            let parse = || -> Vec<object::File<'_>> {
                set.iter()
                    .filter_map(|&i| object::File::parse(&*datas[i]).ok())
                    .filter(|f| matches!(f, object::File::Elf32(_) | object::File::Elf64(_)))
                    .collect()
            };
            let files = parse();
            if files.is_empty() {
                continue;
            }
            let table = SymbolTable::build(&files.iter().collect::<Vec<_>>());
            let symbols = Symbols::new(parse());
            let mut addrs = vec![0, 1, u64::MAX];
            for s in (0..table.len()).map(|i| table.entry(i).unwrap()) {
                addrs.extend([s.addr.wrapping_sub(1), s.addr, s.addr + 1]);
                addrs.extend([
                    s.addr.wrapping_add(s.size).wrapping_sub(1),
                    s.addr.wrapping_add(s.size),
                ]);
            }
            addrs.sort_unstable();
            addrs.dedup();
            let step = addrs.len() / 5_000 + 1;
            for &a in addrs.iter().step_by(step) {
                let want = table.find(a).map(|s| (s.addr, s.size, s.name, s.file));
                let got = symbols.scan(a).map(|s| (s.addr, s.size, s.name, s.file));
                assert_eq!(
                    got,
                    want,
                    "{:?} {a:#x}",
                    set.iter().map(|&i| &paths[i]).collect::<Vec<_>>()
                );
                checked += 1;
            }
        }
        assert!(checked > 2000, "{checked}");
    }

    /// The reader agrees with `object`'s own symbol iterators on every
    /// symbol of every fixture, both tables.
    #[test]
    fn reader_agrees_with_object() {
        use object::{Object, ObjectSection, ObjectSymbol, SymbolSection};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for dir in ["testdata/elf/bin", "testdata/bin", "testdata/xray/bin"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for path in entries.flatten().map(|e| e.path()) {
                let Ok(data) = std::fs::read(&path) else {
                    continue;
                };
                let Ok(file) = object::File::parse(&*data) else {
                    continue;
                };
                for (table, theirs) in [
                    (Table::Static, file.symbols().collect::<Vec<_>>()),
                    (Table::Dynamic, file.dynamic_symbols().collect()),
                ] {
                    let ours: Vec<_> = elf_symbols(&file, table).collect();
                    assert_eq!(ours.len(), theirs.len(), "{path:?}");
                    for (a, b) in ours.iter().zip(&theirs) {
                        assert_eq!(a.name(), b.name_bytes().ok(), "{path:?}");
                        assert_eq!(a.has_name(), a.name().is_some(), "{path:?}");
                        assert_eq!(a.size, b.size());
                        assert_eq!(a.common, b.is_common());
                        if !a.common {
                            assert_eq!(a.value, b.address());
                        }
                        let allocated = match b.section() {
                            SymbolSection::Section(i) => file.section_by_index(i).is_ok_and(|s| {
                                matches!(s.flags(),
                                    object::SectionFlags::Elf { sh_flags, .. }
                                        if sh_flags.contains(elf::SHF_ALLOC))
                            }),
                            _ => false,
                        };
                        assert_eq!(a.allocated, allocated, "{path:?} {:?}", b.name());
                        assert_eq!(a.bind == elf::STB_LOCAL, b.is_local());
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn mapping_symbols() {
        assert!(is_mapping_symbol(b"$x"));
        assert!(is_mapping_symbol(b"$d.1"));
        assert!(!is_mapping_symbol(b"$foo"));
        assert!(!is_mapping_symbol(b"main"));
    }
}
