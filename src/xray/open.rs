//! A thread's open (entered, not yet exited) frames.
//!
//! Exits are matched to the innermost open frame of their function. A count
//! of open frames per function makes "is it open at all?" O(1), so a hostile
//! trace of a deep stack followed by exits that match nothing costs linear
//! time, not a scan of the whole stack per exit; when the function is open,
//! the scan stops at it and every frame passed is popped (amortized O(1)).

use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct OpenStack<T> {
    frames: Vec<(u32, T)>,
    counts: FxHashMap<u32, u32>,
}

impl<T> Default for OpenStack<T> {
    fn default() -> Self {
        OpenStack {
            frames: Vec::new(),
            counts: FxHashMap::default(),
        }
    }
}

impl<T> OpenStack<T> {
    pub fn push(&mut self, func: u32, value: T) {
        *self.counts.entry(func).or_insert(0) += 1;
        self.frames.push((func, value));
    }

    pub fn pop(&mut self) -> Option<(u32, T)> {
        let (func, value) = self.frames.pop()?;
        if let Some(c) = self.counts.get_mut(&func) {
            *c -= 1;
            if *c == 0 {
                self.counts.remove(&func);
            }
        }
        Some((func, value))
    }

    /// Index of the innermost open frame of `func`.
    pub fn find(&self, func: u32) -> Option<usize> {
        if !self.counts.contains_key(&func) {
            return None;
        }
        self.frames.iter().rposition(|(f, _)| *f == func)
    }

    pub fn last(&self) -> Option<&T> {
        self.frames.last().map(|(_, v)| v)
    }

    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.frames.last_mut().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    pub fn clear(&mut self) {
        self.frames.clear();
        self.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::OpenStack;

    #[test]
    fn counts_follow_pushes_and_pops() {
        let mut s = OpenStack::default();
        s.push(1, 'a');
        s.push(2, 'b');
        s.push(1, 'c');
        assert_eq!(s.find(1), Some(2));
        assert_eq!(s.find(3), None);
        assert_eq!(s.pop(), Some((1, 'c')));
        assert_eq!(s.find(1), Some(0));
        s.pop();
        s.pop();
        assert_eq!(s.find(1), None);
        assert!(s.is_empty());
    }
}
