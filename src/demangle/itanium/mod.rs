//! Itanium C++ ABI demangling, with LLVM's output as the reference: one
//! entry point, [`demangle`].

mod ast;
mod float;
mod parse;
mod print;

/// `name` (`_Z...`, `__Z...`, or a block `___Z..._block_invoke`) demangled,
/// or `None` when it is not a valid mangling or its demangling would pass
/// `limit` bytes.
pub fn demangle(name: &str, limit: usize) -> Option<String> {
    let mut parser = parse::Parser::new(name);
    let root = parser.parse()?;
    let mut printer = print::Printer::new(&parser.nodes, &parser.caches, limit);
    printer.print(root);
    (!printer.failed).then_some(printer.out)
}
