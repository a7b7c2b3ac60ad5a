//! Values a renderer derives from a shared answer (demangled names,
//! rendered frames), made once per answer: logs repeat their frames, and
//! demangling costs more than printing.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::symbols::CodeInfo;

/// Answers kept at most.
pub(crate) const MAX_KEPT: usize = 1 << 14;

/// Bytes of kept values at most (as [`Weigh`] counts them): rendered
/// answers differ in size by format and program (long demangled names and
/// paths), and a log of endless new addresses would otherwise keep the
/// largest ones by the thousand.
pub(crate) const MAX_BYTES: usize = 12 << 20;

/// Bytes of kept values at most while kept values are seldom asked for
/// again (see [`PerAnswer`]).
pub(crate) const MIN_BYTES: usize = 2 << 20;

/// How often an answer is shown before a value is made for it and kept.
const KEEP_FROM: u8 = crate::symbols::ShownBefore::MAX;

/// What a kept value holds on the heap, roughly, in bytes.
pub(crate) trait Weigh {
    fn weigh(&self) -> usize;
}

impl Weigh for () {
    fn weigh(&self) -> usize {
        0
    }
}

/// An answer as a printer keeps it: its frames, of the printer's own
/// type, with their texts as spans of one buffer (one allocation for all
/// of them, and no shared names to count references to).
pub(crate) struct Spans<F> {
    pub(crate) frames: Arc<[F]>,
    pub(crate) text: Arc<[u8]>,
}

/// Shared, not copied: whatever the frames are.
impl<F> Clone for Spans<F> {
    fn clone(&self) -> Self {
        Spans {
            frames: Arc::clone(&self.frames),
            text: Arc::clone(&self.text),
        }
    }
}

impl<F> Spans<F> {
    pub(crate) fn view(&self) -> SpansView<'_, F> {
        SpansView {
            frames: &self.frames,
            text: &self.text,
        }
    }
}

/// Frames with their texts as spans of one buffer, as a printer reads
/// them: from a kept [`Spans`], or from what it has just [`Made`].
pub(crate) struct SpansView<'a, F> {
    pub(crate) frames: &'a [F],
    pub(crate) text: &'a [u8],
}

impl<'a, F> SpansView<'a, F> {
    /// The text of one span.
    pub(crate) fn span(&self, range: &std::ops::Range<usize>) -> &'a [u8] {
        &self.text[range.clone()]
    }
}

/// A new answer's frames and their texts as a printer makes them, in
/// buffers it keeps from one answer to the next: shown from here the first
/// time the answer is asked for, made into [`Spans`] to keep the second.
pub(crate) struct Made<F> {
    pub(crate) frames: Vec<F>,
    pub(crate) text: Vec<u8>,
}

impl<F> Default for Made<F> {
    fn default() -> Self {
        Made {
            frames: Vec::new(),
            text: Vec::new(),
        }
    }
}

impl<F> Made<F> {
    pub(crate) fn view(&self) -> SpansView<'_, F> {
        SpansView {
            frames: &self.frames,
            text: &self.text,
        }
    }
}

impl<F: Clone> Made<F> {
    /// Made into a value to keep.
    pub(crate) fn kept(&self) -> Spans<F> {
        Spans {
            frames: Arc::from(&self.frames[..]),
            text: Arc::from(&self.text[..]),
        }
    }
}

impl<F> Weigh for Spans<F> {
    fn weigh(&self) -> usize {
        std::mem::size_of_val(&*self.frames) + self.text.len()
    }
}

/// Keyed by the address of the shared answer; the kept `Arc` keeps that
/// address from being reused while the entry lives.
type Table<V> = FxHashMap<usize, (Arc<CodeInfo>, V)>;

/// A value is made and kept from the third time its answer is asked for:
/// a log of new addresses asks for most answers once or twice, and making
/// a value for those only to drop it later, cold, costs more than showing
/// the answer itself (the caller does, the first two times) and making the
/// value of the few asked for more often. How often an answer was asked
/// for is counted in the answer itself ([`crate::symbols::ShownBefore`]):
/// an answer asked for once or twice costs no table probe here, and
/// leaves nothing.
///
/// Kept values are in two generations of at most half of [`MAX_KEPT`] and
/// of the byte bound each (the table's own room aside): values are kept
/// into the young one;
/// when it is full, it becomes the old one and the old one is dropped. A
/// value asked for from the old generation moves back to the young one, so
/// the answers a log keeps naming stay, and the ones made last are all
/// there (not lost to a table emptied when full). The tables keep their
/// room from one generation to the next.
///
/// The byte bound follows what keeping pays: a generation whose values
/// were asked for again less often than made (a log of mostly new
/// addresses) halves it for the next one, down to [`MIN_BYTES`]; one asked
/// for more often doubles it, up to [`MAX_BYTES`].
pub(crate) struct PerAnswer<V> {
    young: Table<V>,
    old: Table<V>,
    /// What the young generation's values weigh.
    young_bytes: usize,
    /// The byte bound of all generations.
    max_bytes: usize,
    /// Values made, and values asked for again, in this generation.
    made: usize,
    reused: usize,
}

impl<V> Default for PerAnswer<V> {
    fn default() -> Self {
        PerAnswer {
            young: FxHashMap::default(),
            old: FxHashMap::default(),
            young_bytes: 0,
            max_bytes: MAX_BYTES,
            made: 0,
            reused: 0,
        }
    }
}

impl<F: Clone> PerAnswer<Spans<F>> {
    /// The kept frames for `info`; else `None`, with `info`'s frames made
    /// by `make` in `made` to show from there: the first two times the
    /// answer is asked for (see [`PerAnswer::kept_or_make`]). The third
    /// time they are made there too, and kept.
    pub(crate) fn kept_or_made(
        &mut self,
        info: &Arc<CodeInfo>,
        made: &mut Made<F>,
        make: impl Fn(&mut Made<F>, &CodeInfo),
    ) -> Option<Spans<F>> {
        let kept = self
            .kept_or_make(info, |info| {
                make(made, info);
                made.kept()
            })
            .cloned();
        if kept.is_none() {
            make(made, info);
        }
        kept
    }
}

impl<V: Weigh> PerAnswer<V> {
    /// The kept value for `info`, or one made by `make` and kept; `None`
    /// the first two times `info` is asked for, when nothing is made: the
    /// caller shows the answer itself.
    pub(crate) fn kept_or_make(
        &mut self,
        info: &Arc<CodeInfo>,
        make: impl FnOnce(&CodeInfo) -> V,
    ) -> Option<&V> {
        // Shown for the first or second time: nothing to look for, nothing
        // to keep.
        if info.shown.mark() < KEEP_FROM {
            return None;
        }
        let key = Arc::as_ptr(info) as usize;
        if self.young.contains_key(&key) {
            self.reused += 1;
        } else if let Some(kept) = self.old.remove(&key) {
            self.keep(key, kept, true);
        } else {
            self.keep(key, (Arc::clone(info), make(info)), false);
        }
        Some(&self.young[&key].1)
    }

    /// Keep `value` in the young generation, under `key`: a value `reused`
    /// from the old generation, or made.
    fn keep(&mut self, key: usize, value: (Arc<CodeInfo>, V), reused: bool) {
        let bytes = value.1.weigh();
        if self.young.len() >= MAX_KEPT / 2 || self.young_bytes + bytes > self.max_bytes / 2 {
            self.next_generation();
        }
        if reused {
            self.reused += 1;
        } else {
            self.made += 1;
        }
        self.young_bytes += bytes;
        self.young.insert(key, value);
    }

    /// The young generation becomes the old one, and the byte bound
    /// follows how often its values were asked for again.
    fn next_generation(&mut self) {
        self.max_bytes = if self.reused < self.made {
            (self.max_bytes / 2).max(MIN_BYTES)
        } else {
            (self.max_bytes * 2).min(MAX_BYTES)
        };
        self.made = 0;
        self.reused = 0;
        std::mem::swap(&mut self.young, &mut self.old);
        self.young.clear();
        // An old generation heavier than the new bound goes at once.
        if self.young_bytes > self.max_bytes / 2 {
            self.old.clear();
        }
        self.young_bytes = 0;
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    #[cfg(test)]
    fn has(&self, info: &Arc<CodeInfo>) -> bool {
        let key = Arc::as_ptr(info) as usize;
        self.young.contains_key(&key) || self.old.contains_key(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` distinct answers.
    fn answers(n: usize) -> Vec<Arc<CodeInfo>> {
        (0..n).map(|_| Arc::new(CodeInfo::default())).collect()
    }

    #[test]
    fn recent_and_repeated_answers_stay() {
        let mut kept = PerAnswer::default();
        let answers = answers(3 * MAX_KEPT);
        let hot = &answers[0];
        let mut made = 0;
        for a in &answers {
            // Asked for three times: made and kept the third time.
            for _ in 0..3 {
                kept.kept_or_make(a, |_| made += 1);
            }
            kept.kept_or_make(hot, |_| made += 1);
            assert!(kept.len() <= MAX_KEPT);
        }
        // Each made once: the hot one never left.
        assert_eq!(made, answers.len());
        // The last half of the bound's worth is all there.
        let recent = &answers[answers.len() - MAX_KEPT / 2 + 1..];
        assert!(recent.iter().all(|a| kept.has(a)));
        assert!(!kept.has(&answers[1]));
    }

    #[test]
    fn answers_asked_for_once_or_twice_are_shown_by_the_caller() {
        let mut kept = PerAnswer::default();
        let answers = answers(3 * MAX_KEPT);
        for a in &answers {
            assert!(
                kept.kept_or_make(a, |_| -> Heavy { unreachable!() })
                    .is_none()
            );
        }
        assert_eq!(kept.len(), 0);
        // Asked for a second time, however long after: shown by the caller
        // again; the third time made, and kept from then on.
        let mut ask = |a, value| kept.kept_or_make(a, |_| Heavy(value)).map(|v| v.0);
        let last = answers.last().unwrap();
        assert_eq!(ask(last, 1), None);
        assert_eq!(ask(last, 2), Some(2));
        assert_eq!(ask(last, 3), Some(2));
        assert_eq!(ask(&answers[0], 4), None);
        assert_eq!(ask(&answers[0], 5), Some(5));
        // A clone of an answer is another answer, not shown yet.
        let copy = Arc::new(CodeInfo::clone(last));
        assert_eq!(ask(&copy, 6), None);
        assert_eq!(ask(&copy, 7), None);
        assert_eq!(ask(&copy, 8), Some(8));
        assert!(kept.has(last) && kept.has(&answers[0]) && kept.has(&copy));
    }

    struct Heavy(usize);
    impl Weigh for Heavy {
        fn weigh(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn heavy_values_are_kept_to_the_byte_bound() {
        let mut kept = PerAnswer::default();
        let heavy = MAX_BYTES / 16;
        let answers = answers(64);
        for a in &answers {
            // Kept from the third time; asked for again after that: the
            // bound stays at its largest.
            for _ in 0..4 {
                kept.kept_or_make(a, |_| Heavy(heavy));
            }
        }
        // Two generations of at most half the bound each.
        assert_eq!(kept.len(), 2 * (MAX_BYTES / 2 / heavy));
        assert!(kept.has(answers.last().unwrap()));
        assert!(!kept.has(&answers[0]));
        // A value larger than half the bound is still kept, alone.
        let huge = Arc::new(CodeInfo::default());
        kept.kept_or_make(&huge, |_| Heavy(MAX_BYTES));
        kept.kept_or_make(&huge, |_| Heavy(MAX_BYTES));
        let value = kept.kept_or_make(&huge, |_| Heavy(MAX_BYTES));
        assert_eq!(value.map(|v| v.0), Some(MAX_BYTES));
        assert!(kept.has(&huge));
    }

    #[test]
    fn the_byte_bound_follows_what_keeping_pays() {
        let mut kept = PerAnswer::default();
        let value = 64 << 10;
        let weight = |k: &PerAnswer<Heavy>| {
            let sum = |t: &Table<Heavy>| t.values().map(|v| v.1.0).sum::<usize>();
            sum(&k.young) + sum(&k.old)
        };
        // Values kept and never asked for again: the bound comes down to
        // the least.
        let once = answers(2048);
        for a in &once {
            for _ in 0..3 {
                kept.kept_or_make(a, |_| Heavy(value));
            }
            assert!(weight(&kept) <= MAX_BYTES);
        }
        assert_eq!(kept.max_bytes, MIN_BYTES);
        assert!(weight(&kept) <= MIN_BYTES);
        // Values asked for again: it goes back up.
        let hot = answers(2048);
        for a in &hot {
            for _ in 0..4 {
                kept.kept_or_make(a, |_| Heavy(value));
            }
        }
        assert_eq!(kept.max_bytes, MAX_BYTES);
        assert!(weight(&kept) > MIN_BYTES);
    }
}
