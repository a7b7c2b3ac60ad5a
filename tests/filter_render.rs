//! Rendering of resolved presentation elements, through the library with a
//! scripted symbol source (the ELF source is tested on its own; here the
//! shapes of the output are what matters). The LLVM shapes are the ones
//! `/work/shared/reference/llvm-filter-markup-22.md` §5 quotes from
//! llvm-symbolizer 22.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use symfilter::filter::{Dialect, Filter, Options};
use symfilter::render::Format;
use symfilter::report::{Report, Reporter};
use symfilter::symbols::{
    Attempt, BuildId, CodeInfo, CodeWant, DataInfo, DataWant, Frame, Locator, Miss, ModuleKey,
    Provider, SymbolHit, SymbolSource, Symbolizer, SymbolizerConfig,
};

#[derive(Clone)]
struct Table {
    code: BTreeMap<u64, CodeInfo>,
    data: BTreeMap<u64, DataInfo>,
    ra_step: u64,
}

struct Source(Table);

impl SymbolSource for Source {
    fn origin(&self) -> String {
        "/scripted/app.debug".into()
    }
    fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
        self.0.code.get(&addr).cloned().ok_or(Miss::NoInfo)
    }
    fn lookup_data(&self, addr: u64, _: DataWant) -> Result<DataInfo, Miss> {
        Ok(self.0.data.get(&addr).cloned().unwrap_or_default())
    }
    fn return_address_step(&self) -> u64 {
        self.0.ra_step
    }
}

struct Scripted {
    id: BuildId,
    table: Table,
}

impl Provider for Scripted {
    fn name(&self) -> Locator {
        Locator::Custom("scripted")
    }
    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let found = key.build_id == self.id;
        trail.push(Attempt::new(
            Locator::Custom("scripted"),
            format!("/scripted/{}.debug", key.build_id),
            if found { None } else { Some(Miss::NotFound) },
        ));
        found.then(|| Box::new(Source(self.table.clone())) as Box<dyn SymbolSource>)
    }
}

fn frame(f: &str, file: &str, line: u32, column: u32) -> Frame {
    Frame {
        function: Some(f.into()),
        file: Some(file.into()),
        line,
        column,
    }
}

fn table(ra_step: u64) -> Table {
    let mut code = BTreeMap::new();
    // An inlined chain (innermost first), with a symbol-table name.
    code.insert(
        0x11ff,
        CodeInfo {
            frames: vec![
                frame("level3", "/src/app.c", 29, 10),
                frame("level2", "/src/app.c", 32, 10),
                frame("inlined_entry", "/src/app.c", 38, 10),
            ]
            .into(),
            symbol: Some(SymbolHit {
                name: "inlined_entry".into(),
                address: 0x11e0,
                size: 0x40,
                file: None,
            }),
            claimed: false,
            shown: Default::default(),
        },
    );
    // A mangled Rust legacy name, one frame.
    code.insert(
        0x1257,
        CodeInfo {
            frames: vec![frame(
                "_ZN3app5frame17h0123456789abcdefE",
                "/src/main.rs",
                88,
                0,
            )]
            .into(),
            symbol: None,
            claimed: false,
            shown: Default::default(),
        },
    );
    // Symbol table only (a local symbol with its STT_FILE).
    code.insert(
        0x1300,
        CodeInfo {
            frames: Default::default(),
            symbol: Some(SymbolHit {
                name: "helper".into(),
                address: 0x12f0,
                size: 0x20,
                file: Some("app.c".into()),
            }),
            claimed: false,
            shown: Default::default(),
        },
    );
    // Nothing at all.
    code.insert(0x1400, CodeInfo::default());
    let mut data = BTreeMap::new();
    data.insert(
        0x3008,
        DataInfo {
            symbol: Some(SymbolHit {
                name: "g_table".into(),
                address: 0x3000,
                size: 0x40,
                file: None,
            }),
            decl_file: Some("/src/app.c".into()),
            decl_line: 12,
        },
    );
    Table {
        code,
        data,
        ra_step,
    }
}

const CONTEXT: &str = "{{{module:0:app_O2:elf:1731f0c2}}}\n\
{{{mmap:0x200000:0x1000:load:0:r:0x0}}}\n\
{{{mmap:0x201000:0x1000:load:0:rx:0x1000}}}\n\
{{{mmap:0x203000:0x1000:load:0:rw:0x3000}}}\n\
{{{module:1:libmissing.so:elf:ffee}}}\n\
{{{mmap:0x7f0000:0x1000:load:1:rx:0x0}}}\n";

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

/// Reports as the command line prints them.
impl Reporter for Shared {
    fn report(&self, r: &Report<'_>) {
        let mut err = self.0.lock().expect("lock");
        writeln!(err, "symfilter: {r}").expect("write");
    }
}

/// The scripted source, its return addresses stepped back by `ra_step`.
fn scripted(ra_step: u64) -> SymbolizerConfig {
    SymbolizerConfig {
        providers: vec![Box::new(Scripted {
            id: BuildId::from_hex("1731f0c2").expect("hex"),
            table: table(ra_step),
        })],
    }
}

fn run(format: Format, body: &str, explain: bool, ra_step: u64) -> (String, String) {
    let config = scripted(ra_step);
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        explain,
        strip_path_prefix: Some("/src".into()),
        ..Options::default()
    };
    let err = Shared::default();
    let mut f = Filter::new(opts, Symbolizer::new(config), Arc::new(err.clone()));
    let input = format!("{CONTEXT}{body}");
    let mut out = Vec::new();
    f.run("t.log", input.as_bytes(), &mut out).expect("run");
    f.finish(&mut out).expect("finish");
    let err = String::from_utf8(err.0.lock().expect("lock").clone()).expect("utf8");
    (String::from_utf8(out).expect("utf8"), err)
}

fn after_context(s: &str) -> String {
    s.lines().skip(2).collect::<Vec<_>>().join("\n") + "\n"
}

#[test]
fn llvm_bt_shapes() {
    let (out, _) = run(
        Format::Llvm,
        "{{{bt:0:0x201200:ra}}}\n{{{bt:100000:0x201257:pc}}}\n{{{bt:2:0x201401}}}\n",
        false,
        1,
    );
    assert_eq!(
        after_context(&out),
        "    #0.1  0x00000000002011ff level3 /src/app.c:29:10 (app_O2+0x11ff)\n\
         \x20   #0.2  0x00000000002011ff level2 /src/app.c:32:10 (app_O2+0x11ff)\n\
         \x20   #0    0x00000000002011ff inlined_entry /src/app.c:38:10 (app_O2+0x11ff)\n\
         #100000    0x0000000000201257 app::frame::h0123456789abcdef /src/main.rs:88:0 (app_O2+0x1257)\n\
         \x20   #2    0x0000000000201400 (app_O2+0x1400)\n"
    );
}

#[test]
fn llvm_pc_data_symbol_shapes() {
    let (out, _) = run(
        Format::Llvm,
        "{{{pc:0x2011ff}}}|{{{pc:0x201300}}}|{{{pc:0x201400}}}|{{{pc:0x7f0010}}}\n\
         {{{data:0x203008}}}|{{{data:0x203010}}}|{{{symbol:_ZN7Mangled4NameEv}}}\n",
        false,
        1,
    );
    assert_eq!(
        after_context(&out),
        "inlined_entry[/src/app.c:29]|helper[app.c:0]|[[[pc:0x201400]]]|[[[pc:0x7f0010]]]\n\
         g_table|<invalid>|Mangled::Name()\n"
    );
}

#[test]
fn human_shapes() {
    let (out, err) = run(
        Format::Human,
        "  {{{bt:0:0x201200:ra}}}\n  {{{bt:1:0x201257:pc}}}\n  {{{bt:2:0x201301}}}\n\
         pc {{{pc:0x2011ff}}}\npc {{{pc:0x201300}}} | {{{pc:0x7f0010}}} | {{{pc:0x201400}}}\n\
         data {{{data:0x203008}}} {{{data:0x200010}}}\n\
         {{{hexdict:\n  RIP: 0x2011ff  RSP: 0x10\n  RAX: 0x203008 }}}\n",
        false,
        1,
    );
    let want = "[module #0 \"app_O2\" build-id 1731f0c2: 0x200000-0x200fff r, 0x201000-0x201fff rx, 0x203000-0x203fff rw]\n\
[module #1 \"libmissing.so\" build-id ffee: 0x7f0000-0x7f0fff rx]\n\
\x20 #0.1   0x00000000002011ff in level3 app.c:29:10 (app_O2+0x11ff)\n\
\x20 #0.2   0x00000000002011ff in level2 app.c:32:10 (app_O2+0x11ff)\n\
\x20 #0     0x00000000002011ff in inlined_entry app.c:38:10 (app_O2+0x11ff)\n\
\x20 #1     0x0000000000201257 in app::frame main.rs:88 (app_O2+0x1257)\n\
\x20 #2     0x0000000000201300 in helper+0x10 (app_O2+0x1300)\n\
pc level3 at app.c:29:10, inlined into level2 at app.c:32:10, inlined into inlined_entry at app.c:38:10\n\
pc helper+0x10 (app_O2+0x1300) | libmissing.so+0x10 | app_O2+0x1400\n\
data g_table+0x8 at app.c:12 app_O2+0x10\n\
{{{hexdict:\n  RIP: 0x2011ff  RSP: 0x10\n  RAX: 0x203008 }}}\n\
\x20 RIP: 0x2011ff = level3 at app.c:29:10, inlined into level2 at app.c:32:10, inlined into inlined_entry at app.c:38:10\n\
\x20 RAX: 0x203008 = g_table+0x8 at app.c:12\n";
    assert_eq!(out, want);
    // One diagnostic for the missing module, located at its first use.
    assert_eq!(
        err,
        "symfilter: t.log:11:30: no symbols for module #1 \"libmissing.so\" (build ID ffee): \
         1 place(s) tried; --explain lists them\n"
    );
}

#[test]
fn human_fixed_width_return_address() {
    // An AArch64-like source steps back 4 bytes.
    let (out, _) = run(Format::Human, "{{{bt:0:0x201203:ra}}}\n", false, 4);
    assert!(
        out.ends_with("#0.1   0x00000000002011ff in level3 app.c:29:10 (app_O2+0x11ff)\n#0.2   0x00000000002011ff in level2 app.c:32:10 (app_O2+0x11ff)\n#0     0x00000000002011ff in inlined_entry app.c:38:10 (app_O2+0x11ff)\n"),
        "{out}"
    );
    // LLVM mode always steps back one byte.
    let (out, _) = run(Format::Llvm, "{{{bt:0:0x201203:ra}}}\n", false, 4);
    assert!(
        out.ends_with("#0    0x0000000000201202 (app_O2+0x1202)\n"),
        "{out}"
    );
}

#[test]
fn explain_lists_attempts() {
    let (_, err) = run(
        Format::Human,
        "{{{pc:0x7f0010}}} {{{pc:0x2011ff}}}\n",
        true,
        1,
    );
    assert_eq!(
        err,
        "symfilter: explain: module #1 \"libmissing.so\" build ID ffee:\n\
         symfilter:   [scripted] /scripted/ffee.debug: no file found\n\
         symfilter: t.log:7:7: no symbols for module #1 \"libmissing.so\" (build ID ffee): \
         1 place(s) tried; --explain lists them\n\
         symfilter: explain: module #0 \"app_O2\" build ID 1731f0c2:\n\
         symfilter:   [scripted] /scripted/1731f0c2.debug: found\n"
    );
}

#[test]
fn json_frames() {
    let (out, _) = run(Format::Json, "{{{bt:0:0x201200:ra}}}\n", false, 1);
    let last = out.lines().last().expect("a line");
    let v: serde_json::Value = serde_json::from_str(last).expect("json");
    let el = &v["spans"][0];
    assert_eq!(el["element"], "bt");
    assert_eq!(el["adjusted"], "0x2011ff");
    assert_eq!(el["offset"], "0x11ff");
    assert_eq!(el["module"]["name"], "app_O2");
    assert_eq!(el["status"], "ok");
    let frames = el["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0]["function"], "level3");
    assert_eq!(frames[0]["line"], 29);
    assert_eq!(frames[0]["column"], 10);
    assert_eq!(frames[0]["inlined"], true);
    assert_eq!(frames[2]["inlined"], false);
    assert_eq!(el["symbol"]["offset"], "0x1f");
}

/// Output and diagnostics in one buffer, in the order they were written.
#[derive(Clone, Default)]
struct Both(Arc<Mutex<Vec<u8>>>);

impl Write for Both {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Reporter for Both {
    fn report(&self, r: &Report<'_>) {
        let mut both = self.0.lock().expect("lock");
        writeln!(both, "symfilter: {r}").expect("write");
    }
}

/// `body` after the context, filtered on one thread or on two (every
/// lookup left to the printing thread, `always_defer`, or as the pipeline
/// decides): output and diagnostics interleaved as written.
fn interleaved(format: Format, body: &str, ra_step: u64, threads: Option<bool>) -> String {
    let config = scripted(ra_step);
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        explain: true,
        ..Options::default()
    };
    let both = Both::default();
    let input = format!("{CONTEXT}{body}");
    // Whether held output is written before a module's first opening
    // depends on whether a background search has finished by then.
    let mut symbolizer = Symbolizer::new(config);
    symbolizer.search_in_background(false);
    match threads {
        None => {
            let mut f = Filter::new(opts, symbolizer, Arc::new(both.clone()));
            let mut out = both.clone();
            f.run("t.log", input.as_bytes(), &mut out).expect("run");
            f.finish(&mut out).expect("finish");
        }
        Some(always_defer) => {
            let to = both.clone();
            let pipeline = symfilter::pipeline::Pipeline::start(
                move || Box::new(to) as Box<dyn Write>,
                Arc::new(both.clone()),
            )
            .expect("thread");
            let mut f = Filter::new(opts, symbolizer, pipeline.reporter());
            pipeline.attach(&mut f);
            if always_defer {
                f.defer_lookups(|| true);
            }
            let mut out = pipeline.output();
            f.run("t.log", input.as_bytes(), &mut out).expect("run");
            f.finish(&mut out).expect("finish");
            drop(f);
            let stats = pipeline.finish().expect("printed");
            if always_defer {
                assert!(stats.lookups > 0, "no lookup was left to the printer");
            }
        }
    }
    let bytes = both.0.lock().expect("lock").clone();
    String::from_utf8(bytes).expect("utf8")
}

/// Every kind of element, in every format, on two threads: the printer
/// thread's output and diagnostics, in their order, are one thread's.
#[test]
fn two_threads_print_what_one_does() {
    let body = "  {{{bt:0:0x201200:ra}}}\n  {{{bt:1:0x201257:pc}}}\n  {{{bt:2:0x201301}}}\n\
         pc {{{pc:0x2011ff}}} \x1b[1mbold\x1b[0m \x1b[31mred\x1b[0m\n\
         pc {{{pc:0x201300}}} | {{{pc:0x7f0010}}} | {{{pc:0x201400}}} | {{{pc:0x999999}}}\n\
         data {{{data:0x203008}}} {{{data:0x200010}}} {{{data:0x203010}}}\n\
         symbol {{{symbol:_ZN7Mangled4NameEv}}} {{{UP}}} {{{foo:a:b}}} {{{pc:zz}}}\n\
         {{{dumpfile:sancov:x.1}}}\n\
         {{{hexdict:RIP: 0x2011ff RAX: 0x203008}}}\n\
         {{{hexdict:\n  RIP: 0x2011ff  RSP: 0x10\n  RAX: 0x203008 }}}\n\
         {{{reset}}}\n{{{pc:0x2011ff}}}\n";
    for format in [Format::Human, Format::Llvm, Format::Json] {
        for ra_step in [1, 4] {
            let one = interleaved(format, body, ra_step, None);
            assert!(one.contains("no symbols for module"), "{format:?}: {one}");
            for always_defer in [true, false] {
                let two = interleaved(format, body, ra_step, Some(always_defer));
                assert_eq!(two, one, "{format:?}, step {ra_step}, defer {always_defer}");
            }
        }
    }
}
