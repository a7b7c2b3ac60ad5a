//! debuginfod client symbol source.
//!
//! Asked after every local source. For a build ID it looks in the shared
//! debuginfod cache (elfutils layout, see `cache.rs`), then asks each server
//! in `DEBUGINFOD_URLS` and `--debuginfod` order for
//! `/buildid/<hex>/debuginfo` (and `/executable` when the debuginfo has no
//! symbols). A download goes to a temporary file, must be an ELF with the
//! requested build ID, and only then is renamed into the cache and handed
//! to [`open_elf`]. Every cache probe and server request is recorded as an
//! [`Attempt`] for `--explain`; server faults are also reported once as
//! warnings (see [`crate::report`]), and symbolization goes on without them.

mod cache;
mod client;
mod config;
mod elfcheck;
mod progress;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant, SystemTime};

pub use cache::{Cache, Kind, Probe};
pub use client::{Client, FetchError};
pub use config::{Config, Settings};
pub use elfcheck::ElfFacts;

use crate::report::{Report, Reporter, Silent};
use crate::symbols::{Attempt, BuildId, Locator, Miss, ModuleKey, Provider, SymbolSource};

const PROVIDER: Locator = Locator::Debuginfod;

/// Longest build ID accepted (elfutils' `MAX_BUILD_ID_BYTES`).
pub const MAX_BUILD_ID_BYTES: usize = 64;

/// The debuginfod provider for `config`, asked after every local source.
/// Empty when there is neither a server nor a cache directory. Found
/// files' supplementary and split-DWARF files are looked for in
/// `debug_dirs`. Warnings (the configuration's first) and progress go to
/// `reporter`.
pub fn providers(
    config: Config,
    debug_dirs: Vec<PathBuf>,
    reporter: Arc<dyn Reporter>,
) -> Vec<Box<dyn Provider>> {
    // With no server only an existing cache (filled by an earlier run, gdb
    // or debuginfod-find) can serve anything: don't list a cache that isn't
    // there among the places tried.
    if config.servers.is_empty() && !config.cache_root.as_deref().is_some_and(Path::is_dir) {
        return Vec::new();
    }
    for w in &config.warnings {
        reporter.report(&Report::Warning(w));
    }
    let provider = DebuginfodProvider::new(config)
        .with_reporter(reporter)
        .with_opener(Arc::new(move |path: &Path, extra: &[PathBuf]| {
            open_elf(path, &debug_dirs, extra)
        }));
    vec![Box::new(provider)]
}

/// Opens a verified debug file or executable with the ELF/DWARF source.
/// Its own supplementary (dwz) and split-DWARF files are looked for in
/// `build_id_dirs`, then in `extra` (the build-ID tree this provider makes
/// for a supplementary file it downloaded).
pub fn open_elf(
    path: &Path,
    build_id_dirs: &[PathBuf],
    extra: &[PathBuf],
) -> Result<Box<dyn SymbolSource>, Miss> {
    let mut dirs = build_id_dirs.to_vec();
    dirs.extend_from_slice(extra);
    Ok(Box::new(crate::elf::open_file(path, &dirs)?))
}

/// Turns a verified file into a source, given extra build-ID trees to
/// look in for its supplementary file; [`open_elf`] unless replaced.
pub type Opener =
    Arc<dyn Fn(&Path, &[PathBuf]) -> Result<Box<dyn SymbolSource>, Miss> + Send + Sync>;

pub struct DebuginfodProvider {
    servers: Vec<String>,
    cache: Option<Cache>,
    client: Option<Client>,
    /// Servers found dead (unreachable, timed out) in this run, with why.
    dead: Mutex<HashMap<usize, String>>,
    /// The run's budget for downloads, counted from the first request.
    budget: Duration,
    first_request: OnceLock<Instant>,
    /// Where warnings and download progress go.
    reporter: Arc<dyn Reporter>,
    cache_warned: AtomicBool,
    /// The cache is cleaned (elfutils' rules) at most once per run, on
    /// first use, and only when servers can refill it.
    cleaned: Once,
    opener: Opener,
}

impl DebuginfodProvider {
    pub fn new(config: Config) -> DebuginfodProvider {
        let client = (!config.servers.is_empty()).then(|| Client::new(&config));
        DebuginfodProvider {
            cache: config.cache_root.clone().map(Cache::new),
            servers: config.servers,
            client,
            dead: Mutex::new(HashMap::new()),
            budget: config.budget,
            first_request: OnceLock::new(),
            reporter: Arc::new(Silent),
            cache_warned: AtomicBool::new(false),
            cleaned: Once::new(),
            opener: Arc::new(|path: &Path, extra: &[PathBuf]| {
                open_elf(path, &[PathBuf::from(crate::elf::SYSTEM_DEBUG_DIR)], extra)
            }),
        }
    }

    /// Report warnings and progress to `reporter` (by default they are
    /// dropped).
    pub fn with_reporter(mut self, reporter: Arc<dyn Reporter>) -> DebuginfodProvider {
        self.reporter = reporter;
        self
    }

    fn warn(&self, message: &str) {
        self.reporter.report(&Report::Warning(message));
    }

    /// Open verified files with something else than [`open_elf`].
    pub fn with_opener(mut self, opener: Opener) -> DebuginfodProvider {
        self.opener = opener;
        self
    }

    /// Find `kind` for `id`: cache first, then each live server. Returns
    /// the verified file.
    fn resolve(
        &self,
        id: &BuildId,
        hex: &str,
        kind: Kind,
        trail: &mut Vec<Attempt>,
    ) -> Option<Fetched> {
        let attempt = |place: String, failure: Option<Miss>| Attempt::new(PROVIDER, place, failure);
        if let Some(cache) = &self.cache {
            if self.client.is_some() {
                self.cleaned.call_once(|| {
                    cache.maybe_clean(SystemTime::now());
                });
            }
            let path = cache.entry(hex, kind);
            let shown = path.display().to_string();
            match cache.probe(hex, kind) {
                Probe::Present(p) => match elfcheck::check(&p, id, &shown) {
                    Ok(facts) => {
                        trail.push(attempt(shown, None));
                        return Some(Fetched {
                            path: p,
                            facts,
                            _temp: None,
                        });
                    }
                    Err(miss) => trail.push(attempt(shown, Some(miss))),
                },
                Probe::Negative { age, ttl } => {
                    trail.push(attempt(
                        shown,
                        Some(Miss::CachedNegative {
                            age_secs: age.as_secs(),
                            ttl_secs: ttl.as_secs(),
                        }),
                    ));
                    return None;
                }
                Probe::Expired { age, ttl } => trail.push(attempt(
                    shown,
                    Some(Miss::NegativeExpired {
                        age_secs: age.as_secs(),
                        ttl_secs: ttl.as_secs(),
                    }),
                )),
                Probe::Absent => trail.push(attempt(shown, Some(Miss::NotFound))),
            }
        }
        let client = self.client.as_ref()?;
        let mut all_definitive = true;
        for (i, server) in self.servers.iter().enumerate() {
            let url = format!("{server}/buildid/{hex}/{}", kind.as_str());
            let dead = crate::base::lock(&self.dead).get(&i).cloned();
            if let Some(why) = dead {
                all_definitive = false;
                trail.push(attempt(url, Some(Miss::ServerDown(why))));
                continue;
            }
            let Some(left) = self.budget_left() else {
                all_definitive = false;
                trail.push(attempt(
                    url,
                    Some(Miss::BudgetSpent {
                        secs: self.budget.as_secs(),
                    }),
                ));
                continue;
            };
            match self.download(client, &url, id, hex, kind, left) {
                Ok(fetched) => {
                    trail.push(attempt(url, None));
                    return Some(fetched);
                }
                Err(Failure::Fetch(e)) => {
                    if !e.is_definitive() {
                        all_definitive = false;
                    }
                    if e.server_is_dead() {
                        crate::base::lock(&self.dead).insert(i, e.to_string());
                    }
                    if !matches!(e, FetchError::NotFound(_)) {
                        self.warn(&format!("debuginfod: {url}: {e}"));
                    }
                    trail.push(attempt(url, Some(Miss::Download(e.to_string()))));
                }
                Err(Failure::Rejected(miss)) => {
                    self.warn(&format!("debuginfod: {url}: {miss}; discarded"));
                    trail.push(attempt(url, Some(miss)));
                }
                Err(Failure::Local(why)) => {
                    all_definitive = false;
                    self.warn(&format!("debuginfod: {url}: {why}"));
                    trail.push(attempt(url, Some(Miss::Download(why))));
                }
            }
        }
        if all_definitive
            && !self.servers.is_empty()
            && let Some(cache) = &self.cache
        {
            cache.store_negative(hex, kind);
        }
        None
    }

    /// What is left of the run's download time (its clock starts at the
    /// first request), or `None` when it is spent.
    fn budget_left(&self) -> Option<Duration> {
        let start = *self.first_request.get_or_init(Instant::now);
        self.budget
            .checked_sub(start.elapsed())
            .filter(|d| !d.is_zero())
    }

    /// Download `url` to a temporary file, verify it, move it into the
    /// cache (or keep it as a temporary file when there is no cache).
    /// The transfer ends within `left`.
    fn download(
        &self,
        client: &Client,
        url: &str,
        id: &BuildId,
        hex: &str,
        kind: Kind,
        left: Duration,
    ) -> Result<Fetched, Failure> {
        progress::show(self.reporter.as_ref(), hex, url, |report| {
            let incoming = client.start(url, Some(left)).map_err(Failure::Fetch)?;
            // Into the cache when it can be written; else into a temporary
            // file that lives as long as the source (a read-only or full
            // cache must not stop symbolization).
            let in_cache = self.cache.as_ref().and_then(|c| match c.begin(hex, kind) {
                Ok(tmp) => Some((c, tmp)),
                Err(e) => {
                    self.warn_cache(c, &e);
                    None
                }
            });
            let (cache, mut tmp) = match in_cache {
                Some((c, tmp)) => (Some(c), tmp),
                None => (
                    None,
                    tempfile::Builder::new()
                        .prefix("symfilter-debuginfod.")
                        .tempfile()
                        .map_err(|e| {
                            Failure::Local(format!("cannot create a temporary file: {e}"))
                        })?,
                ),
            };
            let mut buffered = std::io::BufWriter::with_capacity(256 * 1024, tmp.as_file_mut());
            // `save` flushes `buffered` before it reports success.
            let saved = incoming.save(&mut buffered, report);
            drop(buffered);
            saved.map_err(Failure::Fetch)?;
            Ok((cache, tmp))
        })
        .and_then(|(cache, tmp)| self.keep(cache, tmp, id, hex, kind))
    }

    /// Verify a finished download and move it into the cache (or keep it
    /// as a temporary file).
    fn keep(
        &self,
        cache: Option<&Cache>,
        mut tmp: tempfile::NamedTempFile,
        id: &BuildId,
        hex: &str,
        kind: Kind,
    ) -> Result<Fetched, Failure> {
        let facts =
            elfcheck::check(tmp.path(), id, "downloaded file").map_err(Failure::Rejected)?;
        if let Some(cache) = cache {
            match cache.commit(tmp, hex, kind) {
                Ok(path) => {
                    return Ok(Fetched {
                        path,
                        facts,
                        _temp: None,
                    });
                }
                Err(e) => {
                    self.warn_cache(cache, &e.error);
                    tmp = e.file;
                }
            }
        }
        let temp = tmp.into_temp_path();
        Ok(Fetched {
            path: temp.to_path_buf(),
            facts,
            _temp: Some(temp),
        })
    }

    /// Say once per run that the cache cannot be written.
    fn warn_cache(&self, cache: &Cache, e: &std::io::Error) {
        if !self.cache_warned.swap(true, Ordering::Relaxed) {
            self.warn(&format!(
                "debuginfod: cannot write to the cache {}: {e}; downloads go to temporary files",
                cache.root().display()
            ));
        }
    }

    fn open(&self, fetched: Fetched, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let sup = fetched
            .facts
            .altlink
            .as_ref()
            .and_then(|(path, id)| self.supplement(path, id, trail));
        let extra: Vec<PathBuf> = sup.iter().map(|s| s.dir.path().to_path_buf()).collect();
        // Files are mapped while opening: `sup` (its build-ID tree and any
        // temporary copy) and a temporary download may be deleted
        // afterwards (the mappings stay valid), so nothing is left behind
        // however the process ends.
        match (self.opener)(&fetched.path, &extra) {
            Ok(src) => Some(src),
            Err(miss) => {
                trail.push(Attempt::new(
                    PROVIDER,
                    fetched.path.display().to_string(),
                    Some(miss),
                ));
                None
            }
        }
    }

    /// Fetch the dwz supplementary file a debug file names by build ID
    /// (distribution debuginfo is usually dwz-compressed), and lay it out
    /// as a one-file build-ID tree for the ELF source. `None` when it is
    /// already at its recorded path or cannot be had (the trail says why).
    fn supplement(
        &self,
        recorded: &[u8],
        sup_id: &[u8],
        trail: &mut Vec<Attempt>,
    ) -> Option<Supplement> {
        if let Ok(p) = std::str::from_utf8(recorded)
            && Path::new(p).is_absolute()
            && Path::new(p).is_file()
        {
            return None;
        }
        let id = BuildId(sup_id.to_vec());
        let hex = checked_hex(&id).ok().filter(|h| h.len() > 2)?;
        let file = self.resolve(&id, &hex, Kind::Debuginfo, trail)?;
        let (head, rest) = hex.split_at(2);
        let laid_out = tempfile::Builder::new()
            .prefix("symfilter-dwz.")
            .tempdir()
            .and_then(|dir| {
                let sub = dir.path().join(".build-id").join(head);
                std::fs::create_dir_all(&sub)?;
                std::os::unix::fs::symlink(&file.path, sub.join(format!("{rest}.debug")))?;
                Ok(dir)
            });
        match laid_out {
            Ok(dir) => Some(Supplement { dir, _file: file }),
            Err(e) => {
                trail.push(Attempt::new(
                    PROVIDER,
                    file.path.display().to_string(),
                    Some(Miss::SupplementLayout(e.to_string())),
                ));
                None
            }
        }
    }
}

enum Failure {
    Fetch(FetchError),
    /// Downloaded, but not the file asked for.
    Rejected(Miss),
    Local(String),
}

/// A downloaded dwz supplementary file, as a build-ID tree.
struct Supplement {
    dir: tempfile::TempDir,
    _file: Fetched,
}

/// A verified file; `_temp` owns it when it lives outside the cache.
struct Fetched {
    path: PathBuf,
    facts: ElfFacts,
    _temp: Option<tempfile::TempPath>,
}

/// The hex form of a build ID that may go into a URL and a path, or why
/// not.
pub fn checked_hex(id: &BuildId) -> Result<String, Miss> {
    if id.0.is_empty() {
        return Err(Miss::EmptyBuildId);
    }
    if id.0.len() > MAX_BUILD_ID_BYTES {
        return Err(Miss::BuildIdTooLong {
            len: id.0.len(),
            max: MAX_BUILD_ID_BYTES,
        });
    }
    let hex = id.to_hex();
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Miss::BuildIdNotHex);
    }
    Ok(hex)
}

impl Provider for DebuginfodProvider {
    fn name(&self) -> Locator {
        PROVIDER
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let id = &key.build_id;
        let hex = match checked_hex(id) {
            Ok(h) => h,
            Err(miss) => {
                trail.push(Attempt::new(PROVIDER, "debuginfod".to_owned(), Some(miss)));
                return None;
            }
        };
        let debuginfo = self.resolve(id, &hex, Kind::Debuginfo, trail);
        let fallback = match debuginfo {
            Some(f) if f.facts.has_symbols => {
                if let Some(src) = self.open(f, trail) {
                    return Some(src);
                }
                None
            }
            Some(f) => {
                trail.push(Attempt::new(
                    PROVIDER,
                    f.path.display().to_string(),
                    Some(Miss::DebuginfoWithoutSymbols),
                ));
                Some(f)
            }
            None => None,
        };
        if let Some(exe) = self.resolve(id, &hex, Kind::Executable, trail)
            && let Some(src) = self.open(exe, trail)
        {
            return Some(src);
        }
        fallback.and_then(|f| self.open(f, trail))
    }
}
