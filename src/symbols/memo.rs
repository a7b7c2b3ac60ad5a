//! Remembered answers: real logs repeat the same frames over and over
//! (every report of a crash loop, every `bt` of a hot path), and a DWARF
//! lookup with inline frames costs far more than a hash probe.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::sync::Arc;

use super::{BuildId, CodeInfo, CodeWant, DataInfo, DataWant, Miss, SourceWarning, SymbolSource};

/// Answers kept per module before the table is dropped and refilled, so a
/// log of endless distinct addresses cannot grow memory without bound.
const MAX_ENTRIES: usize = 1 << 14;

/// A [`SymbolSource`] that remembers its inner source's answers, and hands
/// them out shared: a remembered answer costs a hash probe and a reference
/// count, not a copy of every frame's strings. Answers are remembered per
/// address and what was asked ([`CodeWant`], [`DataWant`]): answers to
/// different questions never stand in for each other.
pub struct Memo {
    inner: Box<dyn SymbolSource>,
    code: RefCell<CodeTable>,
    data: RefCell<HashMap<(u64, DataWant), Kept<DataInfo>>>,
    /// Where else answers may come from, and the number it knows this
    /// module by.
    supplier: Option<(u64, Arc<dyn AnswerSupplier>)>,
}

/// Somewhere besides a module's own source that answers may come from (the
/// filter's read-ahead, say: another thread looking up the same log, see
/// [`crate::readahead`]). A [`Memo`] given one asks it for every answer it
/// does not remember, instead of asking its source; the supplier decides
/// whether that answer is its own, or is computed here.
pub trait AnswerSupplier: Send + Sync {
    /// The caller is now at `line` of its input (counted over all its
    /// inputs).
    fn at_line(&self, line: u64);
    /// The number module `id` goes by in [`AnswerSupplier::code`], the same
    /// for every caller of this supplier.
    fn module(&self, id: &BuildId) -> u64;
    /// The answer for code address `addr` of module number `module` asked
    /// with `want`:
    /// the supplier's, or `compute`'s; `None` when the caller is to go
    /// without it (the memo then answers [`Miss::NoInfo`] and does not
    /// remember it).
    fn code(
        &self,
        module: u64,
        addr: u64,
        want: CodeWant,
        compute: &dyn Fn() -> Result<Arc<CodeInfo>, Miss>,
    ) -> Option<Result<Arc<CodeInfo>, Miss>>;
    /// The answer for this very question when the supplier has one at hand
    /// (handed over for the caller's current line): the memo then neither
    /// looks in nor fills its own table.
    fn ready(&self, _module: u64, _addr: u64, _want: CodeWant) -> Option<Kept<CodeInfo>> {
        None
    }
    /// The caller found `answer` in its own table: a supplier handing
    /// answers to another side hands this one over too.
    fn recalled(&self, _module: u64, _addr: u64, _want: CodeWant, _answer: &Kept<CodeInfo>) {}
    /// Whether data addresses are looked up here; when not, the caller goes
    /// without them (as `code` giving `None`).
    fn computes_data(&self) -> bool;
    /// Drop the code answers a full memo forgets, on whichever thread that
    /// is cheapest: with glibc's malloc, freeing another thread's blocks
    /// takes that thread's arena lock, which it holds for each of its own
    /// allocations, so thousands of frees at once queue on it.
    fn retire(&self, forgotten: Forgotten) {
        drop(forgotten);
    }
}

impl Memo {
    pub fn new(inner: Box<dyn SymbolSource>) -> Memo {
        Memo {
            inner,
            code: RefCell::default(),
            data: RefCell::default(),
            supplier: None,
        }
    }

    /// Ask `supplier` for the answers of module `id` before its source.
    pub fn supplied_by(&mut self, id: BuildId, supplier: Arc<dyn AnswerSupplier>) {
        self.supplier = Some((supplier.module(&id), supplier));
    }
}

/// A memo's code answers, by address and what was asked.
pub type CodeTable = HashMap<(u64, CodeWant), Kept<CodeInfo>>;

/// What a memo forgot, for an [`AnswerSupplier`] to drop.
pub type Forgotten = Box<CodeTable>;

/// An answer as the table keeps it: two words, where a [`Miss`] inline
/// would make every entry as large as its largest variant.
pub type Kept<T> = Result<Arc<T>, Box<Miss>>;

/// The remembered answer for `key` (an address and what was asked), else
/// `compute`'s, remembered unless `compute` gives `None` (an address the
/// [`AnswerSupplier`] left out). A full table is emptied first, by `empty`;
/// a remembered answer is shown to `recalled` first.
fn remembered<K: std::hash::Hash + Eq, T>(
    table: &RefCell<HashMap<K, Kept<T>>>,
    key: K,
    compute: impl FnOnce() -> Option<Result<Arc<T>, Miss>>,
    empty: impl FnOnce(&mut HashMap<K, Kept<T>>),
    recalled: impl FnOnce(&Kept<T>),
) -> Result<Arc<T>, Miss> {
    if let Some(hit) = table.borrow().get(&key) {
        recalled(hit);
        // The miss itself cloned, not its box: no allocation for most.
        return match hit {
            Ok(answer) => Ok(Arc::clone(answer)),
            Err(miss) => Err(Miss::clone(miss)),
        };
    }
    let Some(answer) = compute() else {
        return Err(Miss::NoInfo);
    };
    let kept = answer.clone().map_err(Box::new);
    crate::base::insert_bounded_emptying(&mut table.borrow_mut(), MAX_ENTRIES, key, kept, empty);
    answer
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
        if let Some((module, supplier)) = &self.supplier
            && let Some(answer) = supplier.ready(*module, addr, want)
        {
            return answer.map_err(|miss| *miss);
        }
        remembered(
            &self.code,
            (addr, want),
            || {
                let compute = || self.checked(|| self.inner.lookup_code(addr, want).map(Arc::new));
                match &self.supplier {
                    None => Some(compute()),
                    Some((module, supplier)) => supplier.code(*module, addr, want, &compute),
                }
            },
            |full| self.retire(full),
            |hit| {
                if let Some((module, supplier)) = &self.supplier {
                    supplier.recalled(*module, addr, want, hit);
                }
            },
        )
    }

    /// [`SymbolSource::truncated`], asked only once some mapping has
    /// faulted: it is asked twice per lookup, and a source may have many
    /// files to look at.
    fn truncated(&self) -> Option<String> {
        crate::base::mapped::any_fault()
            .then(|| self.inner.truncated())
            .flatten()
    }

    /// `ask`, unless a file of the source was truncated before or while it
    /// ran (then the answer may come from zeros).
    fn checked<T>(&self, ask: impl FnOnce() -> Result<T, Miss>) -> Result<T, Miss> {
        let truncated = |path| Miss::Unreadable {
            path,
            reason: crate::base::mapped::TRUNCATED.to_string(),
        };
        if let Some(path) = self.truncated() {
            return Err(truncated(path));
        }
        let answer = ask();
        match self.truncated() {
            Some(path) => Err(truncated(path)),
            None => answer,
        }
    }

    pub fn lookup_data(&self, addr: u64, want: DataWant) -> Result<Arc<DataInfo>, Miss> {
        remembered(
            &self.data,
            (addr, want),
            || {
                if self
                    .supplier
                    .as_ref()
                    .is_some_and(|(_, s)| !s.computes_data())
                {
                    return None;
                }
                let answer = self.checked(|| self.inner.lookup_data(addr, want));
                Some(answer.map(Arc::new))
            },
            // Data answers are made on the thread that asks: freed here.
            HashMap::clear,
            |_| {},
        )
    }

    /// Empty the full code table: its answers go to the supplier to drop
    /// (see [`AnswerSupplier::retire`]), the table keeps its capacity.
    fn retire(&self, full: &mut CodeTable) {
        let Some((_, supplier)) = &self.supplier else {
            return full.clear();
        };
        let empty = HashMap::with_capacity_and_hasher(full.capacity(), Default::default());
        supplier.retire(Box::new(std::mem::replace(full, empty)));
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
    use std::cell::Cell;

    struct Counting(Cell<u32>);
    impl SymbolSource for Counting {
        fn origin(&self) -> String {
            "counting".into()
        }
        fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<CodeInfo, Miss> {
            self.0.set(self.0.get() + 1);
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
            self.0.set(self.0.get() + 1);
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
    };

    #[test]
    fn answers_are_computed_once_and_stay_the_same() {
        let memo = Memo::new(Box::new(Counting(Cell::new(0))));
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
        let memo = Memo::new(Box::new(Counting(Cell::new(0))));
        for a in 1..=(MAX_ENTRIES as u64 + 10) {
            let _ = memo.lookup_code(a, LINE0);
        }
        assert!(memo.code.borrow().len() <= MAX_ENTRIES);
    }

    /// Supplies nothing of its own; counts the tables given to `retire`
    /// and the answers in them.
    #[derive(Default)]
    struct Retiring(std::sync::Mutex<Vec<usize>>);
    impl AnswerSupplier for Retiring {
        fn at_line(&self, _: u64) {}
        fn module(&self, _: &BuildId) -> u64 {
            0
        }
        fn code(
            &self,
            _: u64,
            _: u64,
            _: CodeWant,
            compute: &dyn Fn() -> Result<Arc<CodeInfo>, Miss>,
        ) -> Option<Result<Arc<CodeInfo>, Miss>> {
            Some(compute())
        }
        fn computes_data(&self) -> bool {
            true
        }
        fn retire(&self, forgotten: Forgotten) {
            self.0.lock().unwrap().push(forgotten.len());
        }
    }

    #[test]
    fn a_full_table_goes_to_the_supplier_to_drop() {
        let supplier = Arc::new(Retiring::default());
        let mut memo = Memo::new(Box::new(Counting(Cell::new(0))));
        memo.supplied_by(BuildId(vec![1]), supplier.clone());
        for a in 1..=(2 * MAX_ENTRIES as u64 + 1) {
            let _ = memo.lookup_code(a, LINE0);
        }
        // Twice full: both tables given whole, the third holds one answer.
        assert_eq!(*supplier.0.lock().unwrap(), [MAX_ENTRIES, MAX_ENTRIES]);
        assert_eq!(memo.code.borrow().len(), 1);
        // Forgotten, so computed again.
        let _ = memo.lookup_code(1, LINE0);
        assert_eq!(memo.code.borrow().len(), 2);
    }

    #[test]
    fn answers_to_different_wants_are_kept_apart() {
        let memo = Memo::new(Box::new(Counting(Cell::new(0))));
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
