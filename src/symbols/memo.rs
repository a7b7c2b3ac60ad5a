//! Remembered answers: real logs repeat the same frames over and over
//! (every report of a crash loop, every `bt` of a hot path), and a DWARF
//! lookup with inline frames costs far more than a hash probe.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::sync::Arc;

use super::{CodeInfo, CodeWant, DataInfo, DataWant, Miss, SourceWarning, SymbolSource};

/// Answers kept per module before the table is dropped and refilled, so a
/// log of endless distinct addresses cannot grow memory without bound.
const MAX_ENTRIES: usize = 1 << 14;

/// A [`SymbolSource`] that remembers its inner source's answers, and hands
/// them out shared: a remembered answer costs a hash probe and a reference
/// count, not a copy of every frame's strings. Answers are remembered per
/// address and what was asked ([`CodeWant`], [`DataWant`]): answers to
/// different questions never stand in for each other.
pub struct Memo {
    /// Shared, so that a lookup can be left to another thread
    /// ([`Memo::deferred`]).
    inner: Arc<dyn SymbolSource>,
    code: RefCell<HashMap<(u64, CodeWant), Kept<CodeInfo>>>,
    data: RefCell<HashMap<(u64, DataWant), Kept<DataInfo>>>,
}

impl Memo {
    pub fn new(inner: Box<dyn SymbolSource>) -> Memo {
        Memo {
            inner: Arc::from(inner),
            code: RefCell::default(),
            data: RefCell::default(),
        }
    }
}

/// An answer as the table keeps it: two words, where a [`Miss`] inline
/// would make every entry as large as its largest variant.
pub type Kept<T> = Result<Arc<T>, Box<Miss>>;

/// `ask` of `source`, unless a file of the source was truncated before or
/// while it ran (then the answer may come from zeros).
fn checked<T>(source: &dyn SymbolSource, ask: impl FnOnce() -> Result<T, Miss>) -> Result<T, Miss> {
    // Asked only once some mapping has faulted: a source may have many
    // files to look at.
    let truncated = || {
        crate::base::mapped::any_fault()
            .then(|| source.truncated())
            .flatten()
            .map(|path| Miss::Unreadable {
                path,
                reason: crate::base::mapped::TRUNCATED.to_string(),
            })
    };
    if let Some(miss) = truncated() {
        return Err(miss);
    }
    let answer = ask();
    match truncated() {
        Some(miss) => Err(miss),
        None => answer,
    }
}

/// A code lookup left for later (see [`Memo::deferred`]): the filter's
/// front thread leaves some to the thread that prints (see
/// [`crate::pipeline`]).
#[derive(Clone)]
pub struct Deferred {
    source: Arc<dyn SymbolSource>,
    addr: u64,
    want: CodeWant,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Deferred({:#x})", self.addr)
    }
}

impl Deferred {
    /// The answer, from the source.
    pub fn lookup(&self) -> Result<Arc<CodeInfo>, Miss> {
        checked(&*self.source, || {
            self.source.lookup_code(self.addr, self.want).map(Arc::new)
        })
    }

    /// What tells this question from any other: the source, the address
    /// and the want.
    pub fn key(&self) -> (usize, u64, CodeWant) {
        (
            Arc::as_ptr(&self.source).cast::<()>() as usize,
            self.addr,
            self.want,
        )
    }
}

/// The remembered answer for `key` (an address and what was asked), else
/// `compute`'s, remembered (a full table is emptied first).
fn remembered<K: std::hash::Hash + Eq, T>(
    table: &RefCell<HashMap<K, Kept<T>>>,
    key: K,
    compute: impl FnOnce() -> Result<Arc<T>, Miss>,
) -> Result<Arc<T>, Miss> {
    if let Some(hit) = table.borrow().get(&key) {
        return recall(hit);
    }
    let answer = compute();
    crate::base::insert_bounded(&mut table.borrow_mut(), MAX_ENTRIES, key, keep(&answer));
    answer
}

/// The answer `kept` holds: shared, or its miss cloned (the miss, not its
/// box: no allocation for most).
pub fn recall<T>(kept: &Kept<T>) -> Result<Arc<T>, Miss> {
    match kept {
        Ok(answer) => Ok(Arc::clone(answer)),
        Err(miss) => Err(Miss::clone(miss)),
    }
}

/// `answer` as a table keeps it.
pub fn keep<T>(answer: &Result<Arc<T>, Miss>) -> Kept<T> {
    answer.clone().map_err(Box::new)
}

/// The same questions as [`SymbolSource`], answered from memory when asked
/// before.
impl Memo {
    /// The source itself, for callers that ask each address once.
    pub fn inner(&self) -> &dyn SymbolSource {
        self.inner.as_ref()
    }

    pub fn origin(&self) -> String {
        self.inner.origin()
    }

    /// See [`SymbolSource::image`].
    pub fn image(&self) -> Option<std::path::PathBuf> {
        self.inner.image()
    }

    pub fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<Arc<CodeInfo>, Miss> {
        remembered(&self.code, (addr, want), || {
            checked(&*self.inner, || {
                self.inner.lookup_code(addr, want).map(Arc::new)
            })
        })
    }

    /// The remembered answer for code address `addr` asked with `want`,
    /// if there is one (the source is not asked).
    pub fn remembered_code(
        &self,
        addr: u64,
        want: CodeWant,
    ) -> Option<Result<Arc<CodeInfo>, Miss>> {
        self.code.borrow().get(&(addr, want)).map(recall)
    }

    /// The lookup of code address `addr` with `want`, to be made later,
    /// on any thread (by [`Deferred::lookup`]); its answer is not
    /// remembered here.
    pub fn deferred(&self, addr: u64, want: CodeWant) -> Deferred {
        Deferred {
            source: Arc::clone(&self.inner),
            addr,
            want,
        }
    }

    pub fn lookup_data(&self, addr: u64, want: DataWant) -> Result<Arc<DataInfo>, Miss> {
        remembered(&self.data, (addr, want), || {
            checked(&*self.inner, || self.inner.lookup_data(addr, want)).map(Arc::new)
        })
    }

    pub fn return_address_step(&self) -> u64 {
        self.inner.return_address_step()
    }

    pub fn warnings(&self) -> Vec<SourceWarning> {
        self.inner.warnings()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::Frame;

    struct Counting(std::sync::atomic::AtomicU32);
    impl SymbolSource for Counting {
        fn origin(&self) -> String {
            "counting".into()
        }
        fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<CodeInfo, Miss> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if addr == 0 {
                return Err(Miss::NoInfo);
            }
            Ok(CodeInfo {
                frames: smallvec::smallvec![Frame {
                    function: Some(format!("f{addr}").into()),
                    column: u32::from(want.line0_columns),
                    ..Frame::default()
                }],
                symbol: None,
                ..CodeInfo::default()
            })
        }
        fn lookup_data(&self, addr: u64, want: DataWant) -> Result<DataInfo, Miss> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(DataInfo {
                symbol: None,
                decl_file: want.declaration.then(|| "decl.c".into()),
                decl_line: addr as u32,
            })
        }
    }

    const LINE0: CodeWant = CodeWant {
        line0_columns: true,
        symbol_when_named: true,
        claims: false,
    };

    #[test]
    fn answers_are_computed_once_and_stay_the_same() {
        let memo = Memo::new(Box::new(Counting(Default::default())));
        let first = memo.lookup_code(7, LINE0);
        assert_eq!(memo.lookup_code(7, LINE0), first);
        // The same answer, shared rather than copied.
        assert!(Arc::ptr_eq(
            memo.lookup_code(7, LINE0).as_ref().unwrap(),
            first.as_ref().unwrap()
        ));
        assert_eq!(memo.lookup_code(0, LINE0), Err(Miss::NoInfo));
        assert_eq!(memo.lookup_code(0, LINE0), Err(Miss::NoInfo));
        assert_eq!(memo.code.borrow().len(), 2);
        assert_eq!(
            first.map(|c| c.frames[0].function.clone()),
            Ok(Some("f7".into()))
        );
    }

    #[test]
    fn the_table_is_bounded() {
        let memo = Memo::new(Box::new(Counting(Default::default())));
        for a in 1..=(MAX_ENTRIES as u64 + 10) {
            let _ = memo.lookup_code(a, LINE0);
        }
        assert!(memo.code.borrow().len() <= MAX_ENTRIES);
    }

    #[test]
    fn answers_to_different_wants_are_kept_apart() {
        let memo = Memo::new(Box::new(Counting(Default::default())));
        let column = |want| memo.lookup_code(5, want).map(|c| c.frames[0].column);
        let without = CodeWant {
            line0_columns: false,
            ..LINE0
        };
        assert_eq!(column(LINE0), Ok(1));
        assert_eq!(column(without), Ok(0));
        // Both remembered, neither standing in for the other.
        assert_eq!(column(LINE0), Ok(1));
        assert_eq!(column(without), Ok(0));
        assert_eq!(memo.code.borrow().len(), 2);

        let decl = |declaration| {
            memo.lookup_data(5, DataWant { declaration })
                .map(|d| d.decl_file.clone())
        };
        assert_eq!(decl(true), Ok(Some("decl.c".into())));
        assert_eq!(decl(false), Ok(None));
        assert_eq!(decl(true), Ok(Some("decl.c".into())));
        assert_eq!(decl(false), Ok(None));
        assert_eq!(memo.data.borrow().len(), 2);
        // Asked again, each is the remembered answer itself.
        let same = |a: Result<Arc<CodeInfo>, Miss>, b: Result<Arc<CodeInfo>, Miss>| {
            Arc::ptr_eq(&a.unwrap(), &b.unwrap())
        };
        assert!(same(memo.lookup_code(5, LINE0), memo.lookup_code(5, LINE0)));
        assert!(!same(
            memo.lookup_code(5, LINE0),
            memo.lookup_code(5, without)
        ));
    }
}
