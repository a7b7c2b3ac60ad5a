//! Settings from the environment (`DEBUGINFOD_*`, as elfutils reads them)
//! and the command line.

use std::path::PathBuf;
use std::time::Duration;

/// elfutils' default `DEBUGINFOD_TIMEOUT`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);
/// Cap on a download when `DEBUGINFOD_MAXSIZE` is unset: large enough for
/// any real debug file, small enough that a hostile server cannot fill a
/// disk. `DEBUGINFOD_MAXSIZE=0` lifts it (as in elfutils, 0 is "no limit").
pub const DEFAULT_MAX_SIZE: u64 = 4 << 30;
/// A download's whole time, request to last byte, when
/// `DEBUGINFOD_MAXTIME` does not say: long enough for a large debug file
/// on a slow link, short enough that a server trickling data just fast
/// enough for the low-speed check cannot hold the filter for long.
pub const DEFAULT_MAX_TIME: Duration = Duration::from_secs(300);
/// The wall time all of a run's downloads may take together, from the
/// first request, when `--debuginfod-timeout` does not say.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(600);
/// Redirects followed per request.
pub const MAX_REDIRECTS: u32 = 8;

/// What the user asked of debuginfod besides the environment (the command
/// line's options, in the binary).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Server URLs asked after `DEBUGINFOD_URLS`' servers, in order.
    pub urls: Vec<String>,
    /// Ask no server: read the cache only.
    pub offline: bool,
    /// Seconds all the run's downloads may take together; `None` or 0 for
    /// `DEFAULT_BUDGET`.
    pub budget_secs: Option<u64>,
}

/// Everything the debuginfod provider needs to know, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Server base URLs (no trailing `/`), tried in order. Empty when
    /// offline.
    pub servers: Vec<String>,
    /// Cache root (`<root>/<buildid>/debuginfo`), `None` when no home or
    /// cache directory can be named.
    pub cache_root: Option<PathBuf>,
    /// Connect, first-response and per-read timeout; also the window in
    /// which a body must make progress (elfutils: 100 KiB per timeout).
    pub timeout: Duration,
    /// Whole-download limit (`DEBUGINFOD_MAXTIME`, default
    /// `DEFAULT_MAX_TIME`); `None` only where a caller sets none.
    pub max_time: Option<Duration>,
    /// Wall time the run's downloads may take together, from the first
    /// request (`--debuginfod-timeout`): once spent, no server is asked
    /// again and a download under way is cut.
    pub budget: Duration,
    /// Largest body accepted, in bytes; `None` is no limit.
    pub max_size: Option<u64>,
    /// PEM bundle of trusted CA certificates for https servers:
    /// `$SSL_CERT_FILE`, else the system bundle, else (`None`) the Mozilla
    /// roots built into the binary.
    pub ca_file: Option<PathBuf>,
    /// Warnings about the settings themselves (bad URL, bad number), to
    /// print once.
    pub warnings: Vec<String>,
}

impl Config {
    /// Resolve from `args` and an environment lookup (`std::env::var_os`
    /// in the binary; a map in tests). Returns `None` when no server is
    /// named and `offline` does not ask for the cache (as elfutils does
    /// nothing without `DEBUGINFOD_URLS`), or when there is no cache to
    /// read.
    pub fn resolve(args: &Settings, env: &dyn Fn(&str) -> Option<String>) -> Option<Config> {
        let mut warnings = Vec::new();
        let mut servers: Vec<String> = Vec::new();
        if !args.offline {
            let from_env = env("DEBUGINFOD_URLS").unwrap_or_default();
            let all = from_env
                .split_ascii_whitespace()
                .map(str::to_owned)
                .chain(args.urls.iter().cloned());
            for url in all {
                match normalize_url(&url) {
                    Some(u) => {
                        if !servers.contains(&u) {
                            servers.push(u);
                        }
                    }
                    None => warnings.push(format!(
                        "debuginfod: ignoring server URL {url:?}: only http:// and https:// URLs are supported"
                    )),
                }
            }
        }
        if servers.is_empty() && !args.offline {
            return None;
        }
        let cache_root = cache_root(env);
        if servers.is_empty() && cache_root.is_none() {
            return None;
        }
        let timeout = match whole_number(env, "DEBUGINFOD_TIMEOUT", &mut warnings) {
            Some(0) | None => DEFAULT_TIMEOUT,
            Some(s) => Duration::from_secs(s),
        };
        let max_time = match whole_number(env, "DEBUGINFOD_MAXTIME", &mut warnings) {
            Some(0) | None => Some(DEFAULT_MAX_TIME),
            Some(s) => Some(Duration::from_secs(s)),
        };
        let budget = match args.budget_secs {
            Some(0) | None => DEFAULT_BUDGET,
            Some(s) => Duration::from_secs(s),
        };
        let max_size = match whole_number(env, "DEBUGINFOD_MAXSIZE", &mut warnings) {
            None => Some(DEFAULT_MAX_SIZE),
            Some(0) => None,
            Some(n) => Some(n),
        };
        Some(Config {
            servers,
            cache_root,
            timeout,
            max_time,
            budget,
            max_size,
            ca_file: ca_file(env),
            warnings,
        })
    }
}

/// Parse an unsigned decimal setting; a malformed value is reported and
/// ignored.
fn whole_number(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    warnings: &mut Vec<String>,
) -> Option<u64> {
    let raw = env(name)?;
    let t = raw.trim();
    if t.is_empty() {
        return None;
    }
    match t.parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => {
            warnings.push(format!(
                "debuginfod: ignoring {name}={raw:?}: not a whole number"
            ));
            None
        }
    }
}

/// `http(s)://host[:port][/path]` without trailing slashes, or `None` for
/// anything else (other schemes, empty host, spaces or control bytes).
fn normalize_url(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return None;
    }
    if url.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return None;
    }
    Some(url.trim_end_matches('/').to_owned())
}

/// System CA bundles (Debian/Ubuntu, Fedora/RHEL, openSUSE, Alpine/Arch).
const SYSTEM_CA_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// What curl (and so elfutils) would trust: `$SSL_CERT_FILE`, else the
/// system bundle, so servers behind a site CA work as they do for gdb.
fn ca_file(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("SSL_CERT_FILE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    SYSTEM_CA_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// elfutils' order: `$DEBUGINFOD_CACHE_PATH`, then the legacy
/// `~/.debuginfod_client_cache` when it exists, then
/// `$XDG_CACHE_HOME/debuginfod_client`, then `~/.cache/debuginfod_client`.
fn cache_root(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(p) = non_empty("DEBUGINFOD_CACHE_PATH") {
        return Some(PathBuf::from(p));
    }
    let home = non_empty("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        let legacy = home.join(".debuginfod_client_cache");
        if legacy.is_dir() {
            return Some(legacy);
        }
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(xdg).join("debuginfod_client"));
    }
    home.map(|h| h.join(".cache").join("debuginfod_client"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    #[test]
    fn urls_from_env_then_flags_in_order_deduplicated() {
        let args = Settings {
            urls: vec!["http://c/".into(), "http://a".into()],
            ..Settings::default()
        };
        let env = env_of(&[
            (
                "DEBUGINFOD_URLS",
                "  http://a/  https://b:8002/x//\tftp://nope ",
            ),
            ("DEBUGINFOD_CACHE_PATH", "/tmp/c"),
        ]);
        let c = Config::resolve(&args, &env).expect("config");
        assert_eq!(c.servers, vec!["http://a", "https://b:8002/x", "http://c"]);
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("ftp://nope"), "{:?}", c.warnings);
        assert_eq!(c.cache_root, Some(PathBuf::from("/tmp/c")));
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        assert_eq!(c.max_size, Some(DEFAULT_MAX_SIZE));
        assert_eq!(c.max_time, Some(DEFAULT_MAX_TIME));
        assert_eq!(c.budget, DEFAULT_BUDGET);
    }

    #[test]
    fn offline_keeps_cache_only() {
        let env = env_of(&[("DEBUGINFOD_URLS", "http://a"), ("HOME", "/h")]);
        let offline = Settings {
            offline: true,
            ..Settings::default()
        };
        let c = Config::resolve(&offline, &env).expect("config");
        assert!(c.servers.is_empty());
        assert_eq!(
            c.cache_root,
            Some(PathBuf::from("/h/.cache/debuginfod_client"))
        );
        // No server named: nothing to do (elfutils neither reads its cache
        // then), unless --offline asks for the cache.
        let no_urls = env_of(&[("HOME", "/h")]);
        assert_eq!(Config::resolve(&Settings::default(), &no_urls), None);
        assert!(Config::resolve(&offline, &no_urls).is_some());
    }

    #[test]
    fn cache_root_prefers_xdg_over_home() {
        let env = env_of(&[
            ("DEBUGINFOD_URLS", "http://a"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/nonexistent-home"),
        ]);
        let c = Config::resolve(&Settings::default(), &env).expect("config");
        assert_eq!(c.cache_root, Some(PathBuf::from("/x/debuginfod_client")));
    }

    #[test]
    fn limits_from_env() {
        let env = env_of(&[
            ("DEBUGINFOD_URLS", "http://a"),
            ("DEBUGINFOD_CACHE_PATH", "/c"),
            ("DEBUGINFOD_TIMEOUT", "3"),
            ("DEBUGINFOD_MAXSIZE", "0"),
            ("DEBUGINFOD_MAXTIME", "junk"),
        ]);
        let c = Config::resolve(&Settings::default(), &env).expect("config");
        assert_eq!(c.timeout, Duration::from_secs(3));
        assert_eq!(c.max_size, None);
        assert_eq!(c.max_time, Some(DEFAULT_MAX_TIME));
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("DEBUGINFOD_MAXTIME"));
        // Without SSL_CERT_FILE: the system bundle when there is one.
        assert_eq!(
            c.ca_file,
            SYSTEM_CA_BUNDLES
                .iter()
                .map(PathBuf::from)
                .find(|p| p.is_file())
        );
        let env = env_of(&[
            ("DEBUGINFOD_URLS", "http://a"),
            ("DEBUGINFOD_CACHE_PATH", "/c"),
            ("SSL_CERT_FILE", "/etc/site-ca.pem"),
        ]);
        let c = Config::resolve(&Settings::default(), &env).expect("config");
        assert_eq!(c.ca_file, Some(PathBuf::from("/etc/site-ca.pem")));
    }
}
