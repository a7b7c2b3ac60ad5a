//! The debuginfod provider against a small HTTP server this test controls
//! (127.0.0.1 only): good answers, and every way a server can fail or lie.
//! Each fault ends in a diagnostic and an `Attempt` with a precise miss,
//! and symbolization goes on with the next server.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use symfilter::debuginfod::{Config, DebuginfodProvider};
use symfilter::symbols::{Attempt, BuildId, CodeWant, Provider};

use crate::common;
use common::debuginfod::{assert_symbolizes, config, fixture, fixture_id, frame_line, key};

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).expect("fixture")
}

fn dwz_id(file: &str) -> BuildId {
    let hex = std::fs::read_to_string(fixture(&format!("dwz/{file}"))).expect("dwz build-id");
    BuildId::from_hex(hex.trim()).expect("hex build id")
}

/// `hello.debug` with one byte of its build ID flipped: a valid ELF that
/// is not the file asked for.
fn lying_debug() -> Vec<u8> {
    let mut bytes = fixture_bytes("hello.debug");
    let id = fixture_id().0;
    let at = bytes
        .windows(id.len())
        .position(|w| w == id.as_slice())
        .expect("build ID bytes in the file");
    bytes[at + id.len() - 1] ^= 0xff;
    bytes
}

/// The HTTP server the tests script. Routes by the first path segment:
/// `/<scenario>/buildid/<hex>/<kind>`.
struct FaultServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<String>>>,
    accept: Option<JoinHandle<()>>,
}

impl FaultServer {
    fn start() -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (stop2, log2) = (stop.clone(), log.clone());
        let accept = std::thread::spawn(move || {
            // Bounded: the accept loop ends when the test drops the server.
            while !stop2.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (stop3, log3) = (stop2.clone(), log2.clone());
                        std::thread::spawn(move || serve(stream, &stop3, &log3));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FaultServer {
            addr,
            stop,
            log,
            accept: Some(accept),
        }
    }

    fn url(&self, scenario: &str) -> String {
        format!("http://{}/{scenario}", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[String], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

/// Sleep until the test is over (bounded at 20 s).
fn hold(stop: &AtomicBool) {
    let start = Instant::now();
    while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Requests of the `slowmiss` scenario under way, and the most at once
/// (one test uses it).
static SLOW_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static SLOW_MOST: AtomicUsize = AtomicUsize::new(0);

fn serve(mut stream: TcpStream, stop: &AtomicBool, log: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&req);
    let path = text.split_whitespace().nth(1).unwrap_or("").to_owned();
    log.lock().expect("log").push(path.clone());
    let parts: Vec<&str> = path.split('/').collect();
    // ["", scenario, "buildid", hex, kind]
    let (scenario, hex, kind) = match parts.as_slice() {
        ["", s, "buildid", h, k] => (*s, *h, *k),
        _ => return respond(&mut stream, "400 Bad Request", &[], b""),
    };
    let known = fixture_id().to_hex() == hex;
    let file = |kind: &str| match kind {
        "debuginfo" => fixture_bytes("hello.debug"),
        _ => fixture_bytes("hello.stripped"),
    };
    let ok = |stream: &mut TcpStream, body: &[u8]| {
        respond(
            stream,
            "200 OK",
            &[format!("Content-Length: {}", body.len())],
            body,
        )
    };
    // The dwz fixture: the binary, and its supplementary file by its own
    // build ID.
    let dwz = if hex == dwz_id("build-id").to_hex() {
        Some(fixture_bytes("dwz/hello"))
    } else if hex == dwz_id("common-build-id").to_hex() && kind == "debuginfo" {
        Some(fixture_bytes("dwz/common.dwz"))
    } else {
        None
    };
    match scenario {
        "ok" if known => ok(&mut stream, &file(kind)),
        "delayed" if known => {
            // A server that takes a while: long enough for the progress
            // line to show.
            std::thread::sleep(Duration::from_millis(2500));
            ok(&mut stream, &file(kind))
        }
        "ok" if dwz.is_some() => ok(&mut stream, dwz.as_deref().unwrap_or_default()),
        "nosyms" if known => {
            // /debuginfo answers with a file without symbols; /executable
            // with the full binary.
            let body = match kind {
                "debuginfo" => fixture_bytes("hello.stripped"),
                _ => fixture_bytes("hello"),
            };
            ok(&mut stream, &body)
        }
        "ok" | "nosyms" | "notfound" => respond(
            &mut stream,
            "404 Not Found",
            &["Content-Length: 9".to_owned()],
            b"not found",
        ),
        "error500" => respond(
            &mut stream,
            "500 Internal Server Error",
            &["Content-Length: 4".to_owned()],
            b"oops",
        ),
        "hang" => hold(stop),
        "slow" => {
            let body = file(kind);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            for b in body.iter().take(200) {
                if stop.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        "slowmiss" => {
            // Not here, after a second: counts how many are asked at once.
            let now = SLOW_IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
            SLOW_MOST.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(1));
            SLOW_IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
            respond(
                &mut stream,
                "404 Not Found",
                &["Content-Length: 9".to_owned()],
                b"not found",
            )
        }
        "trickle" => {
            // Just fast enough for the low-speed check (100 KiB per
            // timeout window, with DEBUGINFOD_TIMEOUT=1), never done.
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 50000000\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![0x7fu8; 110 * 1024];
            let start = Instant::now();
            while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(20) {
                if stream.write_all(&chunk).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        "truncated" => {
            let body = file(kind);
            respond(
                &mut stream,
                "200 OK",
                &[format!("Content-Length: {}", body.len())],
                &body[..1000],
            )
        }
        "wrongid" => ok(&mut stream, &lying_debug()),
        "notelf" => ok(&mut stream, b"<html>this is not an ELF file</html>\n"),
        "huge" => respond(
            &mut stream,
            "200 OK",
            &["Content-Length: 1000000000".to_owned()],
            &[0u8; 4096],
        ),
        "hugefile" => {
            // No Content-Length, but the file size header debuginfod sends.
            let head =
                "HTTP/1.1 200 OK\r\nX-DEBUGINFOD-SIZE: 5000000000\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&[0u8; 4096]);
        }
        "hugechunked" => {
            // No Content-Length: the size cap must cut the stream.
            let head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![0x7fu8; 64 * 1024];
            for _ in 0..64 {
                if stream.write_all(&chunk).is_err() {
                    return;
                }
            }
        }
        "redirectloop" => respond(
            &mut stream,
            "302 Found",
            &[format!("Location: {path}"), "Content-Length: 0".to_owned()],
            b"",
        ),
        "redirect" => {
            let to = path.replacen("/redirect/", "/ok/", 1);
            respond(
                &mut stream,
                "302 Found",
                &[format!("Location: {to}"), "Content-Length: 0".to_owned()],
                b"",
            )
        }
        _ => respond(&mut stream, "400 Bad Request", &[], b""),
    }
}

struct Run {
    provider: DebuginfodProvider,
    warnings: Arc<Mutex<Vec<String>>>,
}

fn provider(servers: Vec<String>, cache: Option<&Path>, timeout_s: u64, max_size: u64) -> Run {
    provider_with(config(servers, cache, timeout_s, max_size))
}

fn provider_with(config: Config) -> Run {
    let (provider, warnings) = common::debuginfod::provider_with(config);
    Run { provider, warnings }
}

fn failures(trail: &[Attempt]) -> Vec<(String, String)> {
    trail
        .iter()
        .map(|a| {
            (
                a.place.clone(),
                a.failure
                    .as_ref()
                    .map_or("served".to_owned(), ToString::to_string),
            )
        })
        .collect()
}

/// Files left in the cache for `id`: only finished files, no temporaries.
fn cache_files(cache: &Path, id: &BuildId) -> Vec<(String, u64)> {
    let Ok(rd) = std::fs::read_dir(cache.join(id.to_hex())) else {
        return Vec::new();
    };
    let mut v: Vec<(String, u64)> = rd
        .filter_map(Result::ok)
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().map(|m| m.len()).unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn good_server_downloads_verifies_caches_and_is_not_asked_again() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    let cached = cache.path().join(id.to_hex()).join("debuginfo");
    assert_eq!(src.origin(), cached.display().to_string());
    assert_eq!(
        std::fs::read(&cached).expect("cached"),
        fixture_bytes("hello.debug")
    );
    let url = format!("{}/buildid/{}/debuginfo", server.url("ok"), id.to_hex());
    assert_eq!(
        failures(&trail),
        vec![
            (cached.display().to_string(), "no file found".to_owned()),
            (url, "served".to_owned()),
        ]
    );
    assert!(run.warnings.lock().expect("w").is_empty());

    // A second run is served by the cache: no request.
    let again = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = again.provider.find(&key(&id), &mut trail).expect("cached");
    assert_symbolizes(src.as_ref());
    assert_eq!(
        failures(&trail),
        vec![(cached.display().to_string(), "served".to_owned())]
    );
    assert_eq!(server.requests().len(), 1);
}

/// Each fault, then a good server: the fault is recorded and reported, the
/// good server serves, and nothing but the verified file reaches the cache.
#[test]
fn every_fault_is_explained_and_the_next_server_serves() {
    let server = FaultServer::start();
    let id = fixture_id();
    let cases: &[(&str, &str, bool)] = &[
        ("notfound", "HTTP 404: not on this server", false),
        ("error500", "HTTP 500 Internal Server Error", true),
        ("truncated", "truncated body: ", true),
        ("wrongid", "build ID is ", true),
        ("notelf", "not an object file", true),
        (
            "huge",
            "file is 1000000000 bytes, over the DEBUGINFOD_MAXSIZE limit of 1048576",
            true,
        ),
        (
            "hugefile",
            "file is 5000000000 bytes, over the DEBUGINFOD_MAXSIZE limit of 1048576",
            true,
        ),
        (
            "hugechunked",
            "body exceeds the DEBUGINFOD_MAXSIZE limit of 1048576 bytes",
            true,
        ),
        ("redirectloop", "too many redirects", true),
    ];
    for &(scenario, expect, warns) in cases {
        let cache = tempfile::tempdir().expect("tempdir");
        let run = provider(
            vec![server.url(scenario), server.url("ok")],
            Some(cache.path()),
            5,
            1 << 20,
        );
        let mut trail = Vec::new();
        let src = run
            .provider
            .find(&key(&id), &mut trail)
            .unwrap_or_else(|| panic!("{scenario}: next server should serve"));
        assert_symbolizes(src.as_ref());
        let f = failures(&trail);
        assert_eq!(f.len(), 3, "{scenario}: {f:?}");
        let bad_url = format!("{}/buildid/{}/debuginfo", server.url(scenario), id.to_hex());
        assert_eq!(f[1].0, bad_url, "{scenario}");
        assert!(f[1].1.contains(expect), "{scenario}: {:?}", f[1].1);
        assert_eq!(f[2].1, "served", "{scenario}");
        let warnings = run.warnings.lock().expect("w").clone();
        if warns {
            assert_eq!(warnings.len(), 1, "{scenario}: {warnings:?}");
            assert!(warnings[0].contains(expect), "{scenario}: {warnings:?}");
            assert!(warnings[0].starts_with("debuginfod: "), "{warnings:?}");
        } else {
            assert!(warnings.is_empty(), "{scenario}: {warnings:?}");
        }
        assert_eq!(
            cache_files(cache.path(), &id),
            vec![("debuginfo".to_owned(), 6504)],
            "{scenario}"
        );
    }
}

#[test]
fn lying_server_alone_leaves_nothing_but_a_negative_entry() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(vec![server.url("wrongid")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    let f = failures(&trail);
    let mut flipped = id.clone();
    if let Some(last) = flipped.0.last_mut() {
        *last ^= 0xff;
    }
    let url = format!(
        "{}/buildid/{}/debuginfo",
        server.url("wrongid"),
        id.to_hex()
    );
    assert_eq!(
        f[1],
        (
            url.clone(),
            format!(
                "downloaded file: build ID is {}, expected {}",
                flipped.to_hex(),
                id.to_hex()
            )
        )
    );
    // The lie is as good as "not here": both kinds are remembered as
    // negative results (empty files) and nothing else is kept.
    assert_eq!(
        cache_files(cache.path(), &id),
        vec![("debuginfo".to_owned(), 0), ("executable".to_owned(), 0)]
    );
}

#[test]
fn hanging_server_costs_its_timeout_once_per_run() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(
        vec![server.url("hang"), server.url("ok")],
        Some(cache.path()),
        1,
        1 << 20,
    );
    let mut trail = Vec::new();
    let src = run
        .provider
        .find(&key(&id), &mut trail)
        .expect("ok server serves");
    assert_symbolizes(src.as_ref());
    let f = failures(&trail);
    assert!(f[1].1.starts_with("timed out"), "{f:?}");
    assert_eq!(f[2].1, "served");
    // Another module: the dead server is not asked again in this run.
    let other = BuildId::from_hex("0123456789abcdef").expect("hex");
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&other), &mut trail).is_none());
    let f = failures(&trail);
    assert!(
        f.iter()
            .filter(|(p, _)| p.contains("/hang/"))
            .all(|(_, why)| why
                .starts_with("not asked: server failed earlier in this run (timed out")),
        "{f:?}"
    );
    let hang_requests = server
        .requests()
        .iter()
        .filter(|p| p.starts_with("/hang/"))
        .count();
    assert_eq!(hang_requests, 1);
    // A timeout is not a negative result: the next run asks again.
    assert_eq!(
        cache_files(cache.path(), &id),
        vec![("debuginfo".to_owned(), 6504)]
    );
    assert_eq!(run.warnings.lock().expect("w").len(), 1);
}

#[test]
fn trickling_server_is_cut_off() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(vec![server.url("slow")], Some(cache.path()), 1, 1 << 20);
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    let f = failures(&trail);
    assert!(f[1].1.starts_with("stalled: "), "{f:?}");
    assert!(
        cache_files(cache.path(), &id).is_empty(),
        "no negative entry for a transient fault"
    );
}

#[test]
fn not_found_is_cached_as_negative_and_not_asked_again() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = BuildId::from_hex("deadbeef00112233").expect("hex");
    let run = provider(vec![server.url("notfound")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    assert_eq!(server.requests().len(), 2, "debuginfo then executable");
    assert_eq!(
        cache_files(cache.path(), &id),
        vec![("debuginfo".to_owned(), 0), ("executable".to_owned(), 0)]
    );
    let again = provider(vec![server.url("notfound")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    assert!(again.provider.find(&key(&id), &mut trail).is_none());
    let f = failures(&trail);
    assert_eq!(f.len(), 2, "{f:?}");
    for (_, why) in &f {
        assert!(why.starts_with("cached negative result ("), "{why}");
    }
    assert_eq!(server.requests().len(), 2, "no new request");
}

#[test]
fn executable_is_fetched_when_debuginfo_has_no_symbols() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(vec![server.url("nosyms")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    assert!(src.origin().ends_with("/executable"), "{}", src.origin());
    let f = failures(&trail);
    assert!(
        f.iter()
            .any(|(_, why)| why == "debuginfo has no symbol table or DWARF; trying the executable"),
        "{f:?}"
    );
}

#[test]
fn redirects_are_followed() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(vec![server.url("redirect")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn without_a_cache_directory_the_download_is_a_temporary_file_deleted_once_mapped() {
    let server = FaultServer::start();
    let id = fixture_id();
    let run = provider(vec![server.url("ok")], None, 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    // Nothing is left behind, however the process ends...
    let origin = PathBuf::from(src.origin());
    assert!(!origin.exists(), "{} still exists", origin.display());
    // ...and the mapped download still answers.
    assert_symbolizes(src.as_ref());
}

#[test]
fn unusable_build_ids_never_reach_a_url_or_path() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let run = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    for id in [BuildId(Vec::new()), BuildId(vec![0xab; 65])] {
        let mut trail = Vec::new();
        assert!(run.provider.find(&key(&id), &mut trail).is_none());
        assert_eq!(trail.len(), 1);
        assert!(trail[0].failure.is_some());
    }
    assert!(server.requests().is_empty());
    assert_eq!(std::fs::read_dir(cache.path()).expect("dir").count(), 0);
}

#[test]
fn offline_uses_the_cache_only() {
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(Vec::new(), Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    let f = failures(&trail);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f.iter().all(|(_, why)| why == "no file found"));
    // Fill the cache by hand, as another tool would.
    let dir = cache.path().join(id.to_hex());
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(fixture("hello.debug"), dir.join("debuginfo")).expect("copy");
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("cached");
    assert_symbolizes(src.as_ref());
}

#[test]
fn corrupt_cache_entry_is_replaced_by_a_verified_download() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let dir = cache.path().join(id.to_hex());
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("debuginfo"), lying_debug()).expect("write");
    let run = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    let f = failures(&trail);
    assert!(f[0].1.contains("build ID is "), "{f:?}");
    assert_eq!(
        std::fs::read(dir.join("debuginfo")).expect("read"),
        fixture_bytes("hello.debug")
    );
}

#[test]
fn whole_download_time_is_bounded_by_maxtime() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider_with(Config {
        servers: vec![server.url("slow")],
        cache_root: Some(cache.path().to_path_buf()),
        timeout: Duration::from_secs(30),
        max_time: Some(Duration::from_secs(1)),
        budget: Duration::from_secs(600),
        max_size: None,
        ca_file: None,
        warnings: Vec::new(),
    });
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    let f = failures(&trail);
    assert!(f[1].1.starts_with("timed out"), "{f:?}");
}

#[test]
fn https_to_a_plain_http_server_fails_cleanly() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let https = server.url("ok").replacen("http://", "https://", 1);
    let run = provider(
        vec![https, server.url("ok")],
        Some(cache.path()),
        2,
        1 << 20,
    );
    let mut trail = Vec::new();
    let src = run
        .provider
        .find(&key(&id), &mut trail)
        .expect("http server serves");
    assert_symbolizes(src.as_ref());
    let f = failures(&trail);
    assert!(f[1].0.starts_with("https://127.0.0.1:"), "{f:?}");
    assert_ne!(f[1].1, "served");
    assert_eq!(f[2].1, "served");
    assert_eq!(run.warnings.lock().expect("w").len(), 1);
}

#[test]
fn concurrent_downloads_of_one_build_id_share_the_cache_safely() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let url = server.url("ok");
            let root = cache.path().to_path_buf();
            let id = id.clone();
            std::thread::spawn(move || {
                let run = provider(vec![url], Some(&root), 5, 1 << 20);
                let mut trail = Vec::new();
                let src = run.provider.find(&key(&id), &mut trail).expect("found");
                assert_symbolizes(src.as_ref());
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    assert_eq!(
        cache_files(cache.path(), &id),
        vec![("debuginfo".to_owned(), 6504)]
    );
}

#[test]
fn unwritable_cache_still_symbolizes_from_a_temporary_file() {
    let server = FaultServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    // A cache root below a regular file cannot be created, even by root.
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").expect("write");
    let id = fixture_id();
    let run = provider(
        vec![server.url("ok")],
        Some(&blocker.join("cache")),
        5,
        1 << 20,
    );
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    let warnings = run.warnings.lock().expect("w").clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!(
            "debuginfod: cannot write to the cache {}/cache: ",
            blocker.display()
        )),
        "{warnings:?}"
    );
}

#[test]
fn server_errors_leave_no_trace_in_the_cache() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let run = provider(
        vec![server.url("error500"), server.url("redirectloop")],
        Some(cache.path()),
        5,
        1 << 20,
    );
    let mut trail = Vec::new();
    assert!(run.provider.find(&key(&id), &mut trail).is_none());
    assert_eq!(trail.len(), 6, "{trail:?}");
    // Transient faults: no negative entry, not even an empty directory;
    // only the cleaning-interval marker elfutils also keeps at the root.
    let names: Vec<String> = std::fs::read_dir(cache.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["cache_clean_interval_s"]);
    // Each server failed once: neither is asked for the executable.
    assert_eq!(run.warnings.lock().expect("w").len(), 2);
    let skipped = failures(&trail)
        .iter()
        .filter(|(_, why)| why.starts_with("not asked: server failed earlier in this run"))
        .count();
    assert_eq!(skipped, 2, "{trail:?}");
}

/// An HTTPS server (rustls, test CA from testdata/debuginfod/tls) that
/// serves hello.debug for any `/buildid/<hex>/debuginfo` request.
struct TlsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl TlsServer {
    fn start() -> TlsServer {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(fixture("tls/server.pem"))
                .expect("server.pem")
                .collect::<Result<_, _>>()
                .expect("certs");
        let key = PrivateKeyDer::from_pem_file(fixture("tls/server.key")).expect("server.key");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let accept = std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok((tcp, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let config = config.clone();
                std::thread::spawn(move || {
                    let _ = tcp.set_nonblocking(false);
                    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, tcp);
                    let mut req = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
                        match tls.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => req.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&req);
                    let path = text.split_whitespace().nth(1).unwrap_or("");
                    let body = if path.ends_with("/debuginfo") {
                        fixture_bytes("hello.debug")
                    } else {
                        Vec::new()
                    };
                    let status = if body.is_empty() {
                        "404 Not Found"
                    } else {
                        "200 OK"
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = tls.write_all(head.as_bytes());
                    let _ = tls.write_all(&body);
                    let _ = tls.flush();
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                });
            }
        });
        TlsServer {
            addr,
            stop,
            accept: Some(accept),
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn https_with_the_configured_ca_is_served_and_an_untrusted_certificate_is_not() {
    let tls = TlsServer::start();
    let plain = FaultServer::start();
    let id = fixture_id();
    let https = format!("https://{}", tls.addr);

    // Trusting the test CA (as SSL_CERT_FILE would): served over TLS.
    let cache = tempfile::tempdir().expect("tempdir");
    let run = provider_with(Config {
        servers: vec![https.clone()],
        cache_root: Some(cache.path().to_path_buf()),
        timeout: Duration::from_secs(5),
        max_time: None,
        budget: Duration::from_secs(600),
        max_size: Some(1 << 20),
        ca_file: Some(fixture("tls/ca.pem")),
        warnings: Vec::new(),
    });
    let mut trail = Vec::new();
    let src = run
        .provider
        .find(&key(&id), &mut trail)
        .expect("served over https");
    assert_symbolizes(src.as_ref());
    assert_eq!(
        failures(&trail)[1],
        (
            format!("{https}/buildid/{}/debuginfo", id.to_hex()),
            "served".to_owned()
        )
    );
    assert!(run.warnings.lock().expect("w").is_empty());

    // With only the built-in roots the certificate is refused: one
    // diagnostic, then the next server serves.
    let cache = tempfile::tempdir().expect("tempdir");
    let run = provider_with(Config {
        servers: vec![https.clone(), plain.url("ok")],
        cache_root: Some(cache.path().to_path_buf()),
        timeout: Duration::from_secs(5),
        max_time: None,
        budget: Duration::from_secs(600),
        max_size: Some(1 << 20),
        ca_file: None,
        warnings: Vec::new(),
    });
    let mut trail = Vec::new();
    let src = run
        .provider
        .find(&key(&id), &mut trail)
        .expect("next server serves");
    assert_symbolizes(src.as_ref());
    let f = failures(&trail);
    assert!(f[1].1.contains("UnknownIssuer"), "{f:?}");
    assert_eq!(f[2].1, "served");
    let warnings = run.warnings.lock().expect("w").clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn symfilter_lookup_over_https_trusts_ssl_cert_file() {
    let tls = TlsServer::start();
    let id = fixture_id();
    let expected = std::fs::read_to_string(fixture("lookup.expected")).expect("expected");
    let addrs: Vec<&str> = expected
        .lines()
        .map(|l| l.split(' ').next().expect("addr"))
        .collect();
    let run = |ca: &Path| {
        let cache = tempfile::tempdir().expect("tempdir");
        let empty = tempfile::tempdir().expect("tempdir");
        common::command()
            .args(["lookup", "--build-id", &id.to_hex(), "--build-id-dir"])
            .arg(empty.path())
            .args(["--debuginfod", &format!("https://{}", tls.addr)])
            .args(&addrs)
            .env("DEBUGINFOD_CACHE_PATH", cache.path())
            .env("SSL_CERT_FILE", ca)
            .env_remove("DEBUGINFOD_URLS")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run symfilter")
    };
    let out = run(&fixture("tls/ca.pem"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{out:?}");
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{out:?}");

    // A bundle without the test CA (the server certificate itself is no CA).
    let out = run(&fixture("tls/server.pem"));
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().next().unwrap_or("");
    assert_eq!(
        first,
        format!(
            "symfilter: debuginfod: https://{}/buildid/{}/debuginfo: TLS: invalid peer certificate: UnknownIssuer",
            tls.addr,
            id.to_hex()
        )
    );
}

#[test]
fn dwz_supplementary_file_is_fetched_by_its_build_id() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = dwz_id("build-id");
    let sup = dwz_id("common-build-id");
    let run = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    // The inlined frame's name lives in the supplementary file only.
    let expected = std::fs::read_to_string(fixture("dwz/lookup.expected")).expect("expected");
    let lines: Vec<&str> = expected.lines().collect();
    let a = lines[0].split(' ').next().expect("addr");
    let addr = u64::from_str_radix(a.trim_start_matches("0x"), 16).expect("addr");
    let info = src.lookup_code(addr, CodeWant::default()).expect("code");
    let got: Vec<String> = info.frames.iter().map(|fr| frame_line(a, fr)).collect();
    assert_eq!(got, lines);
    let served: Vec<String> = failures(&trail)
        .into_iter()
        .filter(|(_, why)| why == "served")
        .map(|(place, _)| place)
        .collect();
    assert_eq!(
        served,
        vec![
            format!("{}/buildid/{}/debuginfo", server.url("ok"), id.to_hex()),
            format!("{}/buildid/{}/debuginfo", server.url("ok"), sup.to_hex()),
        ]
    );
    assert_eq!(
        cache_files(cache.path(), &sup),
        vec![("debuginfo".to_owned(), 1183)]
    );
    drop(src);

    // Next run: both from the cache, no request.
    let before = server.requests().len();
    let again = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = again.provider.find(&key(&id), &mut trail).expect("cached");
    let info = src.lookup_code(addr, CodeWant::default()).expect("code");
    assert_eq!(info.frames[0].function.as_deref(), Some("shared_scale"));
    assert_eq!(server.requests().len(), before);
}

/// Run `symfilter lookup` for the fixture against `url`, through `script`
/// (util-linux, Essential in Debian) when `tty`, so stderr is a terminal.
fn lookup_via(url: &str, tty: bool) -> (std::process::Output, String) {
    let cache = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let expected = std::fs::read_to_string(fixture("lookup.expected")).expect("expected");
    let addr = expected.split(' ').next().expect("addr").to_owned();
    let bin = env!("CARGO_BIN_EXE_symfilter");
    let args = format!(
        "{bin} lookup --build-id {} --build-id-dir {} --debuginfod {url} {addr}",
        id.to_hex(),
        empty.path().display()
    );
    let mut cmd = if tty {
        let mut c = std::process::Command::new("script");
        c.args(["-qefc", &args, "/dev/null"]);
        c
    } else {
        let mut c = std::process::Command::new("sh");
        c.args(["-c", &args]);
        c
    };
    let out = cmd
        .env("DEBUGINFOD_CACHE_PATH", cache.path())
        .env_remove("DEBUGINFOD_URLS")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    let first = expected.lines().next().unwrap_or("").to_owned();
    (out, first)
}

#[test]
fn progress_line_shows_on_a_terminal_only_and_is_erased() {
    let server = FaultServer::start();
    let url = server.url("delayed");
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or("")
        .to_owned();
    let hex = fixture_id().to_hex();

    let (out, first) = lookup_via(&url, true);
    assert!(out.status.success(), "{out:?}");
    // Through the pty, stdout and stderr are one stream, CRLF line ends.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let waiting =
        format!("\r\x1b[Ksymfilter: debuginfod: {hex} from {host}: waiting for the server (");
    assert!(text.contains(&waiting), "{text:?}");
    // Erased before the result is printed.
    let erased_then_result = format!("\r\x1b[K{first}\r\n");
    assert!(text.contains(&erased_then_result), "{text:?}");

    // Not a terminal: no progress at all.
    let (out, first) = lookup_via(&url, false);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&first));
}

/// The filter (`--format llvm`) with debuginfod as the only source, fed
/// markup.log through a pipe: the first line, then (once its output has
/// appeared) the rest. Returns stdout, stderr and whether the first line
/// came out before the rest was sent.
fn filter_via(url: &str, timeout_s: u64) -> (String, String, bool) {
    use std::process::Stdio;
    use std::sync::mpsc;
    let cache = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let log = std::fs::read_to_string(fixture("markup.log")).expect("log");
    let (first, rest) = log.split_at(log.find('\n').expect("a line") + 1);
    let mut child = common::command()
        .args(["--format", "llvm", "--build-id-dir"])
        .arg(empty.path())
        .args(["--debuginfod", url])
        .env("DEBUGINFOD_CACHE_PATH", cache.path())
        .env("DEBUGINFOD_TIMEOUT", timeout_s.to_string())
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run symfilter");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    stdin.write_all(first.as_bytes()).expect("write");
    stdin.flush().expect("flush");
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < first.len() && Instant::now() < deadline {
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(50)) {
            got.extend_from_slice(&chunk);
        }
    }
    let streamed = got == first.as_bytes();
    stdin.write_all(rest.as_bytes()).expect("write");
    drop(stdin);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    let _ = reader.join();
    got.extend(rx.try_iter().flatten());
    assert!(status.success(), "{status:?} {stderr}");
    (String::from_utf8_lossy(&got).into_owned(), stderr, streamed)
}

#[test]
fn filter_streams_in_input_order_while_a_download_is_in_flight() {
    let server = FaultServer::start();
    let (out, stderr, streamed) = filter_via(&server.url("delayed"), 10);
    assert!(
        streamed,
        "the first line came out before the module's download"
    );
    let expected = std::fs::read_to_string(fixture("markup.llvm.expected")).expect("expected");
    assert_eq!(out, expected);
    assert_eq!(stderr, "");
}

#[test]
fn filter_goes_on_without_symbols_after_a_hanging_or_lying_server() {
    let server = FaultServer::start();
    let expected =
        std::fs::read_to_string(fixture("markup.llvm.nosyms.expected")).expect("expected");
    let hex = fixture_id().to_hex();

    // Hanging: one timeout (the executable is not asked of a dead server).
    let url = server.url("hang");
    let (out, stderr, _) = filter_via(&url, 1);
    assert_eq!(out, expected);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "symfilter: debuginfod: {url}/buildid/{hex}/debuginfo: timed out"
        )),
        "{stderr}"
    );
    assert!(
        lines[1].contains("no symbols for module #0 \"hello\""),
        "{stderr}"
    );
    let hangs = server
        .requests()
        .iter()
        .filter(|p| p.starts_with("/hang/"))
        .count();
    assert_eq!(hangs, 1);

    // Lying: both answers discarded, one line each.
    let url = server.url("wrongid");
    let (out, stderr, _) = filter_via(&url, 5);
    assert_eq!(out, expected);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    for (line, kind) in lines.iter().zip(["debuginfo", "executable"]) {
        assert!(
            line.starts_with(&format!(
                "symfilter: debuginfod: {url}/buildid/{hex}/{kind}: downloaded file: build ID is "
            )) && line.ends_with("; discarded"),
            "{stderr}"
        );
    }
}

#[test]
fn filter_explain_lists_every_cache_probe_and_server() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let hex = fixture_id().to_hex();
    let out = common::command()
        .args(["--format", "llvm", "--explain", "--build-id-dir"])
        .arg(empty.path())
        .args(["--debuginfod", &server.url("notfound")])
        .args(["--debuginfod", &server.url("error500")])
        .args(["--debuginfod", &server.url("ok")])
        .arg(fixture("markup.log"))
        .env("DEBUGINFOD_CACHE_PATH", cache.path())
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .expect("run symfilter");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(fixture("markup.llvm.expected")).expect("expected")
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_once("[debuginfod] ").map(|(_, rest)| rest))
        .collect();
    let url = |s: &str| format!("{}/buildid/{hex}/debuginfo", server.url(s));
    assert_eq!(
        ours,
        vec![
            format!(
                "{}: no file found",
                cache.path().join(&hex).join("debuginfo").display()
            ),
            format!("{}: HTTP 404: not on this server", url("notfound")),
            format!("{}: HTTP 500 Internal Server Error", url("error500")),
            format!("{}: found", url("ok")),
        ],
        "{stderr}"
    );
    // The 500 is also a diagnostic of its own; the 404 is not.
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("symfilter: debuginfod: "))
            .collect::<Vec<_>>(),
        vec![format!(
            "symfilter: debuginfod: {}: HTTP 500 Internal Server Error",
            url("error500")
        )]
    );
}

#[test]
fn stale_cache_entries_are_cleaned_once_due_but_never_offline() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let long_ago = std::time::SystemTime::now() - Duration::from_secs(30 * 86_400);
    let age = |p: &Path| {
        std::fs::File::open(p)
            .expect("open")
            .set_times(
                std::fs::FileTimes::new()
                    .set_accessed(long_ago)
                    .set_modified(long_ago),
            )
            .expect("times");
    };
    let marker = cache.path().join("cache_clean_interval_s");
    let stale_dir = cache.path().join("00aa00aa");
    std::fs::create_dir_all(&stale_dir).expect("mkdir");
    let stale = stale_dir.join("debuginfo");
    std::fs::write(&stale, b"old").expect("write");
    std::fs::write(&marker, b"86400").expect("write");
    age(&stale);
    age(&marker);

    // Offline: nothing could be fetched again, so nothing is removed.
    let offline = provider(Vec::new(), Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    assert!(offline.provider.find(&key(&id), &mut trail).is_none());
    assert!(stale.exists());

    let run = provider(vec![server.url("ok")], Some(cache.path()), 5, 1 << 20);
    let mut trail = Vec::new();
    let src = run.provider.find(&key(&id), &mut trail).expect("found");
    assert_symbolizes(src.as_ref());
    assert!(!stale.exists() && !stale_dir.exists());
    let cleaned_at = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .expect("marker");
    assert!(cleaned_at > long_ago);
}

/// The whole log arrives in one read: the lines before the element that
/// starts a download must still come out before the download ends (the
/// server takes 2.5 s), not after it.
#[test]
fn filter_writes_earlier_lines_of_the_same_read_before_a_download() {
    use std::process::Stdio;
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let log = std::fs::read(fixture("markup.log")).expect("log");
    let mut child = common::command()
        .args(["--format", "llvm", "--build-id-dir"])
        .arg(empty.path())
        .args(["--debuginfod", &server.url("delayed")])
        .env("DEBUGINFOD_CACHE_PATH", cache.path())
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run symfilter");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let started = Instant::now();
    stdin.write_all(&log).expect("write");
    drop(stdin);
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while !first.ends_with(b"\n") && stdout.read(&mut byte).unwrap_or(0) == 1 {
        first.push(byte[0]);
    }
    let first_at = started.elapsed();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).expect("read");
    let status = child.wait().expect("wait");
    let done_at = started.elapsed();
    assert!(status.success());
    assert_eq!(first, b"first plain line\n");
    assert!(
        done_at >= Duration::from_millis(2500),
        "the download was not delayed: {done_at:?}"
    );
    assert!(
        first_at < Duration::from_millis(2000),
        "the first line waited for the download: {first_at:?} of {done_at:?}"
    );
    first.extend_from_slice(&rest);
    let expected = std::fs::read(fixture("markup.llvm.expected")).expect("expected");
    assert_eq!(first, expected);
}

/// `-q` silences the debuginfod source too: a failing server and a bad
/// `DEBUGINFOD_URLS` entry print nothing, and the output is unchanged.
#[test]
fn quiet_filter_prints_no_debuginfod_warnings() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let run = |quiet: bool| {
        let mut cmd = common::command();
        cmd.args(["--format", "llvm", "--build-id-dir"])
            .arg(empty.path())
            .args(["--debuginfod", &server.url("error500")])
            .arg(fixture("markup.log"))
            .env("DEBUGINFOD_CACHE_PATH", cache.path())
            .env("DEBUGINFOD_URLS", "ftp://not-http.invalid");
        if quiet {
            cmd.arg("-q");
        }
        cmd.output().expect("run symfilter")
    };
    let loud = run(false);
    assert!(
        !loud.stderr.is_empty(),
        "the failures are reported without -q"
    );
    let quiet = run(true);
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    assert_eq!(quiet.stdout, loud.stdout);
    assert_eq!(
        String::from_utf8_lossy(&quiet.stdout),
        std::fs::read_to_string(fixture("markup.llvm.nosyms.expected")).expect("expected")
    );
}

/// A server that trickles just fast enough for the per-window check holds
/// the filter no longer than the run's budget (`--debuginfod-timeout`):
/// its download is cut, and no server is asked for the next module. The
/// child gets an alarm (SIGALRM kills it) well past the budget, so a
/// filter that waited on would fail the test.
#[test]
fn a_trickling_server_cannot_hold_the_filter_beyond_the_runs_budget() {
    use std::os::unix::process::CommandExt;
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let id = fixture_id();
    let log = format!(
        "{{{{{{module:0:hello:elf:{id}}}}}}}\n\
         {{{{{{mmap:0x1000:0x2000:load:0:rx:0x0}}}}}}\n\
         {{{{{{module:1:other:elf:0123456789abcdef0123}}}}}}\n\
         {{{{{{mmap:0x10000:0x1000:load:1:rx:0x0}}}}}}\n\
         first {{{{{{pc:0x1130}}}}}}\n\
         second {{{{{{pc:0x10010}}}}}}\n\
         last\n",
        id = id.to_hex()
    );
    let mut cmd = common::command();
    cmd.args([
        "--no-default-paths",
        "--explain",
        "--debuginfod-timeout",
        "2",
    ])
    .args(["--debuginfod", &server.url("trickle")])
    .args(["--debuginfod", &server.url("ok")])
    .env("DEBUGINFOD_CACHE_PATH", cache.path())
    .env("DEBUGINFOD_TIMEOUT", "1")
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    // SAFETY: alarm() is async-signal-safe; the timer survives exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::alarm(30);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("run symfilter");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(log.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    assert!(
        stdout.contains("second") && stdout.ends_with("last\n"),
        "{stdout}"
    );
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "/ok/buildid/{}/debuginfo: not asked: this run's debuginfod time (2 s) is spent",
            id.to_hex()
        )),
        "{stderr}"
    );
    // Both modules were asked for at once (in the background) from the
    // trickling server; nothing after the budget was spent: neither
    // executable, nor anything from the good server.
    let mut asked = server.requests();
    asked.sort();
    let want = vec![
        "/trickle/buildid/0123456789abcdef0123/debuginfo".to_owned(),
        format!("/trickle/buildid/{}/debuginfo", id.to_hex()),
    ];
    assert_eq!(asked, want);
}

/// The modules of a log are looked for as soon as their mmaps are read,
/// several at once: a server that takes a second per request sees as many
/// requests under way together as there are workers, never more, and the
/// output is the input, in order.
#[test]
fn modules_are_fetched_several_at_once_and_output_keeps_input_order() {
    let server = FaultServer::start();
    let cache = tempfile::tempdir().expect("tempdir");
    let mut log = String::new();
    for m in 0..6u64 {
        log.push_str(&format!(
            "{{{{{{module:{m}:lib{m}.so:elf:{:040x}}}}}}}\n\
             {{{{{{mmap:{:#x}:0x1000:load:{m}:rx:0x0}}}}}}\n",
            0xf00d_0000 + m,
            0x10_0000 * (m + 1)
        ));
    }
    for m in 0..6u64 {
        log.push_str(&format!(
            "line {m} {{{{{{pc:{:#x}}}}}}}\n",
            0x10_0000 * (m + 1) + 0x10
        ));
    }
    let mut child = common::command()
        .args(["--no-default-paths", "-q", "--color=never"])
        .args(["--debuginfod", &server.url("slowmiss")])
        .env("DEBUGINFOD_CACHE_PATH", cache.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run symfilter");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(log.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("line ")).collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    for (m, l) in lines.iter().enumerate() {
        assert!(l.starts_with(&format!("line {m} ")), "{stdout}");
    }
    // Every module's debuginfo and executable were asked for, once.
    assert_eq!(server.requests().len(), 12, "{:?}", server.requests());
    // Several downloads were under way at once, never more than the
    // workers plus the filter's own thread (which searches itself for a
    // module it needs whose search has not started). How many overlapped
    // depends on scheduling, so the test asks for overlap and the bound,
    // not for an exact number.
    let most = SLOW_MOST.load(Ordering::SeqCst);
    assert!(
        (2..=symfilter::symbols::prefetch::WORKERS + 1).contains(&most),
        "{most} downloads at once"
    );
}
