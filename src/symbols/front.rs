use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::memo::Memo;
use super::prefetch::{Located, Prefetcher, locate};
use super::{Attempt, BuildId, ModuleKey, Provider};

/// Which sources to ask, in order. Local sources come first; network
/// sources (debuginfod) last.
#[derive(Default)]
pub struct SymbolizerConfig {
    pub providers: Vec<Box<dyn Provider>>,
}

/// Most missing build IDs remembered, with the places tried for each (a
/// log may name a million missing modules); past it they are all
/// forgotten, and one asked for again is searched again.
pub const MAX_MISSING: usize = 1 << 14;
/// Most bytes of missing build IDs remembered (a build ID may be long).
pub const MAX_MISSING_BYTES: usize = 64 << 20;

enum Slot {
    Found(Box<Memo>),
    /// Not found; the places tried are in `trails`.
    Missing,
}

/// The front every consumer (filter, `lookup`, `xray`) goes through: opens a
/// module's symbol source once per run, on first use, and remembers misses
/// so a missing build ID costs one search and one diagnostic. Each source's
/// answers are remembered ([`Memo`]): logs repeat their frames.
pub struct Symbolizer {
    providers: Arc<[Box<dyn Provider>]>,
    /// Searches started by [`Self::prefetch`], once it is first called.
    prefetcher: Option<Prefetcher>,
    /// Whether [`Self::prefetch`] starts searches.
    in_background: bool,
    slots: HashMap<BuildId, Slot>,
    trails: HashMap<BuildId, Vec<Attempt>>,
    /// Build IDs in `slots` that are missing, and their bytes.
    missing: usize,
    missing_bytes: usize,
}

/// The outcome of asking for a module's source.
pub struct Opened<'a> {
    pub source: Result<&'a Memo, &'a [Attempt]>,
    /// True the first time this build ID was asked for (callers report a
    /// miss only then).
    pub first_time: bool,
}

impl Symbolizer {
    pub fn new(config: SymbolizerConfig) -> Symbolizer {
        Symbolizer {
            providers: config.providers.into(),
            prefetcher: None,
            in_background: true,
            slots: HashMap::default(),
            trails: HashMap::default(),
            missing: 0,
            missing_bytes: 0,
        }
    }

    /// Whether [`Self::prefetch`] starts background searches (by default it
    /// does); when not, each module is searched when first opened.
    pub fn search_in_background(&mut self, yes: bool) {
        self.in_background = yes;
    }

    pub fn open(&mut self, key: &ModuleKey) -> Opened<'_> {
        self.open_with(&key.build_id, || key.clone())
    }

    /// [`Self::open`], making the key only when `id` was not asked for
    /// before (the filter asks for every element; keys own strings).
    pub fn open_with(&mut self, id: &BuildId, key: impl FnOnce() -> ModuleKey) -> Opened<'_> {
        let first_time = !self.slots.contains_key(id);
        if first_time {
            let key = key();
            // A background search (see `prefetch`) counts when it looked
            // with the same image base hint (Breakpad sources use it).
            let located = match self.prefetcher.as_ref().and_then(|p| p.take(id)) {
                Some(l) if l.key.image_base_hint == key.image_base_hint => l,
                _ => locate(&self.providers, key),
            };
            self.store(located);
        }
        let source = match self.slots.get(id) {
            Some(Slot::Found(src)) => Ok(src.as_ref()),
            Some(Slot::Missing) | None => Err(self.trails.get(id).map_or(&[][..], Vec::as_slice)),
        };
        Opened { source, first_time }
    }

    fn store(&mut self, located: Located) {
        let Located { key, source, trail } = located;
        if source.is_none()
            && (self.missing >= MAX_MISSING || self.missing_bytes >= MAX_MISSING_BYTES)
        {
            self.forget_missing();
        }
        if source.is_none() {
            self.missing += 1;
            self.missing_bytes += key.build_id.0.len();
        }
        self.trails.insert(key.build_id.clone(), trail);
        let slot = match source {
            Some(src) => Slot::Found(Box::new(Memo::new(src))),
            None => Slot::Missing,
        };
        self.slots.insert(key.build_id, slot);
    }

    /// Start looking for the module `id` in the background (a few at a
    /// time, see [`super::prefetch`]), unless it was asked for already:
    /// callers say so as soon as a module is known, and [`Self::open`]
    /// takes the result when the module is first needed. `key` is made
    /// only when a search starts.
    pub fn prefetch(&mut self, id: &BuildId, key: impl FnOnce() -> ModuleKey) {
        if !self.in_background || self.slots.contains_key(id) {
            return;
        }
        let providers = &self.providers;
        let prefetcher = self
            .prefetcher
            .get_or_insert_with(|| Prefetcher::new(Arc::clone(providers)));
        if !prefetcher.knows(id) {
            prefetcher.request(key());
        }
    }

    /// Forget every missing build ID and its trail (memory stays bounded
    /// whatever the number of distinct missing modules).
    fn forget_missing(&mut self) {
        let slots = &mut self.slots;
        self.trails
            .retain(|id, _| matches!(slots.get(id), Some(Slot::Found(_))));
        slots.retain(|_, slot| matches!(slot, Slot::Found(_)));
        self.missing = 0;
        self.missing_bytes = 0;
    }

    /// Whether `id` was asked for already (its source is open, or known
    /// missing).
    pub fn was_asked(&self, id: &BuildId) -> bool {
        self.slots.contains_key(id)
    }

    /// Every place tried for `id` (for `--explain`), if it was asked for.
    pub fn trail(&self, id: &BuildId) -> Option<&[Attempt]> {
        self.trails.get(id).map(Vec::as_slice)
    }
}
