//! Against a real elfutils `debuginfod` server started on a free port and
//! asked on loopback only, serving testdata/debuginfod: first run
//! downloads, later runs are served from the cache with the server
//! stopped; a cache filled by elfutils' `debuginfod-find` is read as is, and
//! ours is read by `debuginfod-find`.
//!
//! Needs the Debian package `debuginfod` (installed by .ci/run).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use symfilter::debuginfod::DebuginfodProvider;
use symfilter::symbols::{Attempt, BuildId, Provider};

use crate::common;
use common::debuginfod::{assert_symbolizes, config, fixture, fixture_id, key, provider_with};

/// A running `debuginfod`; killed and reaped on drop, whatever happens.
struct Server {
    child: Option<Child>,
    url: String,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        // A port found free can be taken before the server binds it: retry.
        for _ in 0..5 {
            if let Some(server) = Server::try_start() {
                return server;
            }
        }
        panic!("debuginfod did not start");
    }

    fn try_start() -> Option<Server> {
        let dir = tempfile::tempdir().expect("tempdir");
        let srv = dir.path().join("srv");
        std::fs::create_dir(&srv).expect("mkdir");
        for (f, to) in [
            ("hello.debug", "hello.debug"),
            ("hello.stripped", "hello.stripped"),
            ("dwz/hello", "dwz-hello"),
            ("dwz/common.dwz", "common.dwz"),
        ] {
            std::fs::copy(fixture(f), srv.join(to)).expect("copy fixture");
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new("debuginfod")
            .arg("-d")
            .arg(dir.path().join("db.sqlite"))
            .args([
                "-p",
                &port.to_string(),
                "-F",
                "-t",
                "0",
                "-g",
                "0",
                "-c",
                "1",
            ])
            .arg(&srv)
            // Never let the server federate to real upstream servers.
            .env_remove("DEBUGINFOD_URLS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the `debuginfod` server (Debian package debuginfod) must be installed");
        let mut server = Server {
            child: Some(child),
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        // On failure the server is dropped, which kills it.
        server.wait_scanned().then_some(server)
    }

    /// Wait until the fixture files are scanned and the scanner is idle.
    fn wait_scanned(&mut self) -> bool {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(2)))
            .http_status_as_error(false)
            .build()
            .into();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                return false;
            }
            if let Ok(mut resp) = agent.get(format!("{}/metrics", self.url)).call()
                && let Ok(text) = resp.body_mut().read_to_string()
            {
                let scanned = text
                    .lines()
                    .any(|l| l == "scanned_files_total{source=\"file\"} 4");
                let idle = text.lines().any(|l| l == "thread_busy{role=\"scan\"} 0");
                if scanned && idle {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn provider(servers: Vec<String>, cache: &Path) -> (DebuginfodProvider, Arc<Mutex<Vec<String>>>) {
    provider_with(config(servers, Some(cache), 10, 1 << 20))
}

fn served_by(trail: &[Attempt]) -> Vec<String> {
    trail
        .iter()
        .filter(|a| a.failure.is_none())
        .map(|a| a.place.clone())
        .collect()
}

#[test]
fn downloads_from_a_real_server_then_serves_from_cache_with_server_stopped() {
    let mut server = Server::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let hex = id.to_hex();
    let cached = cache.path().join(&hex).join("debuginfo");

    let (p, warnings) = provider(vec![server.url.clone()], cache.path());
    let mut trail = Vec::new();
    let src = p.find(&key(&id), &mut trail).expect("served by debuginfod");
    assert_symbolizes(src.as_ref());
    assert_eq!(
        served_by(&trail),
        vec![format!("{}/buildid/{hex}/debuginfo", server.url)]
    );
    assert_eq!(
        std::fs::read(&cached).expect("cached"),
        std::fs::read(fixture("hello.debug")).expect("fixture")
    );
    assert!(warnings.lock().expect("w").is_empty());

    // An unknown build ID: a 404 from the real server, remembered.
    let unknown = BuildId::from_hex("0011223344556677").expect("hex");
    let mut trail = Vec::new();
    assert!(p.find(&key(&unknown), &mut trail).is_none());
    let miss = cache.path().join(unknown.to_hex()).join("debuginfo");
    assert_eq!(std::fs::metadata(&miss).expect("negative entry").len(), 0);

    server.stop();
    let (p, warnings) = provider(vec![server.url.clone()], cache.path());
    let mut trail = Vec::new();
    let src = p.find(&key(&id), &mut trail).expect("served by the cache");
    assert_symbolizes(src.as_ref());
    assert_eq!(served_by(&trail), vec![cached.display().to_string()]);
    assert_eq!(trail.len(), 1, "no server asked");
    let mut trail = Vec::new();
    assert!(p.find(&key(&unknown), &mut trail).is_none());
    assert!(
        trail.iter().all(|a| a
            .failure
            .as_ref()
            .is_some_and(|m| m.to_string().starts_with("cached negative result"))),
        "{trail:?}"
    );
    assert!(
        warnings.lock().expect("w").is_empty(),
        "the stopped server was never asked"
    );
}

fn debuginfod_find(cache: &Path, urls: &str, args: &[&str]) -> std::process::Output {
    Command::new("debuginfod-find")
        .args(args)
        .env("DEBUGINFOD_URLS", urls)
        .env("DEBUGINFOD_CACHE_PATH", cache)
        .env("DEBUGINFOD_TIMEOUT", "5")
        .env_remove("DEBUGINFOD_PROGRESS")
        .stdin(Stdio::null())
        .output()
        .expect("debuginfod-find (Debian package debuginfod) must be installed")
}

#[test]
fn cache_is_shared_with_elfutils_debuginfod_find_both_ways() {
    let mut server = Server::start();
    let id = fixture_id();
    let hex = id.to_hex();

    // elfutils fills a cache; symfilter reads it offline.
    let theirs = tempfile::tempdir().expect("tempdir");
    for kind in ["debuginfo", "executable"] {
        let out = debuginfod_find(theirs.path(), &server.url, &[kind, &hex]);
        assert!(out.status.success(), "{out:?}");
        let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert_eq!(PathBuf::from(printed), theirs.path().join(&hex).join(kind));
    }
    let unknown = "0011223344556677";
    let out = debuginfod_find(theirs.path(), &server.url, &["debuginfo", unknown]);
    assert!(!out.status.success());

    // Ours fills another; stop the server before elfutils reads it.
    let ours = tempfile::tempdir().expect("tempdir");
    let (p, _) = provider(vec![server.url.clone()], ours.path());
    let mut trail = Vec::new();
    assert!(p.find(&key(&id), &mut trail).is_some());
    server.stop();

    let (offline, _) = provider(Vec::new(), theirs.path());
    let mut trail = Vec::new();
    let src = offline
        .find(&key(&id), &mut trail)
        .expect("from elfutils' cache");
    assert_symbolizes(src.as_ref());
    assert_eq!(
        served_by(&trail),
        vec![
            theirs
                .path()
                .join(&hex)
                .join("debuginfo")
                .display()
                .to_string()
        ]
    );
    // elfutils' negative entry is honoured too.
    let mut trail = Vec::new();
    let unknown_id = BuildId::from_hex(unknown).expect("hex");
    assert!(offline.find(&key(&unknown_id), &mut trail).is_none());
    assert!(
        trail[0]
            .failure
            .as_ref()
            .is_some_and(|m| m.to_string().starts_with("cached negative result")),
        "{trail:?}"
    );

    // elfutils reads ours with no server to ask.
    let out = debuginfod_find(ours.path(), &server.url, &["debuginfo", &hex]);
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(
        PathBuf::from(printed),
        ours.path().join(&hex).join("debuginfo")
    );
}

/// `symfilter lookup --build-id` with only debuginfod to find the module.
fn symfilter_lookup(
    id: &BuildId,
    cache: &Path,
    urls: Option<&str>,
    extra: &[&str],
    addrs: &[&str],
) -> std::process::Output {
    let empty = tempfile::tempdir().expect("tempdir");
    let mut cmd = common::command();
    cmd.arg("lookup")
        .arg("--build-id")
        .arg(id.to_hex())
        // No local debug tree may answer first.
        .arg("--build-id-dir")
        .arg(empty.path())
        .args(extra)
        .args(addrs)
        .env("DEBUGINFOD_CACHE_PATH", cache)
        .env("DEBUGINFOD_TIMEOUT", "5")
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::null());
    if let Some(urls) = urls {
        cmd.env("DEBUGINFOD_URLS", urls);
    }
    cmd.output().expect("run symfilter")
}

fn expected_lookup() -> (Vec<String>, String) {
    let expected = std::fs::read_to_string(fixture("lookup.expected")).expect("expected");
    let addrs = expected
        .lines()
        .map(|l| l.split(' ').next().expect("addr").to_owned())
        .collect();
    (addrs, expected)
}

#[test]
fn symfilter_lookup_downloads_then_works_offline_with_the_server_stopped() {
    let mut server = Server::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let (addrs, expected) = expected_lookup();
    let addrs: Vec<&str> = addrs.iter().map(String::as_str).collect();

    // --debuginfod URL and DEBUGINFOD_URLS (a dead server first: skipped
    // with a diagnostic, symbolization goes on with the next one).
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        drop(l);
        format!("http://127.0.0.1:{port}")
    };
    let out = symfilter_lookup(
        &fixture_id(),
        cache.path(),
        Some(&dead),
        &["--debuginfod", &server.url],
        &addrs,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{out:?}");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let hex = fixture_id().to_hex();
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        vec![format!(
            "symfilter: debuginfod: {dead}/buildid/{hex}/debuginfo: cannot connect: Connection refused (os error 111)"
        )],
        "one line about the dead server, then nothing (not asked again)"
    );

    server.stop();
    for extra in [&["--debuginfod", &server.url][..], &["--offline"][..]] {
        let out = symfilter_lookup(&fixture_id(), cache.path(), None, extra, &addrs);
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{out:?}");
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "served by the cache"
        );
    }

    // --no-debuginfod: not even the cache.
    let out = symfilter_lookup(
        &fixture_id(),
        cache.path(),
        None,
        &["--no-debuginfod"],
        &addrs,
    );
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("symfilter: build ID {hex} not found")),
        "{stderr}"
    );
    assert!(!stderr.contains("debuginfod"), "{stderr}");
}

#[test]
fn symfilter_lookup_fetches_the_dwz_supplementary_file_from_a_real_server() {
    let server = Server::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let hex = std::fs::read_to_string(fixture("dwz/build-id")).expect("build-id");
    let id = BuildId::from_hex(hex.trim()).expect("hex");
    let expected = std::fs::read_to_string(fixture("dwz/lookup.expected")).expect("expected");
    let addr = expected.split(' ').next().expect("addr");
    let out = symfilter_lookup(&id, cache.path(), Some(&server.url), &[], &[addr]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{out:?}");
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let sup = std::fs::read_to_string(fixture("dwz/common-build-id")).expect("build-id");
    assert_eq!(
        std::fs::read(cache.path().join(sup.trim()).join("debuginfo")).expect("cached sup"),
        std::fs::read(fixture("dwz/common.dwz")).expect("fixture")
    );
}
