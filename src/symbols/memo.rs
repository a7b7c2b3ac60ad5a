//! Remembered answers: real logs repeat the same frames over and over
//! (every report of a crash loop, every `bt` of a hot path), and a DWARF
//! lookup with inline frames costs far more than a hash probe.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;

use super::{CodeInfo, DataInfo, Miss, SymbolSource};

/// Answers kept per module before the table is dropped and refilled, so a
/// log of endless distinct addresses cannot grow memory without bound.
const MAX_ENTRIES: usize = 1 << 16;

/// A [`SymbolSource`] that remembers its inner source's answers.
pub struct Memo {
    inner: Box<dyn SymbolSource>,
    code: RefCell<HashMap<u64, Result<CodeInfo, Miss>>>,
    data: RefCell<HashMap<u64, Result<DataInfo, Miss>>>,
}

impl Memo {
    pub fn new(inner: Box<dyn SymbolSource>) -> Memo {
        Memo {
            inner,
            code: RefCell::default(),
            data: RefCell::default(),
        }
    }
}

fn remembered<T: Clone>(
    table: &RefCell<HashMap<u64, Result<T, Miss>>>,
    addr: u64,
    compute: impl FnOnce() -> Result<T, Miss>,
) -> Result<T, Miss> {
    if let Some(hit) = table.borrow().get(&addr) {
        return hit.clone();
    }
    let answer = compute();
    let mut table = table.borrow_mut();
    if table.len() >= MAX_ENTRIES {
        table.clear();
    }
    table.insert(addr, answer.clone());
    answer
}

impl SymbolSource for Memo {
    fn origin(&self) -> String {
        self.inner.origin()
    }

    fn lookup_code(&self, addr: u64) -> Result<CodeInfo, Miss> {
        remembered(&self.code, addr, || self.inner.lookup_code(addr))
    }

    fn lookup_data(&self, addr: u64) -> Result<DataInfo, Miss> {
        remembered(&self.data, addr, || self.inner.lookup_data(addr))
    }

    fn return_address_step(&self) -> u64 {
        self.inner.return_address_step()
    }

    fn warnings(&self) -> Vec<String> {
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
        fn lookup_code(&self, addr: u64) -> Result<CodeInfo, Miss> {
            self.0.set(self.0.get() + 1);
            if addr == 0 {
                return Err(Miss::NoInfo);
            }
            Ok(CodeInfo {
                frames: vec![Frame {
                    function: Some(format!("f{addr}")),
                    ..Frame::default()
                }],
                symbol: None,
            })
        }
        fn lookup_data(&self, _addr: u64) -> Result<DataInfo, Miss> {
            Err(Miss::NoInfo)
        }
    }

    #[test]
    fn answers_are_computed_once_and_stay_the_same() {
        let memo = Memo::new(Box::new(Counting(Cell::new(0))));
        let first = memo.lookup_code(7);
        assert_eq!(memo.lookup_code(7), first);
        assert_eq!(memo.lookup_code(0), Err(Miss::NoInfo));
        assert_eq!(memo.lookup_code(0), Err(Miss::NoInfo));
        assert_eq!(memo.code.borrow().len(), 2);
        assert_eq!(
            first.map(|c| c.frames[0].function.clone()),
            Ok(Some("f7".to_string()))
        );
    }

    #[test]
    fn the_table_is_bounded() {
        let memo = Memo::new(Box::new(Counting(Cell::new(0))));
        for a in 1..=(MAX_ENTRIES as u64 + 10) {
            let _ = memo.lookup_code(a);
        }
        assert!(memo.code.borrow().len() <= MAX_ENTRIES);
    }
}
