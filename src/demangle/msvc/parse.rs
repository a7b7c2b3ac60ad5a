//! The reader: Microsoft's mangling grammar into the tree of [`super::ast`].
//!
//! Every way in is bounded. Recursion (types within types, names within
//! names, symbols within template arguments and local scopes) stops at
//! [`MAX_DEPTH`]; each node consumes input, so the tree is linear in the
//! name; names rendered to remember them for back-references share one
//! budget of output ([`RENDER_BUDGET`]).

use super::ast::*;
use super::print;

const MAX_DEPTH: u32 = 128;

/// Output all renderings of back-referenced names may produce, together.
const RENDER_BUDGET: usize = 4 << 20;

/// Back-reference tables hold ten entries each.
const MAX_BACKREFS: usize = 10;

pub struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    pub nodes: Vec<Node>,
    /// Remembered names (`0`-`9` in name position), as text.
    names: Vec<Id>,
    /// Remembered function parameter types (`0`-`9` in a parameter list).
    params: Vec<Id>,
    depth: u32,
    budget: usize,
    limit: usize,
}

type R<T> = Option<T>;

impl<'a> Parser<'a> {
    pub fn new(name: &'a str, limit: usize) -> Parser<'a> {
        Parser {
            s: name.as_bytes(),
            pos: 0,
            nodes: Vec::new(),
            names: Vec::new(),
            params: Vec::new(),
            depth: 0,
            budget: RENDER_BUDGET,
            limit,
        }
    }

    fn add(&mut self, node: Node) -> Id {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn rest(&self) -> &'a [u8] {
        &self.s[self.pos..]
    }

    fn starts(&self, p: &str) -> bool {
        self.rest().starts_with(p.as_bytes())
    }

    fn eat(&mut self, p: &str) -> bool {
        let yes = self.starts(p);
        if yes {
            self.pos += p.len();
        }
        yes
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> R<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn starts_with_digit(&self) -> bool {
        self.peek().is_some_and(|c| c.is_ascii_digit())
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A whole symbol: the entry point, and symbols nested in template
    /// arguments and local scopes.
    pub fn parse(&mut self) -> R<Id> {
        self.enter()?;
        let out = self.parse_inner();
        self.leave();
        out
    }

    fn parse_inner(&mut self) -> R<Id> {
        if self.starts(".") {
            return self.typeinfo_name();
        }
        if self.starts("??@") {
            return self.md5_name();
        }
        if !self.eat("?") {
            return None;
        }
        if let Some(special) = self.special_intrinsic() {
            return special;
        }
        self.declarator()
    }

    /// A type's RTTI name (`.?AVWidget@@`).
    fn typeinfo_name(&mut self) -> R<Id> {
        self.eat(".");
        let ty = self.ty(Quals::Result)?;
        if self.pos != self.s.len() {
            return None;
        }
        Some(self.synthesized_variable(ty, "`RTTI Type Descriptor Name'"))
    }

    fn synthesized_variable(&mut self, ty: Id, name: &str) -> Id {
        let ident = self.add(Node::Named {
            name: name.to_string(),
            targs: None,
        });
        let qname = self.add(Node::Qualified(vec![ident]));
        self.add(Node::VariableSymbol {
            name: qname,
            ty: Some(ty),
            storage: Storage::None,
        })
    }

    /// A name too long for the compiler, hashed: `??@<hash>@`, shown as it is.
    fn md5_name(&mut self) -> R<Id> {
        let start = self.pos;
        let at = self.rest()[3..].iter().position(|&c| c == b'@')? + 3;
        self.pos += at + 1;
        self.eat("??_R4@");
        let name = std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .to_string();
        Some(self.add(Node::Md5 { name }))
    }

    /// `None` when the name is no special intrinsic; `Some(None)` when it
    /// is one that cannot be read.
    fn special_intrinsic(&mut self) -> Option<R<Id>> {
        const KINDS: [&str; 16] = [
            "?_7", "?_8", "?_9", "?_A", "?_B", "?_C", "?_P", "?_R0", "?_R1", "?_R2", "?_R3",
            "?_R4", "?_S", "?__E", "?__F", "?__J",
        ];
        let kind = KINDS.iter().find(|k| self.starts(k))?;
        self.pos += kind.len();
        Some(match *kind {
            "?_7" => self.special_table("`vftable'"),
            "?_8" => self.special_table("`vbtable'"),
            "?_S" => self.special_table("`local vftable'"),
            "?_R4" => self.special_table("`RTTI Complete Object Locator'"),
            "?_9" => self.vcall_thunk(),
            "?_B" => self.local_static_guard(false),
            "?__J" => self.local_static_guard(true),
            "?_C" => self.string_literal(),
            "?_R0" => self.rtti_type_descriptor(),
            "?_R1" => self.rtti_base_class_descriptor(),
            "?_R2" => self.untyped_variable("`RTTI Base Class Array'"),
            "?_R3" => self.untyped_variable("`RTTI Class Hierarchy Descriptor'"),
            "?__E" => self.init_fini_stub(false),
            "?__F" => self.init_fini_stub(true),
            _ => None,
        })
    }

    fn named(&mut self, name: &str) -> Id {
        self.add(Node::Named {
            name: name.to_string(),
            targs: None,
        })
    }

    fn special_table(&mut self, name: &str) -> R<Id> {
        let ident = self.named(name);
        let qname = self.name_scope_chain(ident)?;
        let front = self.next()?;
        if front != b'6' && front != b'7' {
            return None;
        }
        let (quals, _) = self.qualifiers()?;
        let target = if self.eat("@") {
            None
        } else {
            Some(self.fully_qualified_type_name()?)
        };
        Some(self.add(Node::SpecialTable {
            name: qname,
            quals,
            target,
        }))
    }

    fn vcall_thunk(&mut self) -> R<Id> {
        let ident = self.add(Node::VcallThunk { offset: 0 });
        let name = self.name_scope_chain(ident)?;
        if !self.eat("$B") {
            return None;
        }
        let offset = self.unsigned()?;
        self.nodes[ident] = Node::VcallThunk { offset };
        if !self.eat("A") {
            return None;
        }
        let mut sig = Signature::global();
        sig.class = FC_NO_PARAMETER_LIST;
        sig.thunk = Some(ThisAdjust::default());
        sig.call_conv = self.calling_convention()?;
        let signature = self.add(Node::Function(sig));
        Some(self.add(Node::FunctionSymbol { name, signature }))
    }

    fn local_static_guard(&mut self, thread: bool) -> R<Id> {
        let ident = self.add(Node::LocalStaticGuard {
            thread,
            scope_index: 0,
        });
        let name = self.name_scope_chain(ident)?;
        if !self.eat("4IA") && !self.eat("5") {
            return None;
        }
        if self.pos < self.s.len() {
            let scope_index = self.unsigned()?;
            self.nodes[ident] = Node::LocalStaticGuard {
                thread,
                scope_index,
            };
        }
        Some(self.add(Node::GuardVariable { name }))
    }

    fn rtti_type_descriptor(&mut self) -> R<Id> {
        let ty = self.ty(Quals::Result)?;
        if !self.eat("@8") || self.pos != self.s.len() {
            return None;
        }
        Some(self.synthesized_variable(ty, "`RTTI Type Descriptor'"))
    }

    fn rtti_base_class_descriptor(&mut self) -> R<Id> {
        let nv_offset = self.unsigned()?;
        let vbptr_offset = self.signed()?;
        let vbtable_offset = self.unsigned()?;
        let flags = self.unsigned()?;
        let ident = self.add(Node::RttiBaseClassDescriptor {
            nv_offset,
            vbptr_offset,
            vbtable_offset,
            flags,
        });
        let name = self.name_scope_chain(ident)?;
        self.eat("8");
        Some(self.add(Node::VariableSymbol {
            name,
            ty: None,
            storage: Storage::None,
        }))
    }

    fn untyped_variable(&mut self, what: &str) -> R<Id> {
        let ident = self.named(what);
        let name = self.name_scope_chain(ident)?;
        if !self.eat("8") {
            return None;
        }
        Some(self.add(Node::VariableSymbol {
            name,
            ty: None,
            storage: Storage::None,
        }))
    }

    /// A dynamic initializer or atexit destructor of a variable.
    fn init_fini_stub(&mut self, destructor: bool) -> R<Id> {
        let static_member = self.eat("?");
        let symbol = self.declarator()?;
        if let Node::VariableSymbol { .. } = self.nodes[symbol] {
            // Old compilers wrote one `@` and no `?`; the right form has both.
            for _ in 0..(if static_member { 2 } else { 1 }) {
                if !self.eat("@") {
                    return None;
                }
            }
            let function = self.function_encoding()?;
            let ident = self.add(Node::DynamicStructor {
                destructor,
                variable: Some(symbol),
                name: None,
            });
            let qname = self.add(Node::Qualified(vec![ident]));
            if let Node::FunctionSymbol { name, .. } = &mut self.nodes[function] {
                *name = qname;
            }
            Some(function)
        } else {
            if static_member {
                return None;
            }
            let Node::FunctionSymbol { name, .. } = self.nodes[symbol] else {
                return None;
            };
            let ident = self.add(Node::DynamicStructor {
                destructor,
                variable: None,
                name: Some(name),
            });
            let qname = self.add(Node::Qualified(vec![ident]));
            if let Node::FunctionSymbol { name, .. } = &mut self.nodes[symbol] {
                *name = qname;
            }
            Some(symbol)
        }
    }

    fn string_literal(&mut self) -> R<Id> {
        if !self.eat("@_") {
            return None;
        }
        let wide = match self.next()? {
            b'1' => true,
            b'0' => false,
            _ => return None,
        };
        let (mut size, negative) = self.number()?;
        if negative || size < if wide { 2 } else { 1 } {
            return None;
        }
        // The CRC, eight characters and an `@`.
        let crc_end = self.rest().iter().position(|&c| c == b'@')?;
        self.pos += crc_end + 1;
        if self.pos >= self.s.len() {
            return None;
        }
        let mut text = String::new();
        let (kind, truncated);
        if wide {
            kind = CharKind::Wchar;
            truncated = size > 64;
            while !self.eat("@") {
                if self.rest().len() < 2 {
                    return None;
                }
                let hi = self.char_literal()? as u32;
                let lo = self.char_literal()? as u32;
                if size != 2 || truncated {
                    escaped_char(&mut text, (hi << 8) | lo);
                }
                size = size.wrapping_sub(2);
            }
        } else {
            // Strings hold at most 32 bytes, but some compilers wrote more.
            const MAX_BYTES: usize = 32 * 4;
            let mut bytes = Vec::new();
            while !self.eat("@") {
                if self.pos >= self.s.len() || bytes.len() >= MAX_BYTES {
                    return None;
                }
                bytes.push(self.char_literal()?);
            }
            truncated = size > bytes.len() as u64;
            let width = char_width(&bytes, size);
            kind = match width {
                1 => CharKind::Char,
                2 => CharKind::Char16,
                _ => CharKind::Char32,
            };
            let count = bytes.len() / width;
            for i in 0..count {
                let c = bytes[i * width..(i + 1) * width]
                    .iter()
                    .rev()
                    .fold(0u32, |acc, &b| (acc << 8) | b as u32);
                if i + 1 < count || truncated {
                    escaped_char(&mut text, c);
                }
            }
        }
        Some(self.add(Node::StringLiteral {
            kind,
            text,
            truncated,
        }))
    }

    /// One byte of a string literal.
    fn char_literal(&mut self) -> R<u8> {
        if !self.eat("?") {
            return self.next();
        }
        if self.eat("$") {
            let hi = rebased_hex(self.next()?)?;
            let lo = rebased_hex(self.next()?)?;
            return Some((hi << 4) | lo);
        }
        let c = self.next()?;
        match c {
            b'0'..=b'9' => Some(b",/\\:. \n\t'-"[(c - b'0') as usize]),
            b'a'..=b'z' => Some(0xE1 + (c - b'a')),
            b'A'..=b'Z' => Some(0xC1 + (c - b'A')),
            _ => None,
        }
    }

    fn declarator(&mut self) -> R<Id> {
        let qname = self.fully_qualified_symbol_name()?;
        let symbol = self.encoded_symbol(qname)?;
        // A conversion operator must be a function with a return type.
        let last = self.last_component(qname)?;
        if let Node::Conversion { target: None, .. } = self.nodes[last] {
            return None;
        }
        match &mut self.nodes[symbol] {
            Node::FunctionSymbol { name, .. } | Node::VariableSymbol { name, .. } => *name = qname,
            _ => {}
        }
        Some(symbol)
    }

    fn last_component(&self, qname: Id) -> Option<Id> {
        match &self.nodes[qname] {
            Node::Qualified(parts) => parts.last().copied(),
            _ => None,
        }
    }

    fn encoded_symbol(&mut self, qname: Id) -> R<Id> {
        if let Some(c @ b'0'..=b'4') = self.peek() {
            self.pos += 1;
            let storage = match c {
                b'0' => Storage::PrivateStatic,
                b'1' => Storage::ProtectedStatic,
                b'2' => Storage::PublicStatic,
                b'3' => Storage::Global,
                _ => Storage::FunctionLocalStatic,
            };
            return self.variable_encoding(qname, storage);
        }
        let function = self.function_encoding()?;
        let last = self.last_component(qname)?;
        if let Node::Conversion { .. } = self.nodes[last] {
            let Node::FunctionSymbol { signature, .. } = self.nodes[function] else {
                return None;
            };
            let ret = match &self.nodes[signature] {
                Node::Function(sig) => sig.ret,
                _ => None,
            };
            if let Node::Conversion { target, .. } = &mut self.nodes[last] {
                *target = ret;
            }
        }
        Some(function)
    }

    fn variable_encoding(&mut self, name: Id, storage: Storage) -> R<Id> {
        let ty = self.ty(Quals::Drop)?;
        if let Node::Pointer { class_parent, .. } = self.nodes[ty] {
            let ext = self.pointer_ext_qualifiers();
            let (child, _) = self.qualifiers()?;
            if class_parent.is_some() {
                self.fully_qualified_type_name()?;
            }
            let mut pointee = None;
            if let Node::Pointer {
                quals, pointee: p, ..
            } = &mut self.nodes[ty]
            {
                *quals |= ext;
                pointee = Some(*p);
            }
            if let Some(q) = pointee.and_then(|p| quals_of(&mut self.nodes[p])) {
                *q |= child;
            }
        } else {
            let (q, _) = self.qualifiers()?;
            if let Some(quals) = quals_of(&mut self.nodes[ty]) {
                *quals = q;
            }
        }
        Some(self.add(Node::VariableSymbol {
            name,
            ty: Some(ty),
            storage,
        }))
    }

    fn function_encoding(&mut self) -> R<Id> {
        let mut class = if self.eat("$$J0") { FC_EXTERN_C } else { 0 };
        class |= self.function_class()?;
        let mut thunk = None;
        if class & FC_STATIC_THIS_ADJUST != 0 {
            thunk = Some(ThisAdjust {
                static_offset: self.signed()?,
                ..ThisAdjust::default()
            });
        } else if class & FC_VIRTUAL_THIS_ADJUST != 0 {
            let mut adjust = ThisAdjust::default();
            if class & FC_VIRTUAL_THIS_ADJUST_EX != 0 {
                adjust.vbptr_offset = self.signed()?;
                adjust.vboffset_offset = self.signed()?;
            }
            adjust.vtordisp_offset = self.signed()?;
            adjust.static_offset = self.signed()?;
            thunk = Some(adjust);
        }
        let mut sig = if class & FC_NO_PARAMETER_LIST != 0 {
            Signature::global()
        } else {
            let this_quals = class & (FC_GLOBAL | FC_STATIC) == 0;
            self.function_type(this_quals)?
        };
        sig.thunk = thunk;
        sig.class = class;
        let signature = self.add(Node::Function(sig));
        // The name is filled in by the caller.
        Some(self.add(Node::FunctionSymbol {
            name: signature,
            signature,
        }))
    }

    fn function_class(&mut self) -> R<u32> {
        let c = self.next()?;
        let (pr, pt, pu) = (FC_PRIVATE, FC_PROTECTED, FC_PUBLIC);
        Some(match c {
            b'9' => FC_EXTERN_C | FC_NO_PARAMETER_LIST,
            b'A' | b'B' => pr,
            b'C' | b'D' => pr | FC_STATIC,
            b'E' | b'F' => pr | FC_VIRTUAL,
            b'G' | b'H' => pr | FC_STATIC_THIS_ADJUST,
            b'I' | b'J' => pt,
            b'K' | b'L' => pt | FC_STATIC,
            b'M' | b'N' => pt | FC_VIRTUAL,
            b'O' | b'P' => pt | FC_VIRTUAL | FC_STATIC_THIS_ADJUST,
            b'Q' | b'R' => pu,
            b'S' | b'T' => pu | FC_STATIC,
            b'U' | b'V' => pu | FC_VIRTUAL,
            b'W' | b'X' => pu | FC_VIRTUAL | FC_STATIC_THIS_ADJUST,
            b'Y' | b'Z' => FC_GLOBAL,
            b'$' => {
                let mut v = FC_VIRTUAL_THIS_ADJUST;
                if self.eat("R") {
                    v |= FC_VIRTUAL_THIS_ADJUST_EX;
                }
                match self.next()? {
                    b'0' | b'1' => pr | FC_VIRTUAL | v,
                    b'2' | b'3' => pt | FC_VIRTUAL | v,
                    b'4' | b'5' => pu | FC_VIRTUAL | v,
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    fn calling_convention(&mut self) -> R<Option<&'static str>> {
        let c = self.peek()?;
        let cc = match c {
            b'A' | b'B' => "__cdecl",
            b'C' | b'D' => "__pascal",
            b'E' | b'F' => "__thiscall",
            b'G' | b'H' => "__stdcall",
            b'I' | b'J' => "__fastcall",
            b'M' | b'N' => "__clrcall",
            b'O' | b'P' => "__eabi",
            b'Q' => "__vectorcall",
            b'S' => "__attribute__((__swiftcall__)) ",
            b'W' => "__attribute__((__swiftasynccall__)) ",
            _ => return Some(None),
        };
        self.pos += 1;
        Some(Some(cc))
    }

    fn function_type(&mut self, this_quals: bool) -> R<Signature> {
        let mut sig = Signature::global();
        if this_quals {
            sig.quals = self.pointer_ext_qualifiers();
            sig.ref_qualifier = if self.eat("G") {
                1
            } else if self.eat("H") {
                2
            } else {
                0
            };
            sig.quals |= self.qualifiers()?.0;
        }
        sig.call_conv = self.calling_convention()?;
        if !self.eat("@") {
            sig.ret = Some(self.ty(Quals::Result)?);
        }
        let (params, variadic) = self.parameter_list()?;
        sig.params = params;
        sig.variadic = variadic;
        sig.noexcept = if self.eat("_E") {
            true
        } else if self.eat("Z") {
            false
        } else {
            return None;
        };
        Some(sig)
    }

    fn parameter_list(&mut self) -> R<(Option<Vec<Id>>, bool)> {
        if self.eat("X") {
            return Some((None, false));
        }
        let mut params = Vec::new();
        while !self.starts("@") && !self.starts("Z") {
            if self.starts_with_digit() {
                let n = (self.peek()? - b'0') as usize;
                params.push(*self.params.get(n)?);
                self.pos += 1;
                continue;
            }
            let start = self.pos;
            let ty = self.ty(Quals::Drop)?;
            // One-letter types are not worth remembering.
            if self.params.len() < MAX_BACKREFS && self.pos - start > 1 {
                self.params.push(ty);
            }
            params.push(ty);
        }
        let variadic = self.eat("Z");
        if !variadic {
            self.eat("@");
        }
        Some((Some(params), variadic))
    }

    fn qualifiers(&mut self) -> R<(u8, bool)> {
        Some(match self.next()? {
            b'Q' => (0, true),
            b'R' => (CONST, true),
            b'S' => (VOLATILE, true),
            b'T' => (CONST | VOLATILE, true),
            b'A' => (0, false),
            b'B' => (CONST, false),
            b'C' => (VOLATILE, false),
            b'D' => (CONST | VOLATILE, false),
            _ => return None,
        })
    }

    fn pointer_ext_qualifiers(&mut self) -> u8 {
        let mut q = 0;
        self.eat("E"); // __ptr64: not printed
        if self.eat("I") {
            q |= RESTRICT;
        }
        if self.eat("F") {
            q |= UNALIGNED;
        }
        q
    }

    pub fn ty(&mut self, mode: Quals) -> R<Id> {
        self.enter()?;
        let out = self.ty_inner(mode);
        self.leave();
        out
    }

    fn ty_inner(&mut self, mode: Quals) -> R<Id> {
        let mut quals = 0;
        match mode {
            Quals::Mangle => quals = self.qualifiers()?.0,
            Quals::Result if self.eat("?") => quals = self.qualifiers()?.0,
            _ => {}
        }
        let c = self.peek()?;
        let ty = if matches!(c, b'T' | b'U' | b'V' | b'W') {
            self.class_type()?
        } else if self.starts("$$Q") || matches!(c, b'A' | b'P' | b'Q' | b'R' | b'S') {
            if self.is_member_pointer()? {
                self.member_pointer_type()?
            } else {
                self.pointer_type()?
            }
        } else if c == b'Y' {
            self.array_type()?
        } else if self.eat("$$A8@@") {
            let sig = self.function_type(true)?;
            self.add(Node::Function(sig))
        } else if self.eat("$$A6") {
            let sig = self.function_type(false)?;
            self.add(Node::Function(sig))
        } else if c == b'?' {
            self.pos += 1;
            let identifier = self.unqualified_type_name(true)?;
            if !self.eat("@") {
                return None;
            }
            self.add(Node::Custom { identifier })
        } else {
            self.primitive_type()?
        };
        if let Some(q) = quals_of(&mut self.nodes[ty]) {
            *q |= quals;
        }
        Some(ty)
    }

    fn primitive_type(&mut self) -> R<Id> {
        let name = match self.next()? {
            b'X' => "void",
            b'D' => "char",
            b'C' => "signed char",
            b'E' => "unsigned char",
            b'F' => "short",
            b'G' => "unsigned short",
            b'H' => "int",
            b'I' => "unsigned int",
            b'J' => "long",
            b'K' => "unsigned long",
            b'M' => "float",
            b'N' => "double",
            b'O' => "long double",
            b'_' => match self.next()? {
                b'N' => "bool",
                b'J' => "__int64",
                b'K' => "unsigned __int64",
                b'W' => "wchar_t",
                b'Q' => "char8_t",
                b'S' => "char16_t",
                b'U' => "char32_t",
                b'P' => "auto",
                b'T' => "decltype(auto)",
                _ => return None,
            },
            b'$' if self.eat("$T") => "std::nullptr_t",
            _ => return None,
        };
        Some(self.add(Node::Primitive { name, quals: 0 }))
    }

    fn class_type(&mut self) -> R<Id> {
        let tag = match self.next()? {
            b'T' => Tag::Union,
            b'U' => Tag::Struct,
            b'V' => Tag::Class,
            _ => {
                if !self.eat("4") {
                    return None;
                }
                Tag::Enum
            }
        };
        let name = self.fully_qualified_type_name()?;
        Some(self.add(Node::TagType {
            tag,
            name,
            quals: 0,
        }))
    }

    fn is_member_pointer(&self) -> R<bool> {
        let r = self.rest();
        match r[0] {
            b'$' | b'A' => return Some(false),
            _ => {}
        }
        let mut i = 1;
        match r.get(i)? {
            b'6' => return Some(false),
            b'8' => return Some(true),
            c if c.is_ascii_digit() => return None,
            _ => {}
        }
        for q in [b'E', b'I', b'F'] {
            if r.get(i) == Some(&q) {
                i += 1;
            }
        }
        match r.get(i)? {
            b'A'..=b'D' => Some(false),
            b'Q'..=b'T' => Some(true),
            _ => None,
        }
    }

    fn pointer_cv_qualifiers(&mut self) -> R<(u8, Affinity)> {
        if self.eat("$$Q") {
            return Some((0, Affinity::RValueReference));
        }
        Some(match self.next()? {
            b'A' => (0, Affinity::Reference),
            b'P' => (0, Affinity::Pointer),
            b'Q' => (CONST, Affinity::Pointer),
            b'R' => (VOLATILE, Affinity::Pointer),
            b'S' => (CONST | VOLATILE, Affinity::Pointer),
            _ => return None,
        })
    }

    fn pointer_type(&mut self) -> R<Id> {
        let (mut quals, affinity) = self.pointer_cv_qualifiers()?;
        let pointee = if self.eat("6") {
            let sig = self.function_type(false)?;
            self.add(Node::Function(sig))
        } else {
            quals |= self.pointer_ext_qualifiers();
            self.ty(Quals::Mangle)?
        };
        Some(self.add(Node::Pointer {
            affinity,
            quals,
            class_parent: None,
            pointee,
        }))
    }

    fn member_pointer_type(&mut self) -> R<Id> {
        let (mut quals, affinity) = self.pointer_cv_qualifiers()?;
        quals |= self.pointer_ext_qualifiers();
        let (class_parent, pointee) = if self.eat("8") {
            let class = self.fully_qualified_type_name()?;
            let sig = self.function_type(true)?;
            (class, self.add(Node::Function(sig)))
        } else {
            let (pointee_quals, _) = self.qualifiers()?;
            let class = self.fully_qualified_type_name()?;
            let pointee = self.ty(Quals::Drop)?;
            if let Some(q) = quals_of(&mut self.nodes[pointee]) {
                *q = pointee_quals;
            }
            (class, pointee)
        };
        Some(self.add(Node::Pointer {
            affinity,
            quals,
            class_parent: Some(class_parent),
            pointee,
        }))
    }

    fn array_type(&mut self) -> R<Id> {
        self.eat("Y");
        let (rank, negative) = self.number()?;
        if negative || rank == 0 {
            return None;
        }
        let mut dims = Vec::new();
        for _ in 0..rank {
            let (d, negative) = self.number()?;
            if negative {
                return None;
            }
            dims.push(d);
        }
        let mut quals = 0;
        if self.eat("$$C") {
            let (q, member) = self.qualifiers()?;
            if member {
                return None;
            }
            quals = q;
        }
        let element = self.ty(Quals::Drop)?;
        Some(self.add(Node::Array {
            dims,
            quals,
            element,
        }))
    }

    // Names.

    fn fully_qualified_symbol_name(&mut self) -> R<Id> {
        let ident = self.unqualified_symbol_name(false)?;
        let qname = self.name_scope_chain(ident)?;
        if let Node::Structor { .. } = self.nodes[ident] {
            let Node::Qualified(parts) = &self.nodes[qname] else {
                return None;
            };
            if parts.len() < 2 {
                return None;
            }
            let parent = parts[parts.len() - 2];
            if let Node::Structor { class, .. } = &mut self.nodes[ident] {
                *class = Some(parent);
            }
        }
        Some(qname)
    }

    fn fully_qualified_type_name(&mut self) -> R<Id> {
        let ident = self.unqualified_type_name(true)?;
        self.name_scope_chain(ident)
    }

    /// The innermost name and then its scopes, up to an `@`.
    fn name_scope_chain(&mut self, ident: Id) -> R<Id> {
        let mut parts = vec![ident];
        while !self.eat("@") {
            if self.pos >= self.s.len() {
                return None;
            }
            parts.push(self.name_scope_piece()?);
        }
        parts.reverse();
        Some(self.add(Node::Qualified(parts)))
    }

    fn unqualified_symbol_name(&mut self, memorize_templates: bool) -> R<Id> {
        if self.starts_with_digit() {
            return self.backref_name();
        }
        if self.eat("?$") {
            return self.template_instantiation_name(memorize_templates);
        }
        if self.eat("?") {
            return self.function_identifier_code();
        }
        self.simple_name(true)
    }

    fn unqualified_type_name(&mut self, memorize: bool) -> R<Id> {
        if self.starts_with_digit() {
            return self.backref_name();
        }
        if self.eat("?$") {
            return self.template_instantiation_name(true);
        }
        self.simple_name(memorize)
    }

    fn name_scope_piece(&mut self) -> R<Id> {
        if self.starts_with_digit() {
            return self.backref_name();
        }
        if self.eat("?$") {
            return self.template_instantiation_name(true);
        }
        if self.eat("?A") {
            let end = self.rest().iter().position(|&c| c == b'@')?;
            let key = self.take_str(end)?;
            self.pos += 1;
            self.memorize(key);
            return Some(self.named("`anonymous namespace'"));
        }
        if starts_with_local_scope(self.rest()) {
            return self.locally_scoped_name();
        }
        self.simple_name(true)
    }

    fn take_str(&mut self, len: usize) -> R<String> {
        let s = std::str::from_utf8(&self.s[self.pos..self.pos + len]).ok()?;
        self.pos += len;
        Some(s.to_string())
    }

    fn locally_scoped_name(&mut self) -> R<Id> {
        self.eat("?");
        let (number, _) = self.number()?;
        self.eat("?");
        let scope = self.parse()?;
        let mut name = String::from("`");
        let rendered = self.render(scope)?;
        name.push_str(&rendered);
        name.push_str("'::`");
        name.push_str(itoa::Buffer::new().format(number));
        name.push('\'');
        Some(self.named(&name))
    }

    fn backref_name(&mut self) -> R<Id> {
        let n = (self.next()? - b'0') as usize;
        self.names.get(n).copied()
    }

    fn simple_string(&mut self) -> R<String> {
        let end = self.rest().iter().position(|&c| c == b'@')?;
        if end == 0 {
            return None;
        }
        let s = self.take_str(end)?;
        self.pos += 1;
        Some(s)
    }

    fn simple_name(&mut self, memorize: bool) -> R<Id> {
        let s = self.simple_string()?;
        if memorize {
            self.memorize(s.clone());
        }
        Some(self.add(Node::Named {
            name: s,
            targs: None,
        }))
    }

    fn memorize(&mut self, name: String) {
        if self.names.len() >= MAX_BACKREFS {
            return;
        }
        let known = self.names.iter().any(|&id| match &self.nodes[id] {
            Node::Named { name: n, .. } => *n == name,
            _ => false,
        });
        if !known {
            let id = self.add(Node::Named { name, targs: None });
            self.names.push(id);
        }
    }

    /// `node` as text, within the budget for remembered names.
    fn render(&mut self, node: Id) -> R<String> {
        let limit = self.budget.min(self.limit);
        let out = print::render(&self.nodes, node, limit)?;
        self.budget -= out.len();
        Some(out)
    }

    fn template_instantiation_name(&mut self, memorize: bool) -> R<Id> {
        self.enter()?;
        // Template arguments have back-reference tables of their own.
        let outer_names = std::mem::take(&mut self.names);
        let outer_params = std::mem::take(&mut self.params);
        let ident = self.unqualified_symbol_name(false);
        let targs = ident.and_then(|_| self.template_parameter_list());
        self.names = outer_names;
        self.params = outer_params;
        self.leave();
        let (ident, targs) = (ident?, targs?);
        match &mut self.nodes[ident] {
            Node::Named { targs: t, .. }
            | Node::Intrinsic { targs: t, .. }
            | Node::Structor { targs: t, .. }
            | Node::Conversion { targs: t, .. }
            | Node::LiteralOperator { targs: t, .. } => *t = Some(targs),
            _ => return None,
        }
        if memorize {
            let text = self.render(ident)?;
            self.memorize(text);
        }
        Some(ident)
    }

    fn template_parameter_list(&mut self) -> R<Vec<Id>> {
        let mut args = Vec::new();
        while !self.eat("@") {
            if self.eat("$S") || self.eat("$$V") || self.eat("$$$V") || self.eat("$$Z") {
                continue;
            }
            let auto_nttp = self.eat("$M");
            if auto_nttp {
                // The deduced type is not printed.
                self.ty(Quals::Drop)?;
            }
            let dollar = |p: &str| {
                if auto_nttp {
                    p[1..].to_string()
                } else {
                    p.to_string()
                }
            };
            let arg = if self.eat("$$Y") {
                self.fully_qualified_type_name()?
            } else if self.eat("$$B") {
                self.ty(Quals::Drop)?
            } else if self.eat("$$C") {
                self.ty(Quals::Mangle)?
            } else if ["$1", "$H", "$I", "$J"]
                .iter()
                .any(|p| self.starts(&dollar(p)))
            {
                if !auto_nttp {
                    self.pos += 1;
                }
                let inheritance = self.next()?;
                let mut symbol = None;
                if self.starts("?") {
                    let s = self.parse()?;
                    let name = self.symbol_name(s)?;
                    let last = self.last_component(name)?;
                    let text = self.render(last)?;
                    self.memorize(text);
                    symbol = Some(s);
                }
                let count = match inheritance {
                    b'J' => 3,
                    b'I' => 2,
                    b'H' => 1,
                    _ => 0,
                };
                let mut offsets = Vec::new();
                for _ in 0..count {
                    offsets.push(self.signed()?);
                }
                self.add(Node::TemplateReference {
                    symbol,
                    pointer: true,
                    offsets,
                })
            } else if self.starts("$E?") {
                self.pos += 2;
                let symbol = self.parse()?;
                self.add(Node::TemplateReference {
                    symbol: Some(symbol),
                    pointer: false,
                    offsets: Vec::new(),
                })
            } else if ["$F", "$G"].iter().any(|p| self.starts(&dollar(p))) {
                if !auto_nttp {
                    self.pos += 1;
                }
                let count = if self.next()? == b'G' { 3 } else { 2 };
                let mut offsets = Vec::new();
                for _ in 0..count {
                    offsets.push(self.signed()?);
                }
                self.add(Node::TemplateReference {
                    symbol: None,
                    pointer: false,
                    offsets,
                })
            } else if self.eat("$0") || (auto_nttp && self.eat("0")) {
                let (value, negative) = self.number()?;
                self.add(Node::Integer { value, negative })
            } else {
                self.ty(Quals::Drop)?
            };
            args.push(arg);
        }
        Some(args)
    }

    fn symbol_name(&self, symbol: Id) -> Option<Id> {
        match &self.nodes[symbol] {
            Node::FunctionSymbol { name, .. }
            | Node::VariableSymbol { name, .. }
            | Node::SpecialTable { name, .. }
            | Node::GuardVariable { name } => Some(*name),
            _ => None,
        }
    }

    fn function_identifier_code(&mut self) -> R<Id> {
        let (group, c) = if self.eat("__") {
            (2, self.next()?)
        } else if self.eat("_") {
            (1, self.next()?)
        } else {
            (0, self.next()?)
        };
        match (group, c) {
            (0, b'0' | b'1') => Some(self.add(Node::Structor {
                destructor: c == b'1',
                class: None,
                targs: None,
            })),
            (0, b'B') => Some(self.add(Node::Conversion {
                target: None,
                targs: None,
            })),
            (2, b'K') => {
                let name = self.simple_string()?;
                Some(self.add(Node::LiteralOperator { name, targs: None }))
            }
            _ => {
                let op = intrinsic(group, c)?;
                Some(self.add(Node::Intrinsic { op, targs: None }))
            }
        }
    }

    // Numbers.

    fn number(&mut self) -> R<(u64, bool)> {
        let negative = self.eat("?");
        if let Some(c @ b'0'..=b'9') = self.peek() {
            self.pos += 1;
            return Some(((c - b'0') as u64 + 1, negative));
        }
        let mut value: u64 = 0;
        while let Some(c) = self.next() {
            match c {
                b'@' => return Some((value, negative)),
                b'A'..=b'P' => value = (value << 4).wrapping_add((c - b'A') as u64),
                _ => return None,
            }
        }
        None
    }

    fn unsigned(&mut self) -> R<u64> {
        let (n, negative) = self.number()?;
        (!negative).then_some(n)
    }

    fn signed(&mut self) -> R<i64> {
        let (n, negative) = self.number()?;
        let n = i64::try_from(n).ok()?;
        Some(if negative { -n } else { n })
    }
}

#[derive(Clone, Copy)]
pub enum Quals {
    /// Qualifiers precede the type.
    Mangle,
    /// Qualifiers precede the type when a `?` says so.
    Result,
    /// No qualifiers.
    Drop,
}

/// Where a type node keeps its qualifiers (custom types print none).
fn quals_of(node: &mut Node) -> Option<&mut u8> {
    match node {
        Node::Primitive { quals, .. }
        | Node::TagType { quals, .. }
        | Node::Pointer { quals, .. }
        | Node::Array { quals, .. } => Some(quals),
        Node::Function(sig) => Some(&mut sig.quals),
        _ => None,
    }
}

fn rebased_hex(c: u8) -> Option<u8> {
    matches!(c, b'A'..=b'P').then(|| c - b'A')
}

/// `?` number `?` (a number of one digit, or letters `B`-`P` then `A`-`P`
/// ended by `@`; `@` alone is zero) opens a local scope.
fn starts_with_local_scope(s: &[u8]) -> bool {
    let Some(s) = s.strip_prefix(b"?") else {
        return false;
    };
    let Some(end) = s.iter().position(|&c| c == b'?') else {
        return false;
    };
    let candidate = &s[..end];
    match candidate {
        [] => false,
        [c] => *c == b'@' || c.is_ascii_digit(),
        [first, middle @ .., b'@'] => {
            (b'B'..=b'P').contains(first) && middle.iter().all(|c| (b'A'..=b'P').contains(c))
        }
        _ => false,
    }
}

/// The width of a narrow string literal's characters, guessed from its
/// bytes and declared size.
fn char_width(bytes: &[u8], size: u64) -> usize {
    if !size.is_multiple_of(2) {
        return 1;
    }
    if size < 32 {
        let trailing = bytes.iter().rev().take_while(|&&b| b == 0).count();
        if trailing >= 4 && size.is_multiple_of(4) {
            return 4;
        }
        if trailing >= 2 {
            return 2;
        }
        return 1;
    }
    let nulls = bytes.iter().filter(|&&b| b == 0).count();
    if nulls >= 2 * bytes.len() / 3 && size.is_multiple_of(4) {
        return 4;
    }
    if nulls >= bytes.len() / 3 {
        return 2;
    }
    1
}

fn escaped_char(out: &mut String, c: u32) {
    let escape = match c {
        0 => "\\0",
        0x27 => "\\'",
        0x22 => "\\\"",
        0x5C => "\\\\",
        7 => "\\a",
        8 => "\\b",
        0xC => "\\f",
        0xA => "\\n",
        0xD => "\\r",
        9 => "\\t",
        0xB => "\\v",
        0x20..=0x7E => {
            out.push(c as u8 as char);
            return;
        }
        _ => "",
    };
    if !escape.is_empty() {
        out.push_str(escape);
        return;
    }
    // Hex in whole bytes, most significant first.
    let mut digits = Vec::new();
    let mut v = c;
    while v != 0 {
        for _ in 0..2 {
            digits.push(b"0123456789ABCDEF"[(v % 16) as usize]);
            v /= 16;
        }
    }
    out.push_str("\\x");
    out.extend(digits.iter().rev().map(|&d| d as char));
}

/// The operators and special members of `?X` (group 0), `?_X` (1) and
/// `?__X` (2). LLVM prints the other codes of `0`-`9` and `A`-`Z` as an
/// empty name and refuses any other character.
fn intrinsic(group: u8, c: u8) -> Option<&'static str> {
    Some(match (group, c) {
        (0, b'2') => "operator new",
        (0, b'3') => "operator delete",
        (0, b'4') => "operator=",
        (0, b'5') => "operator>>",
        (0, b'6') => "operator<<",
        (0, b'7') => "operator!",
        (0, b'8') => "operator==",
        (0, b'9') => "operator!=",
        (0, b'A') => "operator[]",
        (0, b'C') => "operator->",
        (0, b'D') => "operator*",
        (0, b'E') => "operator++",
        (0, b'F') => "operator--",
        (0, b'G') => "operator-",
        (0, b'H') => "operator+",
        (0, b'I') => "operator&",
        (0, b'J') => "operator->*",
        (0, b'K') => "operator/",
        (0, b'L') => "operator%",
        (0, b'M') => "operator<",
        (0, b'N') => "operator<=",
        (0, b'O') => "operator>",
        (0, b'P') => "operator>=",
        (0, b'Q') => "operator,",
        (0, b'R') => "operator()",
        (0, b'S') => "operator~",
        (0, b'T') => "operator^",
        (0, b'U') => "operator|",
        (0, b'V') => "operator&&",
        (0, b'W') => "operator||",
        (0, b'X') => "operator*=",
        (0, b'Y') => "operator+=",
        (0, b'Z') => "operator-=",
        (1, b'0') => "operator/=",
        (1, b'1') => "operator%=",
        (1, b'2') => "operator>>=",
        (1, b'3') => "operator<<=",
        (1, b'4') => "operator&=",
        (1, b'5') => "operator|=",
        (1, b'6') => "operator^=",
        (1, b'D') => "`vbase dtor'",
        (1, b'E') => "`vector deleting dtor'",
        (1, b'F') => "`default ctor closure'",
        (1, b'G') => "`scalar deleting dtor'",
        (1, b'H') => "`vector ctor iterator'",
        (1, b'I') => "`vector dtor iterator'",
        (1, b'J') => "`vector vbase ctor iterator'",
        (1, b'K') => "`virtual displacement map'",
        (1, b'L') => "`eh vector ctor iterator'",
        (1, b'M') => "`eh vector dtor iterator'",
        (1, b'N') => "`eh vector vbase ctor iterator'",
        (1, b'O') => "`copy ctor closure'",
        (1, b'T') => "`local vftable ctor closure'",
        (1, b'U') => "operator new[]",
        (1, b'V') => "operator delete[]",
        (2, b'A') => "`managed vector ctor iterator'",
        (2, b'B') => "`managed vector dtor iterator'",
        (2, b'C') => "`EH vector copy ctor iterator'",
        (2, b'D') => "`EH vector vbase copy ctor iterator'",
        (2, b'G') => "`vector copy ctor iterator'",
        (2, b'H') => "`vector vbase copy constructor iterator'",
        (2, b'I') => "`managed vector vbase copy constructor iterator'",
        (2, b'L') => "operator co_await",
        (2, b'M') => "operator<=>",
        _ if c.is_ascii_digit() || c.is_ascii_uppercase() => "",
        _ => return None,
    })
}
