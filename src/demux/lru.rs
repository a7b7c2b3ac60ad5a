//! A bounded table of values by key, the least recently used one evicted
//! when it is full.
//!
//! Keys come from the log, so a hostile log can send a new one on every
//! line: the table holds at most `capacity` values, and remembers at most
//! [`REMEMBERED_PER_SLOT`] times that many evicted keys (as hashes, to say
//! when one comes back), oldest forgotten first. The hasher is std's
//! randomly keyed one: a log cannot aim for collisions.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;

/// Evicted keys remembered, per slot of capacity.
pub const REMEMBERED_PER_SLOT: usize = 4;

const NONE: u32 = u32::MAX;

struct Slot<T> {
    key: Box<[u8]>,
    value: T,
    /// Towards the most recently used.
    newer: u32,
    /// Towards the least recently used.
    older: u32,
}

/// What [`Table::touch`] did.
pub struct Touched<T> {
    /// The slot of the key.
    pub slot: usize,
    /// The key was not in the table (its value was just made).
    pub new: bool,
    /// The key is new, and was evicted before (as far as remembered).
    pub returned: bool,
    /// What was evicted to make room.
    pub evicted: Option<(Box<[u8]>, T)>,
}

pub struct Table<T> {
    capacity: usize,
    index: HashMap<Box<[u8]>, u32>,
    slots: Vec<Slot<T>>,
    newest: u32,
    oldest: u32,
    hasher: RandomState,
    evicted: HashSet<u64>,
    evicted_order: VecDeque<u64>,
}

impl<T> Table<T> {
    /// A table of at most `capacity` (at least 1) values.
    pub fn new(capacity: usize) -> Table<T> {
        Table {
            capacity: capacity.clamp(1, NONE as usize - 1),
            index: HashMap::new(),
            slots: Vec::new(),
            newest: NONE,
            oldest: NONE,
            hasher: RandomState::new(),
            evicted: HashSet::new(),
            evicted_order: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn value(&self, slot: usize) -> &T {
        &self.slots[slot].value
    }

    pub fn value_mut(&mut self, slot: usize) -> &mut T {
        &mut self.slots[slot].value
    }

    pub fn key(&self, slot: usize) -> &[u8] {
        &self.slots[slot].key
    }

    /// Make `key` the most recently used, inserting `make()` for it when
    /// it is not in the table (evicting the least recently used one if the
    /// table is full).
    pub fn touch(&mut self, key: &[u8], make: impl FnOnce() -> T) -> Touched<T> {
        if let Some(&i) = self.index.get(key) {
            self.unlink(i);
            self.push_newest(i);
            return Touched {
                slot: i as usize,
                new: false,
                returned: false,
                evicted: None,
            };
        }
        let h = self.hasher.hash_one(key);
        let returned = self.evicted.remove(&h);
        let boxed: Box<[u8]> = key.into();
        let value = make();
        if self.slots.len() < self.capacity {
            let i = self.slots.len() as u32;
            self.slots.push(Slot {
                key: boxed.clone(),
                value,
                newer: NONE,
                older: NONE,
            });
            self.index.insert(boxed, i);
            self.push_newest(i);
            return Touched {
                slot: i as usize,
                new: true,
                returned,
                evicted: None,
            };
        }
        // Reuse the least recently used slot.
        let i = self.oldest;
        self.unlink(i);
        let slot = &mut self.slots[i as usize];
        let old_key = std::mem::replace(&mut slot.key, boxed.clone());
        let old_value = std::mem::replace(&mut slot.value, value);
        self.index.remove(&old_key);
        self.index.insert(boxed, i);
        self.push_newest(i);
        Touched {
            slot: i as usize,
            new: true,
            returned,
            evicted: Some((old_key, old_value)),
        }
    }

    /// Remember that `key` was evicted, so that its return is reported.
    pub fn remember_evicted(&mut self, key: &[u8]) {
        let h = self.hasher.hash_one(key);
        if self.evicted.insert(h) {
            self.evicted_order.push_back(h);
        }
        while self.evicted_order.len() > self.capacity * REMEMBERED_PER_SLOT {
            if let Some(old) = self.evicted_order.pop_front() {
                self.evicted.remove(&old);
            }
        }
    }

    /// Slots from the least to the most recently used.
    pub fn oldest_first(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.slots.len());
        let mut i = self.oldest;
        while i != NONE {
            order.push(i as usize);
            i = self.slots[i as usize].newer;
        }
        order
    }

    fn unlink(&mut self, i: u32) {
        let (newer, older) = {
            let s = &self.slots[i as usize];
            (s.newer, s.older)
        };
        match newer {
            NONE => self.newest = older,
            n => self.slots[n as usize].older = older,
        }
        match older {
            NONE => self.oldest = newer,
            o => self.slots[o as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, i: u32) {
        let old_newest = self.newest;
        {
            let s = &mut self.slots[i as usize];
            s.older = old_newest;
            s.newer = NONE;
        }
        match old_newest {
            NONE => self.oldest = i,
            n => self.slots[n as usize].newer = i,
        }
        self.newest = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<T>(t: &Table<T>) -> Vec<String> {
        t.oldest_first()
            .into_iter()
            .map(|s| String::from_utf8_lossy(t.key(s)).into_owned())
            .collect()
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut t = Table::new(2);
        assert!(t.touch(b"a", || 1).new);
        assert!(t.touch(b"b", || 2).new);
        let a = t.touch(b"a", || 9);
        assert!(!a.new && a.evicted.is_none());
        assert_eq!(*t.value(a.slot), 1);
        let c = t.touch(b"c", || 3);
        let (k, v) = c.evicted.unwrap();
        assert_eq!((&*k, v), (&b"b"[..], 2));
        assert_eq!(keys(&t), ["a", "c"]);
        assert_eq!(t.len(), 2);
        t.remember_evicted(b"b");
        let b = t.touch(b"b", || 4);
        assert!(b.new && b.returned);
        assert_eq!(b.evicted.unwrap().1, 1);
        // Reported once: forgotten on its return.
        assert!(t.evicted.is_empty());
        // `a` was evicted without being remembered.
        let a = t.touch(b"a", || 5);
        assert!(a.new && !a.returned);
    }

    #[test]
    fn remembers_a_bounded_number_of_evictions() {
        let mut t: Table<()> = Table::new(1);
        for i in 0..100u32 {
            t.remember_evicted(&i.to_le_bytes());
        }
        assert_eq!(t.evicted.len(), REMEMBERED_PER_SLOT);
        assert!(t.touch(&99u32.to_le_bytes(), || ()).returned);
        assert!(!t.touch(&0u32.to_le_bytes(), || ()).returned);
    }

    #[test]
    fn order_survives_many_touches() {
        let mut t = Table::new(3);
        for k in [b"a", b"b", b"c", b"b", b"a", b"d", b"b"] {
            t.touch(k, || ());
        }
        assert_eq!(keys(&t), ["a", "d", "b"]);
    }
}
