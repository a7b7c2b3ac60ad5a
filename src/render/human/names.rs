//! Module names in the human format: shown by their base name after
//! `+0x` offsets when no other module declared has the same one.

use super::Human;
use crate::context::Module;

/// Who uses a module base name.
pub(super) enum BaseName {
    /// Modules of this one full name (the IDs it was declared with).
    One(Vec<u8>, Vec<u64>),
    /// Modules of different full names: all shown in full.
    Shared,
}

/// Most module base names remembered (more are shown in full).
pub(super) const SHORT_NAMES_MAX: usize = 1 << 16;

/// The last component of a module name (`/lib/libc.so.6` -> `libc.so.6`).
pub(super) fn base_name(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == b'/' || b == b'\\') {
        Some(i) => &name[i + 1..],
        None => name,
    }
}

impl Human {
    /// Remember a declared module's base name (see `short_names`).
    pub(super) fn learn_name(&mut self, m: &Module) {
        let base = base_name(&m.name);
        if self.opts.full_paths || base.is_empty() || base.len() == m.name.len() {
            return;
        }
        let room = self.short_names.len() < SHORT_NAMES_MAX;
        let short = match self.short_names.get_mut(base) {
            Some(BaseName::One(full, ids)) if *full == m.name => {
                ids.push(m.id);
                true
            }
            Some(entry @ BaseName::One(..)) => {
                // A second full name: the first one's modules go back to
                // full names (once).
                if let BaseName::One(_, ids) = std::mem::replace(entry, BaseName::Shared) {
                    for id in ids {
                        if let Ok(i) = self.short_ids.binary_search(&id) {
                            self.short_ids.remove(i);
                        }
                    }
                }
                false
            }
            Some(BaseName::Shared) => false,
            None if room => {
                self.short_names
                    .insert(base.to_vec(), BaseName::One(m.name.clone(), vec![m.id]));
                true
            }
            None => false,
        };
        if short && let Err(i) = self.short_ids.binary_search(&m.id) {
            self.short_ids.insert(i, m.id);
        }
    }
}
