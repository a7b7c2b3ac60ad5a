//! Values a renderer derives from a shared answer (demangled names,
//! rendered frames), made once per answer: logs repeat their frames, and
//! demangling costs more than printing.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::symbols::CodeInfo;

/// Answers kept at most; the table is refilled when full.
pub(crate) const MAX_KEPT: usize = 1 << 14;

/// Keyed by the address of the shared answer; the kept `Arc` keeps that
/// address from being reused while the entry lives.
pub(crate) struct PerAnswer<V> {
    map: FxHashMap<usize, (Arc<CodeInfo>, V)>,
}

impl<V> Default for PerAnswer<V> {
    fn default() -> Self {
        PerAnswer {
            map: FxHashMap::default(),
        }
    }
}

impl<V> PerAnswer<V> {
    /// The value for `info`, made by `make` the first time.
    pub(crate) fn get_or_make(
        &mut self,
        info: &Arc<CodeInfo>,
        make: impl FnOnce(&CodeInfo) -> V,
    ) -> &V {
        let key = Arc::as_ptr(info) as usize;
        if self.map.len() >= MAX_KEPT && !self.map.contains_key(&key) {
            self.map.clear();
        }
        &self
            .map
            .entry(key)
            .or_insert_with(|| (Arc::clone(info), make(info)))
            .1
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}
