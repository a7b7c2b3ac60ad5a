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
    thread_local! {
        static TABLES: std::cell::RefCell<parse::Tables> = std::cell::RefCell::default();
    }
    let mut parser = parse::Parser::reusing(name, TABLES.take());
    let out = parser.parse().and_then(|root| {
        let mut printer = print::Printer::new(&parser.nodes, &parser.caches, limit);
        // Room for most demangled names (templates can grow past it).
        printer.out.reserve(2 * name.len());
        printer.print(root);
        (!printer.failed).then_some(printer.out)
    });
    TABLES.set(parser.into_tables());
    out
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn prints_as_llvm() {
        let d = |s| demangle(s, 1 << 16);
        assert_eq!(d("_Z1fIJEEvDpT_").as_deref(), Some("void f<>()"));
        assert_eq!(
            d("_ZN4llvm15AnalysisManagerINS_8FunctionEJEE6verifyEv").as_deref(),
            Some("llvm::AnalysisManager<llvm::Function>::verify()")
        );
        assert_eq!(d("_Z1fILm2EEvv").as_deref(), Some("void f<2ul>()"));
        assert_eq!(
            d("_ZZ4mainENKUlvE_clEv").as_deref(),
            Some("main::'lambda'()::operator()() const")
        );
        assert_eq!(
            d("_ZTCN3gfx5FancyE0_NS_6WidgetE").as_deref(),
            Some("construction vtable for gfx::Widget-in-gfx::Fancy")
        );
        assert_eq!(d("_Z3foov.cold").as_deref(), Some("foo() (.cold)"));
        assert_eq!(d("_Zfoo"), None);
        assert_eq!(d("f"), None);
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let deep = format!("_Z1f{}iv", "P".repeat(10_000));
        assert_eq!(demangle(&deep, usize::MAX), None);
        let shallow = format!("_Z1f{}i", "P".repeat(50));
        assert_eq!(
            demangle(&shallow, usize::MAX).unwrap(),
            format!("f(int{})", "*".repeat(50))
        );
    }

    #[test]
    fn exponential_expansion_stops_at_the_limit() {
        // Each template argument list holds the previous type twice.
        let mut name = String::from("_Z1f1AIiiE");
        for k in 0..40 {
            name.push_str(&format!("S_IS{k}_S{k}_E"));
        }
        assert_eq!(demangle(&name, 1 << 16), None);
        assert_eq!(demangle(&name, usize::MAX), None);
    }
}
