//! Demultiplexing interleaved logs: which process a line comes from.
//!
//! Logs collected by syslog, journald, Android logcat, test runners or
//! container runtimes interleave several processes line by line, each line
//! starting with a prefix that names its process. [`Recognizer`] finds that
//! prefix (the *lead*, kept in the output) and the *key* inside it that
//! names the process; [`lru::Table`] keeps one value per key, at most a
//! fixed number of them. Nothing here knows of markup, contexts or output:
//! the filter keeps one context per key with them.
//!
//! What each preset recognises (the key in brackets `<...>`):
//!
//! * `syslog`: `TIMESTAMP <host prog[pid]>: ` (`[pid]` optional); TIMESTAMP
//!   is `Nov 25 05:20:01` (fractions allowed) or ISO 8601
//!   (`2026-11-25T05:20:01.123+00:00`). This also matches journald's
//!   `short`, `short-precise` and `short-iso` outputs.
//! * `journald`: the same, but a line without the prefix continues the last
//!   key's record (journalctl writes a message's further lines indented under
//!   its first).
//! * `logcat`: Android's `threadtime` (`11-25 05:20:01.123  <1234>  1240 E
//!   tag: `, with an optional year), `time` (`11-25 05:20:01.123 E/tag(
//!   <1234>): `) and `brief` (`E/tag( <1234>): `): the key is the pid.
//! * `bracket`: `[<pid>] `, `[<pid>:tid] ` or `[<pid>.tid] ` at the start of
//!   the line. A pid written with leading zeros is not one (line counters
//!   look like that).
//! * `fuchsia`: `[timestamp][<pid>][tid]`, then any further `[tag]` groups
//!   and one space.
//! * `auto`: the first of syslog, logcat, fuchsia and bracket that a line
//!   carries; from then on that preset only.
//! * a regular expression with a named group `key`, matched at the start of
//!   each line: the lead is the whole match.
//!
//! Lines without a recognised prefix belong to no key (the filter's shared
//! default context), except under `journald`.

pub mod lru;

use std::ops::Range;

/// The longest key taken; a longer one is not a key (its line belongs to
/// none), so a hostile log cannot make the table hold big keys.
pub const MAX_KEY: usize = 256;

/// A named prefix format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Syslog,
    Journald,
    Logcat,
    Bracket,
    Fuchsia,
}

impl Preset {
    const ALL: [(&'static str, Preset); 5] = [
        ("syslog", Preset::Syslog),
        ("journald", Preset::Journald),
        ("logcat", Preset::Logcat),
        ("bracket", Preset::Bracket),
        ("fuchsia", Preset::Fuchsia),
    ];

    /// Tried in this order by `auto`.
    const AUTO: [Preset; 4] = [
        Preset::Syslog,
        Preset::Logcat,
        Preset::Fuchsia,
        Preset::Bracket,
    ];

    pub fn name(self) -> &'static str {
        Preset::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("", |(n, _)| n)
    }

    fn recognise(self, line: &[u8]) -> Option<Prefix> {
        match self {
            Preset::Syslog | Preset::Journald => syslog(line),
            Preset::Logcat => logcat(line),
            Preset::Bracket => bracket(line),
            Preset::Fuchsia => fuchsia(line),
        }
    }
}

/// How lines are told apart (`--demux=HOW`).
#[derive(Clone, Debug)]
pub enum How {
    Auto,
    Preset(Preset),
    /// Anchored at the start of the line; has a group named `key`.
    Regex(regex::bytes::Regex),
}

impl std::str::FromStr for How {
    type Err = String;

    fn from_str(s: &str) -> Result<How, String> {
        if s == "auto" {
            return Ok(How::Auto);
        }
        if let Some((_, p)) = Preset::ALL.iter().find(|(n, _)| *n == s) {
            return Ok(How::Preset(*p));
        }
        let re = regex::bytes::Regex::new(&format!("^(?:{s})")).map_err(|e| {
            let names: Vec<&str> = Preset::ALL.iter().map(|(n, _)| *n).collect();
            format!(
                "not auto, a preset ({}) or a regular expression: {e}",
                names.join(", ")
            )
        })?;
        if re.capture_names().all(|n| n != Some("key")) {
            return Err("the regular expression has no group named `key`: (?<key>...)".into());
        }
        Ok(How::Regex(re))
    }
}

/// Where a line's prefix is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// Length of the lead: the bytes that start every output line made from
    /// this line.
    pub lead: usize,
    /// The key, inside the lead.
    pub key: Range<usize>,
}

/// Finds each line's prefix. `auto` settles on the first preset a line
/// carries.
#[derive(Clone, Debug)]
pub struct Recognizer {
    how: How,
}

impl Recognizer {
    pub fn new(how: How) -> Recognizer {
        Recognizer { how }
    }

    /// The prefix of `line` (without its line ending), if it has one.
    pub fn recognise(&mut self, line: &[u8]) -> Option<Prefix> {
        let found = match &self.how {
            How::Preset(p) => p.recognise(line),
            How::Regex(re) => {
                let caps = re.captures(line)?;
                let key = caps.name("key")?.range();
                Some(Prefix {
                    lead: caps.get(0)?.end(),
                    key,
                })
            }
            How::Auto => {
                let (p, found) = Preset::AUTO
                    .iter()
                    .find_map(|p| p.recognise(line).map(|f| (*p, f)))?;
                self.how = How::Preset(p);
                Some(found)
            }
        }?;
        (found.key.len() <= MAX_KEY && found.lead <= line.len()).then_some(found)
    }

    /// Whether a line without a prefix continues the last key's record
    /// (rather than belonging to no key).
    pub fn continues(&self) -> bool {
        matches!(self.how, How::Preset(Preset::Journald))
    }

    /// The preset settled on, if any.
    pub fn preset(&self) -> Option<Preset> {
        match self.how {
            How::Preset(p) => Some(p),
            _ => None,
        }
    }
}

/// A cursor over a line's bytes for the hand-written recognisers (a regular
/// expression per line would cost more than the rest of the filter).
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn eat_if(&mut self, f: impl Fn(u8) -> bool) -> Option<u8> {
        let c = self.peek().filter(|&c| f(c))?;
        self.i += 1;
        Some(c)
    }

    /// `min..=max` digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<Range<usize>> {
        let start = self.i;
        while self.i - start < max && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        (self.i - start >= min).then_some(start..self.i)
    }

    /// One or more of `c`.
    fn run_of(&mut self, c: u8) -> Option<()> {
        self.eat(c)?;
        while self.peek() == Some(c) {
            self.i += 1;
        }
        Some(())
    }

    /// `hh:mm:ss` and an optional fraction.
    fn time(&mut self) -> Option<()> {
        self.digits(2, 2)?;
        self.eat(b':')?;
        self.digits(2, 2)?;
        self.eat(b':')?;
        self.digits(2, 2)?;
        if self.eat(b'.').is_some() || self.eat(b',').is_some() {
            self.digits(1, 9)?;
        }
        Some(())
    }
}

/// `Nov 25 05:20:01` or `2026-11-25T05:20:01[.frac][Z|+hh:mm|+hhmm]`.
fn syslog_time(c: &mut Cur<'_>) -> Option<()> {
    if c.peek()?.is_ascii_digit() {
        c.digits(4, 4)?;
        c.eat(b'-')?;
        c.digits(2, 2)?;
        c.eat(b'-')?;
        c.digits(2, 2)?;
        c.eat(b'T')?;
        c.time()?;
        if c.eat(b'Z').is_none() && c.eat_if(|b| b == b'+' || b == b'-').is_some() {
            c.digits(2, 2)?;
            let _ = c.eat(b':');
            c.digits(2, 2)?;
        }
        return Some(());
    }
    c.eat_if(|b| b.is_ascii_uppercase())?;
    c.eat_if(|b| b.is_ascii_lowercase())?;
    c.eat_if(|b| b.is_ascii_lowercase())?;
    c.eat(b' ')?;
    let _ = c.eat(b' ');
    c.digits(1, 2)?;
    c.eat(b' ')?;
    c.time()
}

/// `TIMESTAMP host prog[pid]: ` (key `host prog[pid]`).
fn syslog(line: &[u8]) -> Option<Prefix> {
    let mut c = Cur { b: line, i: 0 };
    syslog_time(&mut c)?;
    c.eat(b' ')?;
    let key_start = c.i;
    // Host: no spaces.
    while c.eat_if(|b| b != b' ' && b != b'\t').is_some() {}
    if c.i == key_start {
        return None;
    }
    c.eat(b' ')?;
    let prog = c.i;
    while c
        .eat_if(|b| !matches!(b, b' ' | b'\t' | b'[' | b':'))
        .is_some()
    {}
    if c.i == prog {
        return None;
    }
    if c.eat(b'[').is_some() {
        c.digits(1, 10)?;
        c.eat(b']')?;
    }
    let key_end = c.i;
    c.eat(b':')?;
    let _ = c.eat(b' ');
    Some(Prefix {
        lead: c.i,
        key: key_start..key_end,
    })
}

/// `E/tag( 1234): ` (key `1234`).
fn logcat_brief(c: &mut Cur<'_>) -> Option<Range<usize>> {
    c.eat_if(|b| b"VDIWEFAS".contains(&b))?;
    c.eat(b'/')?;
    // The tag: anything up to the `(` before the pid.
    let open = memchr::memchr(b'(', &c.b[c.i..])?;
    c.i += open + 1;
    while c.eat(b' ').is_some() {}
    let pid = c.digits(1, 10)?;
    c.eat(b')')?;
    c.eat(b':')?;
    let _ = c.eat(b' ');
    Some(pid)
}

/// Android logcat: `threadtime`, `time` or `brief` (key: the pid).
fn logcat(line: &[u8]) -> Option<Prefix> {
    let mut c = Cur { b: line, i: 0 };
    if !c.peek()?.is_ascii_digit() {
        let key = logcat_brief(&mut c)?;
        return Some(Prefix { lead: c.i, key });
    }
    // `[YYYY-]MM-DD hh:mm:ss.mmm`
    let first = c.digits(2, 4)?;
    c.eat(b'-')?;
    c.digits(2, 2)?;
    if first.len() == 4 {
        c.eat(b'-')?;
        c.digits(2, 2)?;
    } else if first.len() != 2 {
        return None;
    }
    c.eat(b' ')?;
    c.time()?;
    c.run_of(b' ')?;
    if !c.peek()?.is_ascii_digit() {
        let key = logcat_brief(&mut c)?;
        return Some(Prefix { lead: c.i, key });
    }
    let key = c.digits(1, 10)?;
    c.run_of(b' ')?;
    c.digits(1, 10)?;
    c.run_of(b' ')?;
    c.eat_if(|b| b"VDIWEFAS".contains(&b))?;
    c.eat(b' ')?;
    // The tag (padded with spaces) ends at the first `: `.
    let rest = &line[c.i..];
    let colon = memchr::memmem::find(rest, b": ")?;
    Some(Prefix {
        lead: c.i + colon + 2,
        key,
    })
}

/// A pid: no leading zero, at most 10 digits.
fn pid(c: &mut Cur<'_>) -> Option<Range<usize>> {
    let r = c.digits(1, 10)?;
    (c.b[r.start] != b'0' || r.len() == 1).then_some(r)
}

/// `[pid] `, `[pid:tid] ` or `[pid.tid] ` (key: the pid).
fn bracket(line: &[u8]) -> Option<Prefix> {
    let mut c = Cur { b: line, i: 0 };
    c.eat(b'[')?;
    let key = pid(&mut c)?;
    if c.eat_if(|b| b == b':' || b == b'.').is_some() {
        c.digits(1, 10)?;
    }
    c.eat(b']')?;
    let _ = c.eat(b' ');
    Some(Prefix { lead: c.i, key })
}

/// `[timestamp][pid][tid]` and further `[tag]` groups (key: the pid).
fn fuchsia(line: &[u8]) -> Option<Prefix> {
    let mut c = Cur { b: line, i: 0 };
    c.eat(b'[')?;
    c.digits(1, 20)?;
    c.eat(b'.')?;
    c.digits(1, 12)?;
    c.eat(b']')?;
    c.eat(b'[')?;
    let key = c.digits(1, 20)?;
    c.eat(b']')?;
    c.eat(b'[')?;
    c.digits(1, 20)?;
    c.eat(b']')?;
    while c.peek() == Some(b'[') {
        let Some(close) = memchr::memchr(b']', &line[c.i..]) else {
            break;
        };
        // A tag holds no markup.
        if memchr::memchr(b'{', &line[c.i..c.i + close]).is_some() {
            break;
        }
        c.i += close + 1;
    }
    let _ = c.eat(b' ');
    Some(Prefix { lead: c.i, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(how: &str, line: &str) -> Option<(String, String)> {
        let mut r = Recognizer::new(how.parse().unwrap());
        let p = r.recognise(line.as_bytes())?;
        Some((line[..p.lead].to_string(), line[p.key.clone()].to_string()))
    }

    fn pair(lead: &str, key: &str) -> Option<(String, String)> {
        Some((lead.to_string(), key.to_string()))
    }

    #[test]
    fn syslog_forms() {
        assert_eq!(
            rec("syslog", "Nov 25 05:20:01 host asan_c[4242]: ==1==ERROR"),
            pair("Nov 25 05:20:01 host asan_c[4242]: ", "host asan_c[4242]")
        );
        assert_eq!(
            rec("syslog", "Nov  5 05:20:01.123456 box kernel: x"),
            pair("Nov  5 05:20:01.123456 box kernel: ", "box kernel")
        );
        assert_eq!(
            rec(
                "syslog",
                "2026-11-25T05:20:01+0000 host app[7]: {{{bt:0:0x1}}}"
            ),
            pair("2026-11-25T05:20:01+0000 host app[7]: ", "host app[7]")
        );
        assert_eq!(
            rec("journald", "2026-11-25T05:20:01.5+00:00 h a.b-c[12]:x"),
            pair("2026-11-25T05:20:01.5+00:00 h a.b-c[12]:", "h a.b-c[12]")
        );
        assert_eq!(rec("syslog", "Nov 25 05:20:01 host"), None);
        assert_eq!(rec("syslog", "nov 25 05:20:01 host a[1]: x"), None);
        assert_eq!(rec("syslog", "Nov 25 05:20:01 host a[x]: x"), None);
        assert_eq!(rec("syslog", "{{{reset}}}"), None);
    }

    #[test]
    fn logcat_forms() {
        let threadtime = "11-25 05:20:01.123  1234  1240 E AddressSanitizer: {{{bt:0:0x1}}}";
        assert_eq!(
            rec("logcat", threadtime),
            pair(
                "11-25 05:20:01.123  1234  1240 E AddressSanitizer: ",
                "1234"
            )
        );
        assert_eq!(
            rec("logcat", "2026-11-25 05:20:01.123   99   99 I tag     : x"),
            pair("2026-11-25 05:20:01.123   99   99 I tag     : ", "99")
        );
        assert_eq!(
            rec("logcat", "E/libc++( 4242): abc"),
            pair("E/libc++( 4242): ", "4242")
        );
        assert_eq!(
            rec("logcat", "11-25 05:20:01.123 W/tag(17): x"),
            pair("11-25 05:20:01.123 W/tag(17): ", "17")
        );
        assert_eq!(rec("logcat", "--------- beginning of main"), None);
        assert_eq!(rec("logcat", "X/tag( 1): x"), None);
    }

    #[test]
    fn bracket_and_fuchsia_forms() {
        assert_eq!(rec("bracket", "[4242] x"), pair("[4242] ", "4242"));
        assert_eq!(rec("bracket", "[4242:7]x"), pair("[4242:7]", "4242"));
        assert_eq!(rec("bracket", "[4242.7] x"), pair("[4242.7] ", "4242"));
        assert_eq!(rec("bracket", "[0] x"), pair("[0] ", "0"));
        assert_eq!(rec("bracket", "[0000123] request"), None);
        assert_eq!(rec("bracket", "[12a] x"), None);
        assert_eq!(rec("bracket", " [12] x"), None);
        assert_eq!(
            rec("fuchsia", "[00012.345678][1234][5678][klog] INFO: x"),
            pair("[00012.345678][1234][5678][klog] ", "1234")
        );
        assert_eq!(
            rec("fuchsia", "[1.2][3][4]{{{bt:0:0x1}}}"),
            pair("[1.2][3][4]", "3")
        );
        assert_eq!(rec("fuchsia", "[1.2][3] x"), None);
    }

    #[test]
    fn auto_settles_on_the_first_preset_seen() {
        let mut r = Recognizer::new(How::Auto);
        assert_eq!(r.recognise(b"plain text"), None);
        assert_eq!(r.preset(), None);
        let p = r.recognise(b"[77] {{{reset}}}").unwrap();
        assert_eq!(p.key, 1..3);
        assert_eq!(r.preset(), Some(Preset::Bracket));
        // Settled: a syslog line is no longer recognised.
        assert_eq!(r.recognise(b"Nov 25 05:20:01 host a[1]: x"), None);
        assert!(!r.continues());
        assert!(Recognizer::new("journald".parse().unwrap()).continues());
    }

    #[test]
    fn regex_needs_a_key_group_and_is_anchored() {
        assert!("x(y)".parse::<How>().is_err());
        assert!("(".parse::<How>().is_err());
        assert_eq!(
            rec(r"job (?<key>\d+) \| ", "job 12 | {{{reset}}}"),
            pair("job 12 | ", "12")
        );
        assert_eq!(rec(r"job (?<key>\d+) \| ", "x job 12 | y"), None);
    }

    #[test]
    fn long_keys_are_not_keys() {
        let long = format!("Nov 25 05:20:01 {} a[1]: x", "h".repeat(MAX_KEY));
        assert_eq!(rec("syslog", &long), None);
    }
}
