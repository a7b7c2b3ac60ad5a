//! One HTTP(S) download with hard limits: connect, first-response and
//! per-read timeouts, a minimum transfer rate (elfutils: 100 KiB per
//! timeout window), an optional whole-transfer time, a size cap, and a
//! bounded number of redirects. The body streams straight to a file; it is
//! never held in memory.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig, parse_pem};

use super::config::{Config, MAX_REDIRECTS};

/// Bytes a body must deliver per timeout window (elfutils' low-speed
/// limit).
pub const MIN_BYTES_PER_WINDOW: u64 = 100 * 1024;

/// Why a download failed. Display is one line, without the URL (the caller
/// names it).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FetchError {
    #[error("HTTP {0}: not on this server")]
    NotFound(u16),
    #[error("HTTP {}", status_text(*.0))]
    Status(u16),
    #[error("cannot connect: {0}")]
    Unreachable(String),
    #[error("timed out ({0})")]
    TimedOut(String),
    #[error("stalled: {got} bytes in {secs} s, below 100 KiB per {secs} s")]
    TooSlow { got: u64, secs: u64 },
    #[error("TLS: {0}")]
    Tls(String),
    #[error("too many redirects (more than {MAX_REDIRECTS})")]
    TooManyRedirects,
    #[error("{}", too_large_text(*.limit, *.announced))]
    TooLarge { limit: u64, announced: Option<u64> },
    #[error("truncated body: {got} of {expected} bytes")]
    Truncated { got: u64, expected: u64 },
    #[error("transfer failed: {0}")]
    Transfer(String),
    #[error("cannot write the download: {0}")]
    Local(String),
}

fn status_text(code: u16) -> String {
    match ureq::http::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("{code} {reason}"),
        None => code.to_string(),
    }
}

fn too_large_text(limit: u64, announced: Option<u64>) -> String {
    match announced {
        Some(n) => format!("file is {n} bytes, over the DEBUGINFOD_MAXSIZE limit of {limit}"),
        None => format!("body exceeds the DEBUGINFOD_MAXSIZE limit of {limit} bytes"),
    }
}

impl FetchError {
    /// The server gave a definite answer (not there, or a file we will never
    /// accept): worth a negative cache entry.
    pub fn is_definitive(&self) -> bool {
        matches!(self, FetchError::NotFound(_) | FetchError::TooLarge { .. })
    }

    /// The server is unreachable or unresponsive: skip it for the rest of
    /// the run so it costs its timeout once, not once per module.
    /// A server that failed (as opposed to answering that it has no such
    /// file, or sending one too large) is not asked again either.
    pub fn server_is_dead(&self) -> bool {
        matches!(
            self,
            FetchError::Unreachable(_)
                | FetchError::TimedOut(_)
                | FetchError::TooSlow { .. }
                | FetchError::Tls(_)
                | FetchError::Status(_)
                | FetchError::TooManyRedirects
                | FetchError::Truncated { .. }
                | FetchError::Transfer(_)
        )
    }
}

pub struct Client {
    config: Config,
    /// Built on first use: reading the CA bundle is not free, and most
    /// runs never get past the local sources.
    agents: OnceLock<Agents>,
}

struct Agents {
    proxied: ureq::Agent,
    /// For loopback servers: never through a proxy from the environment
    /// (a proxy cannot reach this machine's loopback).
    direct: ureq::Agent,
}

impl Client {
    pub fn new(config: &Config) -> Client {
        Client {
            config: config.clone(),
            agents: OnceLock::new(),
        }
    }

    fn agents(&self) -> &Agents {
        self.agents.get_or_init(|| {
            let tls = tls_config(self.config.ca_file.as_deref());
            Agents {
                proxied: Client::agent(&self.config, ureq::Proxy::try_from_env(), tls.clone()),
                direct: Client::agent(&self.config, None, tls),
            }
        })
    }

    fn agent(config: &Config, proxy: Option<ureq::Proxy>, tls: TlsConfig) -> ureq::Agent {
        let t = Some(config.timeout);
        ureq::Agent::config_builder()
            .proxy(proxy)
            .tls_config(tls)
            .http_status_as_error(false)
            .max_redirects(MAX_REDIRECTS)
            .timeout_resolve(t)
            .timeout_connect(t)
            .timeout_send_request(t)
            .timeout_recv_response(t)
            .timeout_per_read(t)
            .timeout_global(config.max_time)
            .user_agent(format!("symfilter/{}", env!("CARGO_PKG_VERSION")))
            // Debug files are served as is; a compressed body would make
            // Content-Length useless for the size and truncation checks.
            .accept_encoding("identity")
            .build()
            .into()
    }

    /// GET `url` up to a successful response's headers: the body is not
    /// read yet, so nothing needs to be written anywhere for a failure.
    /// The whole transfer, body included, ends by `within` at the latest
    /// (and by the configured `max_time`).
    pub fn start(&self, url: &str, within: Option<Duration>) -> Result<Incoming, FetchError> {
        let agents = self.agents();
        let agent = if is_loopback(url) {
            &agents.direct
        } else {
            &agents.proxied
        };
        let https = url.starts_with("https://");
        let deadline = match (self.config.max_time, within) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let response = agent
            .get(url)
            .config()
            .timeout_global(deadline)
            .build()
            .call()
            .map_err(|e| classify(e, https))?;
        let status = response.status().as_u16();
        match status {
            200 => {}
            404 | 410 => return Err(FetchError::NotFound(status)),
            _ => return Err(FetchError::Status(status)),
        }
        // A body that is compressed anyway (a proxy) is decoded by ureq: its
        // Content-Length then counts encoded bytes, not what we receive.
        let encoded = response
            .headers()
            .get("content-encoding")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| !v.trim().eq_ignore_ascii_case("identity"));
        let announced = response
            .headers()
            .get("content-length")
            .filter(|_| !encoded)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // debuginfod servers also say the file's size in X-DEBUGINFOD-SIZE,
        // which holds when the transfer is compressed.
        let file_size = response
            .headers()
            .get("x-debuginfod-size")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let (Some(limit), Some(n)) = (self.config.max_size, announced.or(file_size))
            && n > limit
        {
            return Err(FetchError::TooLarge {
                limit,
                announced: Some(n),
            });
        }
        Ok(Incoming {
            body: response.into_body().into_reader(),
            announced,
            timeout: self.config.timeout,
            max_size: self.config.max_size,
        })
    }
}

/// A 200 response whose body is still to be read.
pub struct Incoming {
    body: ureq::BodyReader<'static>,
    /// Content-Length, when it counts the bytes we will read.
    announced: Option<u64>,
    timeout: Duration,
    max_size: Option<u64>,
}

impl Incoming {
    /// Copy the body into `out`, enforcing the size cap, the transfer rate
    /// and (when announced) the exact length. `progress(received, total)` is
    /// called as bytes arrive. Returns the number of bytes written.
    pub fn save(
        self,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64, Option<u64>),
    ) -> Result<u64, FetchError> {
        let Incoming {
            mut body,
            announced,
            timeout,
            max_size,
        } = self;
        let mut buf = vec![0u8; 64 * 1024];
        let mut got: u64 = 0;
        let mut window_start = Instant::now();
        let mut window_bytes: u64 = 0;
        loop {
            let n = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(classify_io(e, got, announced)),
            };
            got = got.saturating_add(n as u64);
            if let Some(limit) = max_size
                && got > limit
            {
                return Err(FetchError::TooLarge {
                    limit,
                    announced: None,
                });
            }
            out.write_all(&buf[..n])
                .map_err(|e| FetchError::Local(e.to_string()))?;
            progress(got, announced);
            window_bytes = window_bytes.saturating_add(n as u64);
            let elapsed = window_start.elapsed();
            if elapsed >= timeout {
                if window_bytes < MIN_BYTES_PER_WINDOW {
                    return Err(FetchError::TooSlow {
                        got: window_bytes,
                        secs: timeout.as_secs(),
                    });
                }
                window_start = Instant::now();
                window_bytes = 0;
            }
        }
        if let Some(expected) = announced
            && got != expected
        {
            return Err(FetchError::Truncated { got, expected });
        }
        out.flush().map_err(|e| FetchError::Local(e.to_string()))?;
        Ok(got)
    }
}

/// Trust the certificates of `ca_file` (PEM) when it holds any; else the
/// Mozilla roots built into ureq.
fn tls_config(ca_file: Option<&Path>) -> TlsConfig {
    let certs: Vec<Certificate<'static>> = ca_file
        .and_then(|p| std::fs::read(p).ok())
        .map(|pem| {
            parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let roots = if certs.is_empty() {
        RootCerts::WebPki
    } else {
        RootCerts::new_with_certs(&certs)
    };
    TlsConfig::builder().root_certs(roots).build()
}

/// `http(s)://` + a loopback host (`localhost`, 127.0.0.0/8, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Errors before a response: the server is unreachable, silent, or speaks
/// no acceptable TLS.
fn classify(e: ureq::Error, https: bool) -> FetchError {
    match e {
        ureq::Error::Timeout(t) => FetchError::TimedOut(t.to_string()),
        ureq::Error::TooManyRedirects => FetchError::TooManyRedirects,
        ureq::Error::Rustls(_)
        | ureq::Error::Tls(_)
        | ureq::Error::Pem(_)
        | ureq::Error::TlsRequired => FetchError::Tls(e.to_string()),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
            FetchError::Unreachable(e.to_string())
        }
        ureq::Error::Io(io) => match io.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                FetchError::TimedOut(io.to_string())
            }
            // rustls reports handshake and certificate failures as
            // InvalidData.
            io::ErrorKind::InvalidData if https => FetchError::Tls(io.to_string()),
            io::ErrorKind::InvalidData => FetchError::Transfer(io.to_string()),
            // Name resolution, refused or reset connections: nothing useful
            // will come from this server in this run.
            _ => FetchError::Unreachable(io.to_string()),
        },
        other => FetchError::Transfer(other.to_string()),
    }
}

fn classify_io(e: io::Error, got: u64, announced: Option<u64>) -> FetchError {
    let inner = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<ureq::Error>())
        .map(|u| match u {
            ureq::Error::Timeout(t) => FetchError::TimedOut(t.to_string()),
            other => FetchError::Transfer(other.to_string()),
        });
    match inner {
        Some(FetchError::TimedOut(t)) => FetchError::TimedOut(t),
        _ => match (e.kind(), announced) {
            (io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock, _) => {
                FetchError::TimedOut(e.to_string())
            }
            (io::ErrorKind::UnexpectedEof, Some(expected)) => {
                FetchError::Truncated { got, expected }
            }
            _ => FetchError::Transfer(e.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:8002",
            "http://127.1.2.3/x",
            "https://localhost/",
            "http://[::1]:80/buildid",
            "http://user@127.0.0.1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "http://debuginfod.debian.net",
            "http://127.0.0.1.example.com/",
            "http://[::2]/",
            "http://localhost.evil/",
            "nonsense",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }
}
