//! The context state machine: modules and their loaded regions, as declared
//! by `{{{reset}}}`, `{{{module}}}` and `{{{mmap}}}`.
//!
//! Regions live in a `BTreeMap` keyed by start address, so finding the region
//! that covers an address, and checking a new region for overlap, are
//! O(log n) however many regions a process maps. Every error leaves the state
//! as it was before the element.

use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use crate::base::BuildId;
use crate::markup::Mode;

/// A module as declared by `{{{module:ID:NAME:elf:BUILDID}}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub id: u64,
    /// Raw name bytes from the markup (may be empty, may be any bytes).
    pub name: Vec<u8>,
    pub build_id: BuildId,
}

impl Module {
    /// The name as text (lossy for invalid UTF-8).
    pub fn name_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }
}

/// A region loaded from a module (`{{{mmap:START:SIZE:load:ID:MODE:REL}}}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub size: u64,
    pub module: u64,
    pub mode: Mode,
    /// Module-relative address of `start` (the segment's `p_vaddr`).
    pub rel: u64,
}

impl Region {
    /// True when `addr` is inside; a region of size 0, or one that wraps past
    /// 2^64, contains nothing (as in LLVM).
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.start.wrapping_add(self.size)
    }

    /// Last address of the region (`start + size - 1`, wrapping as LLVM
    /// prints it).
    pub fn last(&self) -> u64 {
        self.start.wrapping_add(self.size).wrapping_sub(1)
    }

    /// The module-relative address of `addr`.
    pub fn module_relative(&self, addr: u64) -> u64 {
        addr.wrapping_sub(self.start).wrapping_add(self.rel)
    }
}

/// Why a contextual element was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("module ID {0:#x} is already declared (no reset since)")]
    DuplicateModule(u64),
    #[error("mmap names module ID {0:#x}, which was not declared")]
    UnknownModule(u64),
    #[error(
        "mmap overlaps the region [{:#x}-{:#x}] of module {:#x}",
        .0.start,
        .0.last(),
        .0.module
    )]
    Overlap(Region),
    #[error("too many {0} since the last reset (limit {1}); ignored")]
    TooMany(&'static str, usize),
    #[error("build IDs since the last reset exceed {0} bytes; module ignored")]
    BuildIdBudget(usize),
}

/// Most modules kept between resets (bounds memory on hostile input).
pub const MAX_MODULES: usize = 1 << 16;
/// Longest module name kept whole: a longer one keeps its first bytes and
/// says how long it was (`PREFIX...(N bytes)`).
pub const MAX_NAME: usize = 4096;
/// Once the names kept since the last reset reach this many bytes, later
/// names keep only [`SHORT_NAME`] bytes.
pub const NAME_BUDGET: usize = 16 << 20;
/// Longest name kept once [`NAME_BUDGET`] is spent.
pub const SHORT_NAME: usize = 64;
/// Most bytes of build IDs kept between resets (a build ID may be any
/// length; it cannot be shortened, so modules past this are refused).
pub const BUILD_ID_BUDGET: usize = 16 << 20;
/// Most regions kept between resets.
pub const MAX_REGIONS: usize = 1 << 20;

/// What became of an accepted mmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapAdded {
    /// Stored as given.
    Stored(Region),
    /// A region starting where a size-0 region starts (which no overlap
    /// check catches, as in LLVM): not stored, and nothing reported; carries
    /// the kept one, whatever module each names (LLVM then treats the mmap
    /// as the kept one).
    Duplicate(Region),
}

/// Where an address falls.
#[derive(Clone, Copy, Debug)]
pub struct Location<'a> {
    pub module: &'a Arc<Module>,
    pub region: &'a Region,
    /// Module-relative address.
    pub rel: u64,
}

/// The state accumulated from contextual elements since the last reset.
#[derive(Default, Debug)]
pub struct Context {
    modules: HashMap<u64, Arc<Module>>,
    regions: BTreeMap<u64, Region>,
    /// Start addresses of each module's regions: a module's first use
    /// looks at its own regions, not at every region of the process.
    starts_of: HashMap<u64, BTreeSet<u64>>,
    /// Bumped by every change (see [`Context::generation`]).
    generation: u64,
    /// Bytes of module names and of build IDs kept.
    name_bytes: usize,
    build_id_bytes: usize,
}

impl Context {
    pub fn new() -> Context {
        Context::default()
    }

    /// An empty context whose [`Context::generation`] starts at
    /// `generation`: caches keyed by generation that several contexts share
    /// (one per process under `--demux`) tell them apart.
    pub fn starting_at(generation: u64) -> Context {
        Context {
            generation,
            ..Context::default()
        }
    }

    /// True when nothing has been declared since the start or the last reset.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty() && self.regions.is_empty()
    }

    /// Forget everything. Returns whether there was anything to forget.
    pub fn reset(&mut self) -> bool {
        let was = !self.is_empty();
        self.generation = self.generation.wrapping_add(1);
        self.modules.clear();
        self.regions.clear();
        self.starts_of.clear();
        self.name_bytes = 0;
        self.build_id_bytes = 0;
        was
    }

    pub fn module(&self, id: u64) -> Option<&Module> {
        self.modules.get(&id).map(|m| &**m)
    }

    pub fn modules(&self) -> impl Iterator<Item = &Module> {
        self.modules.values().map(|m| &**m)
    }

    /// The start of `module`'s image as far as this context knows it: the
    /// lowest module-relative address mapped.
    pub fn image_base_of(&self, module: &Module) -> Option<u64> {
        self.regions_of(module.id).map(|r| r.rel).min()
    }

    /// Regions of one module, by start address.
    pub fn regions_of(&self, id: u64) -> impl Iterator<Item = &Region> {
        self.starts_of
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|start| self.regions.get(start))
    }

    /// Every region, by start address.
    pub fn regions(&self) -> impl Iterator<Item = &Region> {
        self.regions.values()
    }

    /// A number that changes whenever the context does (reset, module or
    /// region added): lets callers cache what they derive from it.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn region_count(&self) -> usize {
        self.regions.len()
    }

    /// Declare a module. A module ID already declared is refused and the
    /// first declaration is kept. A long name is shortened (see
    /// [`MAX_NAME`]).
    pub fn add_module(&mut self, mut module: Module) -> Result<&Module, ContextError> {
        use std::collections::hash_map::Entry;
        if self.modules.len() >= MAX_MODULES && !self.modules.contains_key(&module.id) {
            return Err(ContextError::TooMany("modules", MAX_MODULES));
        }
        let id_len = module.build_id.0.len();
        if self.build_id_bytes + id_len > BUILD_ID_BUDGET && !self.modules.contains_key(&module.id)
        {
            return Err(ContextError::BuildIdBudget(BUILD_ID_BUDGET));
        }
        match self.modules.entry(module.id) {
            Entry::Occupied(_) => Err(ContextError::DuplicateModule(module.id)),
            Entry::Vacant(v) => {
                let keep = if self.name_bytes < NAME_BUDGET {
                    MAX_NAME
                } else {
                    SHORT_NAME
                };
                shorten_name(&mut module.name, keep);
                self.name_bytes += module.name.len();
                self.build_id_bytes += id_len;
                self.generation = self.generation.wrapping_add(1);
                Ok(v.insert(Arc::new(module)))
            }
        }
    }

    /// Add a region. Refused when its module is unknown or when it overlaps
    /// a region already present (touching is fine).
    pub fn add_mmap(&mut self, region: Region) -> Result<MmapAdded, ContextError> {
        if !self.modules.contains_key(&region.module) {
            return Err(ContextError::UnknownModule(region.module));
        }
        if let Some(other) = self.overlapping(&region) {
            return Err(ContextError::Overlap(*other));
        }
        if self.regions.len() >= MAX_REGIONS {
            return Err(ContextError::TooMany("mmaps", MAX_REGIONS));
        }
        use std::collections::btree_map::Entry;
        match self.regions.entry(region.start) {
            Entry::Occupied(o) => Ok(MmapAdded::Duplicate(*o.get())),
            Entry::Vacant(v) => {
                self.generation = self.generation.wrapping_add(1);
                self.starts_of
                    .entry(region.module)
                    .or_default()
                    .insert(region.start);
                Ok(MmapAdded::Stored(*v.insert(region)))
            }
        }
    }

    /// An existing region that overlaps `new` (LLVM's check: the first region
    /// starting after `new.start` if `new` contains its start, else the
    /// region at or before `new.start` if it contains `new.start`).
    fn overlapping(&self, new: &Region) -> Option<&Region> {
        if let Some((_, next)) = self
            .regions
            .range((Bound::Excluded(new.start), Bound::Unbounded))
            .next()
            && new.contains(next.start)
        {
            return Some(next);
        }
        self.regions
            .range(..=new.start)
            .next_back()
            .map(|(_, r)| r)
            .filter(|r| r.contains(new.start))
    }

    /// The region covering `addr` and the module it belongs to.
    pub fn lookup(&self, addr: u64) -> Option<Location<'_>> {
        let (_, region) = self.regions.range(..=addr).next_back()?;
        if !region.contains(addr) {
            return None;
        }
        let module = self.modules.get(&region.module)?;
        Some(Location {
            module,
            region,
            rel: region.module_relative(addr),
        })
    }
}

/// Cut `name` to its first `keep` bytes (at a UTF-8 character start when
/// there is one near) followed by `...(N bytes)`, N its whole length, when
/// it is longer than that.
fn shorten_name(name: &mut Vec<u8>, keep: usize) {
    let len = name.len();
    if len <= keep {
        return;
    }
    let mut cut = keep;
    // Back off over at most three UTF-8 continuation bytes.
    while cut > keep.saturating_sub(3) && cut > 0 && name[cut] & 0xc0 == 0x80 {
        cut -= 1;
    }
    name.truncate(cut);
    name.extend_from_slice(format!("...({len} bytes)").as_bytes());
    name.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(id: u64) -> Module {
        Module {
            id,
            name: format!("m{id}").into_bytes(),
            build_id: BuildId(vec![id as u8, 0xaa]),
        }
    }

    fn region(start: u64, size: u64, module: u64) -> Region {
        Region {
            start,
            size,
            module,
            mode: Mode::RX,
            rel: 0x1000,
        }
    }

    #[test]
    fn lookup_and_relative_address() {
        let mut c = Context::new();
        c.add_module(module(1)).unwrap();
        c.add_mmap(region(0x7acba69d5000, 0x5a000, 1)).unwrap();
        let loc = c.lookup(0x7acba69d5010).unwrap();
        assert_eq!(loc.module.id, 1);
        assert_eq!(loc.rel, 0x1010);
        assert!(c.lookup(0x7acba69d5000 + 0x5a000).is_none());
        assert!(c.lookup(0x7acba69d4fff).is_none());
        assert_eq!(
            c.lookup(0x7acba69d5000 + 0x59fff).unwrap().rel,
            0x1000 + 0x59fff
        );
    }

    #[test]
    fn errors_leave_state_consistent() {
        let mut c = Context::new();
        c.add_module(module(1)).unwrap();
        let mut dup = module(1);
        dup.name = b"other".to_vec();
        assert_eq!(c.add_module(dup), Err(ContextError::DuplicateModule(1)));
        assert_eq!(c.module(1).unwrap().name, b"m1");
        assert_eq!(
            c.add_mmap(region(0x1000, 0x10, 2)),
            Err(ContextError::UnknownModule(2))
        );
        c.add_mmap(region(0x1000, 0x1000, 1)).unwrap();
        // Starts inside.
        assert!(matches!(
            c.add_mmap(region(0x1800, 0x1000, 1)),
            Err(ContextError::Overlap(r)) if r.start == 0x1000
        ));
        // Contains an existing start.
        assert!(matches!(
            c.add_mmap(region(0x0800, 0x1000, 1)),
            Err(ContextError::Overlap(r)) if r.start == 0x1000
        ));
        // Same start.
        assert!(c.add_mmap(region(0x1000, 0x10, 1)).is_err());
        // Touching is fine.
        c.add_mmap(region(0x2000, 0x1000, 1)).unwrap();
        c.add_mmap(region(0x0800, 0x800, 1)).unwrap();
        assert_eq!(c.region_count(), 3);
        assert_eq!(c.lookup(0x1fff).unwrap().region.start, 0x1000);
        assert_eq!(c.lookup(0x2000).unwrap().region.start, 0x2000);
    }

    #[test]
    fn zero_size_and_wrapping() {
        let mut c = Context::new();
        c.add_module(module(1)).unwrap();
        assert!(matches!(
            c.add_mmap(region(0x9000, 0, 1)),
            Ok(MmapAdded::Stored(_))
        ));
        assert!(c.lookup(0x9000).is_none());
        assert!(matches!(
            c.add_mmap(region(0x9000, 0, 1)),
            Ok(MmapAdded::Duplicate(_))
        ));
        // A later region covering its start is refused.
        assert!(c.add_mmap(region(0x8000, 0x2000, 1)).is_err());
        c.add_mmap(region(u64::MAX - 0xf, 0x100, 1)).unwrap();
        assert!(c.lookup(u64::MAX).is_none());
    }

    #[test]
    fn reset_clears() {
        let mut c = Context::new();
        assert!(!c.reset());
        c.add_module(module(1)).unwrap();
        c.add_mmap(region(0x1000, 0x1000, 1)).unwrap();
        assert!(c.reset());
        assert!(c.is_empty());
        assert!(c.lookup(0x1000).is_none());
        c.add_module(module(1)).unwrap();
    }

    #[test]
    fn long_names_keep_a_prefix_and_their_length() {
        let mut c = Context::new();
        let mut m = module(1);
        m.name = [&b"/lib/"[..], &vec![b'x'; 20 << 20]].concat();
        let kept = c.add_module(m).unwrap();
        assert_eq!(kept.name.len(), MAX_NAME + "...(20971525 bytes)".len());
        assert!(kept.name.starts_with(b"/lib/xxx"));
        assert!(kept.name.ends_with(b"x...(20971525 bytes)"));
        // A multi-byte character is not cut in the middle.
        let mut m = module(2);
        m.name = [vec![b'a'; MAX_NAME - 1], "é".repeat(10).into_bytes()].concat();
        let kept = c.add_module(m).unwrap();
        assert_eq!(
            kept.name_lossy(),
            format!("{}...(4115 bytes)", "a".repeat(MAX_NAME - 1))
        );
        // Once the budget is spent, names keep less.
        let mut id = 3;
        while c.name_bytes < NAME_BUDGET {
            let mut m = module(id);
            m.name = vec![b'n'; 2 * MAX_NAME];
            c.add_module(m).unwrap();
            id += 1;
        }
        let mut m = module(id);
        m.name = vec![b'n'; 200];
        assert_eq!(
            c.add_module(m).unwrap().name_lossy(),
            format!("{}...(200 bytes)", "n".repeat(SHORT_NAME))
        );
        c.reset();
        let mut m = module(1);
        m.name = vec![b'n'; 200];
        assert_eq!(c.add_module(m).unwrap().name.len(), 200);
    }

    #[test]
    fn build_id_budget() {
        let mut c = Context::new();
        let mut m = module(1);
        m.build_id = BuildId(vec![7; BUILD_ID_BUDGET]);
        c.add_module(m).unwrap();
        assert_eq!(
            c.add_module(module(2)),
            Err(ContextError::BuildIdBudget(BUILD_ID_BUDGET))
        );
        c.reset();
        c.add_module(module(2)).unwrap();
    }

    #[test]
    fn module_limit() {
        let mut c = Context::new();
        for m in 0..MAX_MODULES as u64 {
            c.add_module(module(m)).unwrap();
        }
        assert_eq!(
            c.add_module(module(MAX_MODULES as u64)),
            Err(ContextError::TooMany("modules", MAX_MODULES))
        );
        // A duplicate is still reported as such.
        assert_eq!(
            c.add_module(module(0)),
            Err(ContextError::DuplicateModule(0))
        );
        assert!(c.reset());
        c.add_module(module(0)).unwrap();
    }

    #[test]
    fn many_regions() {
        let mut c = Context::new();
        for m in 0..100 {
            c.add_module(module(m)).unwrap();
        }
        for i in 0..10_000u64 {
            c.add_mmap(region(0x10_0000 + i * 0x2000, 0x1000, i % 100))
                .unwrap();
        }
        let of_7: Vec<u64> = c.regions_of(7).map(|r| r.start).collect();
        let want: Vec<u64> = (0..100)
            .map(|k| 0x10_0000 + (k * 100 + 7) * 0x2000)
            .collect();
        assert_eq!(of_7, want);
        for i in (0..10_000u64).step_by(7) {
            let loc = c.lookup(0x10_0000 + i * 0x2000 + 0x123).unwrap();
            assert_eq!(loc.module.id, i % 100);
            assert_eq!(loc.rel, 0x1123);
            assert!(c.lookup(0x10_0000 + i * 0x2000 + 0x1000).is_none());
        }
    }
}
