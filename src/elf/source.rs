//! One module's symbol data: the mapped files (binary, separate debug file,
//! dwz supplementary file, DWARF package), the DWARF index over their
//! sections (see [`crate::dwarf`]), and the merged symbol table.
//!
//! A module opened again from the same files in this process (by two
//! symbolizers, say) is the same [`Module`]: what one thread parses, any
//! other finds parsed, and it is in memory once. The filter's two threads
//! (see [`crate::pipeline`]) share one opening of each module.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use gimli::{EndianSlice, RunTimeEndian};
use object::{CompressionFormat, Object, ObjectSection};

use super::file::{self, Mapped};
use super::reloc;
use super::search::dwo_paths;
use super::symtab::Symbols;
use crate::base::mapped::FileMap;
use crate::base::{Stash, lock};
use crate::dwarf::{DwarfIndex, SplitFiles};
use crate::symbols::{
    CodeInfo, CodeWant, DataInfo, DataWant, Frames, Interner, Miss, SymbolHit, SymbolSource, Text,
};

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// Why DWARF sections could not be loaded.
#[derive(Debug)]
struct LoadError(String);

impl From<gimli::Error> for LoadError {
    fn from(e: gimli::Error) -> Self {
        LoadError(format!("DWARF: {e}"))
    }
}

impl From<String> for LoadError {
    fn from(e: String) -> Self {
        LoadError(e)
    }
}

/// A decompressed section may be at most this many times larger than its
/// compressed bytes (zlib tops out near 1000x; real DWARF is under 20x)...
const MAX_EXPANSION: u64 = 256;
/// ...and at most this large in absolute terms.
const MAX_SECTION: u64 = 4 << 30;

/// The files that make up a module, in the roles they play.
pub(crate) struct Parts {
    /// Every ELF file of the module; `files[0]` is the one that was found.
    pub files: Vec<Mapped>,
    /// Index in `files` of the file whose DWARF is used.
    pub dwarf: Option<usize>,
    /// The dwz supplementary file (`.gnu_debugaltlink`).
    pub sup: Option<Mapped>,
    /// A DWARF package (`.dwp`).
    pub dwp: Option<Mapped>,
}

/// Owns every byte the parsed structures borrow.
struct Owner {
    parts: Parts,
    /// Decompressed sections.
    data: Stash<Vec<u8>>,
    /// `.dwo` files mapped on demand.
    dwo_maps: Stash<FileMap>,
    /// The same, by path, to tell whether one was truncated.
    dwo_list: Mutex<Vec<(PathBuf, Arc<FileMap>)>>,
}

impl Owner {
    /// The first of the module's mapped files that was truncated.
    fn truncated(&self) -> Option<String> {
        let p = &self.parts;
        let fixed = p.files.iter().chain(&p.sup).chain(&p.dwp);
        if let Some(m) = fixed.into_iter().find(|m| m.map.faulted()) {
            return Some(m.display());
        }
        let dwos = lock(&self.dwo_list);
        dwos.iter()
            .find(|(_, m)| m.faulted())
            .map(|(path, _)| path.display().to_string())
    }
}

struct Loaded<'a> {
    /// The DWARF, set up by the first lookup that needs it: a module whose
    /// answers all come from the symbol table (data lookups) never pays
    /// for it.
    debug: OnceLock<Debug<'a>>,
    symbols: Symbols<'a>,
    /// Symbol names and files as answers carry them, made once each.
    texts: Mutex<Interner<'a>>,
}

/// A module's DWARF, ready for lookups, or why it cannot be read.
enum Debug<'a> {
    None,
    Index(Box<DwarfIndex<'a>>),
    Unreadable(String),
}

impl<'a> Debug<'a> {
    fn load(owner: &'a Owner) -> Debug<'a> {
        let parts = &owner.parts;
        let Some(m) = parts.dwarf.and_then(|d| parts.files.get(d)) else {
            return Debug::None;
        };
        let loaded = file::parse(&m.map)
            .map_err(|e| LoadError(e.to_string()))
            .and_then(|obj| load_dwarf(owner, &obj));
        match loaded {
            Ok(dwarf) => Debug::Index(Box::new(DwarfIndex::new(dwarf, package(owner)))),
            Err(LoadError(e)) => Debug::Unreadable(e),
        }
    }

    fn index(&self) -> Option<&DwarfIndex<'a>> {
        match self {
            Debug::Index(index) => Some(index),
            _ => None,
        }
    }
}

/// The module's DWARF package, if it has one that can be read.
fn package<'a>(owner: &'a Owner) -> Option<gimli::DwarfPackage<R<'a>>> {
    let obj = file::parse(&owner.parts.dwp.as_ref()?.map).ok()?;
    let endian = endian_of(&obj);
    let empty = EndianSlice::new(&[][..], endian);
    gimli::DwarfPackage::load(
        |id| section(&owner.data, &obj, id.dwo_name().unwrap_or(""), endian),
        empty,
    )
    .ok()
}

/// `.dwo` files: where the skeleton names them (relative to its comp dir),
/// then next to the module's files.
struct DwoFiles<'a> {
    owner: &'a Owner,
}

impl<'a> SplitFiles<'a> for DwoFiles<'a> {
    fn offer(
        &self,
        name: &[u8],
        comp_dir: Option<&[u8]>,
        take: &mut dyn FnMut(gimli::Dwarf<R<'a>>) -> bool,
    ) {
        let owner = self.owner;
        let parents = owner.parts.files.iter().filter_map(|m| m.path.parent());
        for path in dwo_paths(name, comp_dir, parents) {
            let Ok(m) = Mapped::open(&path) else { continue };
            lock(&owner.dwo_list).push((path.clone(), m.map.clone()));
            let map: &'a FileMap = owner.dwo_maps.put_shared(m.map);
            let Ok(obj) = file::parse(map) else { continue };
            if let Some(dwarf) = dwo_dwarf(&owner.data, &obj)
                && take(dwarf)
            {
                return;
            }
        }
    }
}

self_cell::self_cell!(
    struct Cell {
        owner: Owner,
        #[not_covariant]
        dependent: Loaded,
    }
);

/// A module's files and what was read of them, shared by every source
/// opened on the same files.
struct Module {
    cell: Cell,
    origin: String,
    step: u64,
    /// No DWARF and no `.symtab` in any of the module's files.
    dynamic_only: bool,
}

/// The files a module is made of, by path and mapping, in their roles: two
/// sources on the same key read the same bytes the same way.
#[derive(PartialEq, Eq, Hash)]
struct ModuleFiles {
    files: Vec<(PathBuf, usize)>,
    dwarf: Option<usize>,
    sup: Option<(PathBuf, usize)>,
    dwp: Option<(PathBuf, usize)>,
}

impl ModuleFiles {
    fn of(parts: &Parts) -> ModuleFiles {
        // A mapping's address tells files apart while the module holds it
        // (file.rs maps a file once per process); an entry whose module is
        // gone is never matched.
        let id = |m: &Mapped| (m.path.clone(), Arc::as_ptr(&m.map) as usize);
        ModuleFiles {
            files: parts.files.iter().map(id).collect(),
            dwarf: parts.dwarf,
            sup: parts.sup.as_ref().map(id),
            dwp: parts.dwp.as_ref().map(id),
        }
    }
}

/// Modules open in this process, by their files.
static MODULES: Mutex<Option<HashMap<ModuleFiles, Weak<Module>>>> = Mutex::new(None);

/// The ELF/DWARF [`SymbolSource`].
pub struct ElfSource {
    module: Arc<Module>,
}

impl ElfSource {
    pub(crate) fn new(parts: Parts) -> Result<ElfSource, Miss> {
        let key = ModuleFiles::of(&parts);
        let mut modules = lock(&MODULES);
        let modules = modules.get_or_insert_with(HashMap::new);
        if let Some(module) = modules.get(&key).and_then(Weak::upgrade) {
            return Ok(ElfSource { module });
        }
        let module = Arc::new(Module::new(parts)?);
        crate::base::insert_weak(modules, key, &module);
        Ok(ElfSource { module })
    }

    /// Whether the two are one module.
    #[cfg(test)]
    pub(crate) fn same_module(&self, other: &ElfSource) -> bool {
        Arc::ptr_eq(&self.module, &other.module)
    }
}

impl Module {
    fn new(parts: Parts) -> Result<Module, Miss> {
        let mut origin = parts.files[0].display();
        if let Some(i) = parts.dwarf.filter(|&i| i != 0) {
            origin.push_str(&format!(" (debug info: {})", parts.files[i].display()));
        }
        let first = file::parse(&parts.files[0].map)
            .map_err(|e| file::unreadable(&parts.files[0].path, e))?;
        let step = file::return_address_step(Some(first.architecture()));
        let dynamic_only = parts.dwarf.is_none()
            && !parts.files.iter().any(|f| {
                file::parse(&f.map).is_ok_and(|obj| {
                    use object::ObjectSection;
                    obj.section_by_name(".symtab").is_some_and(|s| s.size() > 0)
                })
            });
        let owner = Owner {
            parts,
            data: Stash::default(),
            dwo_maps: Stash::default(),
            dwo_list: Mutex::new(Vec::new()),
        };
        let cell = Cell::try_new(owner, |owner| Loaded::new(owner))?;
        Ok(Module {
            cell,
            origin,
            step,
            dynamic_only,
        })
    }
}

impl<'a> Loaded<'a> {
    fn new(owner: &'a Owner) -> Result<Loaded<'a>, Miss> {
        let parts = &owner.parts;
        let mut objects = Vec::with_capacity(parts.files.len());
        for m in &parts.files {
            objects.push(file::parse(&m.map).map_err(|e| file::unreadable(&m.path, e))?);
        }
        // Symbols: the DWARF file first, then the others (later ones win
        // exact ties, so the found file has the last word as in LLVM).
        let mut objects: Vec<Option<object::File<'a>>> = objects.into_iter().map(Some).collect();
        let mut order: Vec<object::File<'a>> = Vec::with_capacity(objects.len());
        if let Some(d) = parts.dwarf {
            order.extend(objects.get_mut(d).and_then(Option::take));
        }
        order.extend(objects.into_iter().flatten());
        order.reverse();
        let symbols = Symbols::new(order);
        Ok(Loaded {
            debug: OnceLock::new(),
            symbols,
            texts: Mutex::default(),
        })
    }
}

/// The DWARF of `obj` and its supplementary file, as they are.
fn load_dwarf<'a>(
    owner: &'a Owner,
    obj: &object::File<'a>,
) -> Result<gimli::Dwarf<R<'a>>, LoadError> {
    let endian = endian_of(obj);
    let mut dwarf = gimli::Dwarf::load(|id| section(&owner.data, obj, id.name(), endian))?;
    if let Some(sup) = &owner.parts.sup {
        let sup_obj = file::parse(&sup.map)?;
        let sup_endian = endian_of(&sup_obj);
        dwarf.load_sup(|id| section(&owner.data, &sup_obj, id.name(), sup_endian))?;
    }
    Ok(dwarf)
}

pub(crate) fn endian_of(obj: &object::File<'_>) -> RunTimeEndian {
    if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    }
}

/// A section's bytes: borrowed from the map, or decompressed into `data`
/// (bounded). Missing sections are empty.
fn section<'a>(
    data: &'a Stash<Vec<u8>>,
    obj: &object::File<'a>,
    name: &str,
    endian: RunTimeEndian,
) -> Result<R<'a>, LoadError> {
    let empty = Ok(EndianSlice::new(&[][..], endian));
    if name.is_empty() {
        return empty;
    }
    let Some(sec) = obj.section_by_name(name) else {
        return empty;
    };
    let compressed = sec
        .compressed_data()
        .map_err(|e| LoadError(format!("{name}: {e}")))?;
    if compressed.format != CompressionFormat::None {
        let limit = (compressed.data.len() as u64)
            .saturating_mul(MAX_EXPANSION)
            .min(MAX_SECTION);
        if compressed.uncompressed_size > limit {
            return Err(LoadError(format!(
                "{name}: claims {} bytes uncompressed from {}",
                compressed.uncompressed_size,
                compressed.data.len()
            )));
        }
    }
    let bytes = compressed
        .decompress()
        .map_err(|e| LoadError(format!("{name}: {e}")))?;
    let bytes: &'a [u8] = match (reloc::relocated(obj, &sec, &bytes), bytes) {
        (Some(v), _) | (None, Cow::Owned(v)) => data.put(v),
        (None, Cow::Borrowed(b)) => b,
    };
    Ok(EndianSlice::new(bytes, endian))
}

/// The DWARF of a `.dwo` file (its `.dwo` sections), decompressed into
/// `data` within the same bounds as every other section.
pub(crate) fn dwo_dwarf<'a>(
    data: &'a Stash<Vec<u8>>,
    obj: &object::File<'a>,
) -> Option<gimli::Dwarf<R<'a>>> {
    let endian = endian_of(obj);
    gimli::Dwarf::load(|id| section(data, obj, id.dwo_name().unwrap_or(""), endian)).ok()
}

impl<'a> Loaded<'a> {
    /// The symbol covering `addr`, as answers carry it. Its name is
    /// `spelled` (a name the answer already carries, such as its function's
    /// linkage name) where the two are spelled alike.
    fn symbol(&self, addr: u64, spelled: Option<&crate::symbols::Name>) -> Option<SymbolHit> {
        self.symbols.hit(addr, |s| {
            let mut texts = lock(&self.texts);
            let name = match spelled {
                Some(n) if n.raw().as_bytes() == s.name => n.clone(),
                _ => texts.name(s.name),
            };
            (name, s.file.map(|f| texts.text(f)))
        })
    }
}

impl SymbolSource for ElfSource {
    fn only_dynamic_symbols(&self) -> bool {
        self.module.dynamic_only
    }

    fn origin(&self) -> String {
        self.module.origin.clone()
    }

    /// The first of the module's files: the image itself where there is one.
    fn image(&self) -> Option<std::path::PathBuf> {
        let files = &self.module.cell.borrow_owner().parts.files;
        files.first().map(|f| f.path.clone())
    }

    fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<CodeInfo, Miss> {
        self.module.cell.with_dependent(|owner, loaded| {
            let debug = loaded.debug.get_or_init(|| Debug::load(owner));
            let (frames, error) = match debug {
                Debug::None => (Frames::new(), None),
                Debug::Unreadable(e) => (Frames::new(), Some(e.clone())),
                Debug::Index(index) => {
                    match index.frames(addr, want.line0_columns, &DwoFiles { owner }) {
                        Ok(frames) => (frames, None),
                        Err(e) => (Frames::new(), Some(e.to_string())),
                    }
                }
            };
            let function = frames.last().and_then(|f| f.function.as_ref());
            let symbol = if function.is_some() && !want.symbol_when_named {
                None
            } else {
                loaded.symbol(addr, function)
            };
            if frames.is_empty() && symbol.is_none() {
                return Err(match error {
                    Some(e) => Miss::BadDebugInfo(e),
                    None => Miss::NoInfo,
                });
            }
            let claimed = frames.is_empty()
                && want.claims
                && matches!(debug, Debug::Index(index) if index.claims(addr));
            Ok(CodeInfo {
                frames,
                symbol,
                claimed,
                shown: Default::default(),
            })
        })
    }

    fn lookup_data(&self, addr: u64, want: DataWant) -> Result<DataInfo, Miss> {
        let mut info = self.module.cell.with_dependent(|_owner, loaded| {
            let symbol = loaded.symbol(addr, None).ok_or(Miss::NoInfo)?;
            Ok(DataInfo {
                decl_file: symbol.file.clone(),
                symbol: Some(symbol),
                decl_line: 0,
            })
        })?;
        if want.declaration
            && let Some((file, line)) = self.data_declaration(addr)
        {
            info.decl_file = file;
            info.decl_line = line;
        }
        Ok(info)
    }

    fn return_address_step(&self) -> u64 {
        self.module.step
    }

    fn truncated(&self) -> Option<String> {
        self.module.cell.borrow_owner().truncated()
    }
}

impl ElfSource {
    /// The declaration (file, line) of the global at `addr`, when the DWARF
    /// tells it: an index over every DIE, built on first use.
    fn data_declaration(&self, addr: u64) -> Option<(Option<Text>, u32)> {
        self.module.cell.with_dependent(|owner, loaded| {
            let debug = loaded.debug.get_or_init(|| Debug::load(owner));
            let global = debug.index()?.global(addr).filter(|g| g.line != 0)?;
            Some((global.file.clone(), global.line))
        })
    }
}
