//! Microsoft C++ names (`?draw@Widget@gfx@@QEBAHH@Z`), demangled as LLVM 22
//! prints them: one entry point, [`demangle`].
//!
//! Written from Microsoft's mangling grammar as documented in public
//! write-ups, with LLVM's `llvm-undname` / `llvm-symbolizer` output as the
//! reference for every printed form. The tree-then-print design and the
//! printing rules follow LLVM's MicrosoftDemangle (Apache-2.0 WITH
//! LLVM-exception) closely, so that the output is byte-identical; no code
//! was copied.

mod ast;
mod parse;
mod print;

/// `name` demangled, or `None` when it is not a valid Microsoft mangling or
/// its demangling would pass `limit` bytes.
pub fn demangle(name: &str, limit: usize) -> Option<String> {
    if !name.starts_with('?') && !name.starts_with('.') {
        return None;
    }
    let mut parser = parse::Parser::new(name, limit);
    let root = parser.parse()?;
    print::render(&parser.nodes, root, limit)
}

#[cfg(test)]
mod tests {
    use super::demangle;

    fn d(name: &str) -> Option<String> {
        demangle(name, 1 << 16)
    }

    #[test]
    fn prints_as_llvm() {
        assert_eq!(
            d("?draw@Widget@gfx@@QEBAHH@Z").as_deref(),
            Some("public: int __cdecl gfx::Widget::draw(int) const")
        );
        assert_eq!(
            d("??R<lambda_0>@@QEBA?A?<auto>@@H@Z").as_deref(),
            Some("public: <auto> __cdecl <lambda_0>::operator()(int) const")
        );
        assert_eq!(
            d("?f@Diamond@@$4PPPPPPPM@A@EAAHXZ").as_deref(),
            Some("[thunk]: public: virtual int __cdecl Diamond::f`vtordisp{-4, 0}'(void)")
        );
        assert_eq!(
            d("??_C@_1BA@JBBGNKHF@?$AAw?$AAi?$AAd?$AAe?$AA?$AA@").as_deref(),
            Some("L\"wide\\0\"")
        );
        assert_eq!(d("??BS@@3HA"), None);
        assert_eq!(d("_?x@@3HA"), None);
        assert_eq!(demangle("?draw@Widget@gfx@@QEBAHH@Z", 10), None);
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let shallow = format!("?x@@3{}HA", "PEA".repeat(100));
        assert_eq!(d(&shallow).unwrap(), format!("int {}x", "*".repeat(100)));
        for deep in [
            format!("?x@@3{}HA", "PEA".repeat(100_000)),
            format!("?x@@3{}HA", "PEAV?$a@".repeat(50_000)),
            format!("?f@@YAX{}H@Z", "P6AX".repeat(50_000)),
            format!("?x@@3{}HA", "V?$a@?1??f@@YAXXZ@".repeat(20_000)),
        ] {
            assert_eq!(demangle(&deep, usize::MAX), None);
        }
    }

    #[test]
    fn shared_parameters_stop_at_the_limit() {
        // Each parameter type takes the previous one many times over.
        let mut name = String::from("?f@@YAXP6AXH@Z");
        for k in 0..9 {
            name.push_str(&format!("P6AX{}@Z", k.to_string().repeat(40)));
        }
        name.push_str("@Z");
        assert_eq!(demangle(&name, 1 << 16), None);
    }

    /// Found by fuzzing the crate this replaces: a guard number overflowing
    /// an `i32`.
    #[test]
    fn overflowing_numbers_are_names_not_demangled() {
        assert_eq!(d("?$TSS777777777777777777"), None);
        assert_eq!(d("?f@C@@$4PPPPPPPPPPPPPPPPA@A@EAAXXZ"), None);
    }
}
