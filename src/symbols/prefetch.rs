//! Locating modules in the background: as soon as a log says which
//! modules a process has, their sources are looked for (and downloaded,
//! where a debuginfod server has to be asked) by a few worker threads, so
//! that the waits for several servers overlap each other and the reading
//! of the log. The front takes a result when the module is first needed,
//! waiting only for that module; a module whose search has not started by
//! then is searched by the caller itself.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rustc_hash::FxHashMap as HashMap;

use super::{Attempt, BuildId, Locator, Miss, ModuleKey, Note, Provider, SymbolSource};

/// Searches running at once: enough to overlap a few slow servers, few
/// enough not to flood one.
pub const WORKERS: usize = 4;

/// Searches waiting to start, at most; later requests are left to the
/// caller (a log declaring thousands of modules gets no thousands of
/// queued searches).
const MAX_QUEUED: usize = 256;

/// What a search found: the source (if any), every place tried, and the
/// key it searched with.
pub struct Located {
    pub key: ModuleKey,
    pub source: Option<Box<dyn SymbolSource>>,
    pub trail: Vec<Attempt>,
}

/// Ask `providers` in order for `key`. A source with only dynamic symbols
/// (a stripped library at the path the log names) serves when no later
/// place has more.
pub fn locate(providers: &[Box<dyn Provider>], key: ModuleKey) -> Located {
    let mut trail = Vec::new();
    let mut fallback = None;
    for p in providers {
        if let Some(src) = p.find(&key, &mut trail) {
            if !src.only_dynamic_symbols() {
                return Located {
                    key,
                    source: Some(src),
                    trail,
                };
            }
            if fallback.is_none() {
                if let Some(a) = trail.iter_mut().rev().find(|a| a.failure.is_none()) {
                    a.note = Some(Note::DynamicSymbolsOnly);
                }
                fallback = Some(src);
            }
        }
    }
    Located {
        key,
        source: fallback,
        trail,
    }
}

enum Job {
    Queued,
    Running,
    Done(Located),
}

#[derive(Default)]
struct State {
    queue: VecDeque<ModuleKey>,
    jobs: HashMap<BuildId, Job>,
    workers: usize,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::base::lock(&self.state)
    }
}

/// The background searches of one [`super::Symbolizer`].
pub struct Prefetcher {
    providers: Arc<[Box<dyn Provider>]>,
    shared: Arc<Shared>,
}

impl Prefetcher {
    pub fn new(providers: Arc<[Box<dyn Provider>]>) -> Prefetcher {
        Prefetcher {
            providers,
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                done: Condvar::new(),
            }),
        }
    }

    /// Start looking for `key` unless a search for its build ID exists.
    pub fn request(&self, key: ModuleKey) {
        let mut st = self.shared.lock();
        if st.closed || st.jobs.contains_key(&key.build_id) || st.queue.len() >= MAX_QUEUED {
            return;
        }
        st.jobs.insert(key.build_id.clone(), Job::Queued);
        st.queue.push_back(key);
        if st.workers < WORKERS {
            st.workers += 1;
            let (providers, shared) = (Arc::clone(&self.providers), Arc::clone(&self.shared));
            let spawned = std::thread::Builder::new()
                .name("symfilter-locate".into())
                .spawn(move || work(&providers, &shared));
            if spawned.is_err() {
                // No thread: the caller searches when it needs the module.
                st.workers -= 1;
                if let Some(key) = st.queue.pop_back() {
                    st.jobs.remove(&key.build_id);
                }
            }
        }
    }

    /// Whether a search for `id` was requested (and not taken yet).
    pub fn knows(&self, id: &BuildId) -> bool {
        self.shared.lock().jobs.contains_key(id)
    }

    /// The result of the search for `id`, waiting for it if it is under
    /// way. `None` when there is none, or it had not started (it is
    /// dropped: the caller searches now rather than wait for a worker).
    pub fn take(&self, id: &BuildId) -> Option<Located> {
        let mut st = self.shared.lock();
        loop {
            match st.jobs.get(id) {
                None => return None,
                Some(Job::Queued) => {
                    st.jobs.remove(id);
                    st.queue.retain(|k| k.build_id != *id);
                    return None;
                }
                Some(Job::Running) => {
                    st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                Some(Job::Done(_)) => match st.jobs.remove(id) {
                    Some(Job::Done(found)) => return Some(found),
                    _ => return None,
                },
            }
        }
    }
}

impl Drop for Prefetcher {
    /// Searches not started are dropped; running ones finish on their own.
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.closed = true;
        st.queue.clear();
    }
}

fn work(providers: &[Box<dyn Provider>], shared: &Shared) {
    loop {
        let key = {
            let mut st = shared.lock();
            let Some(key) = st.queue.pop_front() else {
                st.workers -= 1;
                return;
            };
            st.jobs.insert(key.build_id.clone(), Job::Running);
            key
        };
        let id = key.build_id.clone();
        let fallback_key = key.clone();
        let found = std::panic::catch_unwind(AssertUnwindSafe(|| locate(providers, key)))
            .unwrap_or_else(|_| Located {
                key: fallback_key,
                source: None,
                trail: vec![Attempt::new(
                    Locator::Custom("locate"),
                    String::new(),
                    Some(Miss::SearchFailed),
                )],
            });
        let mut st = shared.lock();
        st.jobs.insert(id, Job::Done(found));
        shared.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::symbols::{CodeInfo, CodeWant, DataInfo, DataWant, Symbolizer, SymbolizerConfig};

    struct Nothing;

    impl SymbolSource for Nothing {
        fn origin(&self) -> String {
            "nothing".into()
        }
        fn lookup_code(&self, _: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
            Err(Miss::NoInfo)
        }
        fn lookup_data(&self, _: u64, _: DataWant) -> Result<DataInfo, Miss> {
            Err(Miss::NoInfo)
        }
    }

    /// Finds every module, slowly, counting the searches.
    struct Slow(Arc<AtomicUsize>);

    impl Provider for Slow {
        fn name(&self) -> Locator {
            Locator::Custom("slow")
        }
        fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            trail.push(Attempt::new(self.name(), key.name.clone(), None));
            Some(Box::new(Nothing))
        }
    }

    fn symbolizer() -> (Symbolizer, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let config = SymbolizerConfig {
            providers: vec![Box::new(Slow(Arc::clone(&count)))],
        };
        (Symbolizer::new(config), count)
    }

    fn key(n: u8, hint: Option<u64>) -> ModuleKey {
        ModuleKey {
            image_base_hint: hint,
            ..ModuleKey::new(BuildId(vec![n; 20]), format!("m{n}"))
        }
    }

    #[test]
    fn a_background_search_is_taken_once_and_not_repeated() {
        let (mut s, count) = symbolizer();
        for n in 0..3 {
            s.prefetch(&key(n, Some(0)).build_id, || key(n, Some(0)));
            // Asking twice starts one search.
            s.prefetch(&key(n, Some(0)).build_id, || key(n, Some(0)));
        }
        for n in 0..3 {
            let opened = s.open(&key(n, Some(0)));
            assert!(opened.first_time);
            assert!(opened.source.is_ok());
        }
        assert_eq!(count.load(Ordering::SeqCst), 3);
        assert!(
            s.trail(&key(1, Some(0)).build_id)
                .is_some_and(|t| t.len() == 1)
        );
    }

    #[test]
    fn a_search_with_another_image_base_is_done_again() {
        let (mut s, count) = symbolizer();
        s.prefetch(&key(7, Some(0x1000)).build_id, || key(7, Some(0x1000)));
        assert!(s.open(&key(7, Some(0))).source.is_ok());
        // Done again unless it had not started (then dropped): one or two.
        let n = count.load(Ordering::SeqCst);
        assert!((1..=2).contains(&n), "{n}");
        // Not asked again afterwards.
        s.prefetch(&key(7, Some(0)).build_id, || key(7, Some(0)));
        assert!(!s.open(&key(7, Some(0))).first_time);
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(count.load(Ordering::SeqCst), n);
    }
}
