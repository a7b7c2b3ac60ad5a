//! The writer: a tree of [`super::ast`] as LLVM 22 prints it. Types print
//! in two halves around the name they declare (`int (*` name `)(int)`),
//! and a space goes between a word or `>` and what follows.
//!
//! Output is bounded: printing stops once it passes its limit (shared
//! parameter types can make a short name print exponentially), and so does
//! nesting deeper than [`MAX_DEPTH`].

use super::ast::*;

const MAX_DEPTH: u32 = 384;

const NO_CALLING_CONVENTION: u8 = 1;

/// `node` printed, or `None` past `limit` bytes or [`MAX_DEPTH`].
pub fn render(nodes: &[Node], node: Id, limit: usize) -> Option<String> {
    let mut p = Printer {
        nodes,
        out: String::new(),
        limit,
        depth: 0,
        failed: false,
    };
    p.node(node);
    (!p.failed).then_some(p.out)
}

struct Printer<'a> {
    nodes: &'a [Node],
    out: String,
    limit: usize,
    depth: u32,
    failed: bool,
}

impl Printer<'_> {
    fn s(&mut self, s: &str) {
        if self.failed {
            return;
        }
        if self.out.len() + s.len() > self.limit {
            self.failed = true;
            return;
        }
        self.out.push_str(s);
    }

    fn int(&mut self, v: impl itoa::Integer) {
        self.s(itoa::Buffer::new().format(v));
    }

    fn space_if_necessary(&mut self) {
        if let Some(c) = self.out.bytes().last()
            && (c.is_ascii_alphanumeric() || c == b'>')
        {
            self.s(" ");
        }
    }

    /// Returns whether it printed, so the next one knows to add a space.
    fn qualifiers(&mut self, q: u8, mut space_before: bool, space_after: bool) {
        let before = self.out.len();
        for (bit, word) in [
            (CONST, "const"),
            (VOLATILE, "volatile"),
            (RESTRICT, "__restrict"),
        ] {
            if q & bit != 0 {
                if space_before {
                    self.s(" ");
                }
                self.s(word);
                space_before = true;
            }
        }
        if space_after && self.out.len() > before {
            self.s(" ");
        }
    }

    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.failed = true;
        }
        !self.failed
    }

    /// `f` one level deeper, unless printing has failed or is too deep.
    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        if self.enter() {
            f(self);
        }
        self.depth -= 1;
    }

    /// A whole node: a type's two halves, a name, a symbol.
    fn node(&mut self, id: Id) {
        self.nested(|p| p.node_inner(id));
    }

    /// Nodes one after another, `separator` between them.
    fn list(&mut self, ids: &[Id], separator: &str) {
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                self.s(separator);
            }
            self.node(id);
        }
    }

    fn node_inner(&mut self, id: Id) {
        let nodes = self.nodes;
        match &nodes[id] {
            Node::Primitive { .. }
            | Node::TagType { .. }
            | Node::Pointer { .. }
            | Node::Array { .. }
            | Node::Function(_)
            | Node::Custom { .. } => {
                self.pre(id, 0);
                self.post(id, 0);
            }
            Node::Qualified(parts) => self.list(parts, "::"),
            Node::Named { name, targs } => {
                self.s(name);
                self.targs(targs);
            }
            Node::Intrinsic { op, targs } => {
                self.s(op);
                self.targs(targs);
            }
            Node::Structor {
                destructor,
                class,
                targs,
            } => {
                if *destructor {
                    self.s("~");
                }
                if let Some(class) = class {
                    self.node(*class);
                }
                self.targs(targs);
            }
            Node::Conversion { target, targs } => {
                self.s("operator");
                self.targs(targs);
                self.s(" ");
                if let Some(target) = target {
                    self.node(*target);
                }
            }
            Node::LiteralOperator { name, targs } => {
                self.s("operator \"\"");
                self.s(name);
                self.targs(targs);
            }
            Node::LocalStaticGuard {
                thread,
                scope_index,
            } => {
                self.s(if *thread {
                    "`local static thread guard'"
                } else {
                    "`local static guard'"
                });
                if *scope_index > 0 {
                    self.s("{");
                    self.int(*scope_index as u32);
                    self.s("}");
                }
            }
            Node::DynamicStructor {
                destructor,
                variable,
                name,
            } => {
                self.s(if *destructor {
                    "`dynamic atexit destructor for "
                } else {
                    "`dynamic initializer for "
                });
                if let Some(variable) = variable {
                    self.s("`");
                    self.node(*variable);
                } else if let Some(name) = name {
                    self.s("'");
                    self.node(*name);
                }
                self.s("''");
            }
            Node::VcallThunk { offset } => {
                self.s("`vcall'{");
                self.int(*offset);
                self.s(", {flat}}");
            }
            Node::RttiBaseClassDescriptor {
                nv_offset,
                vbptr_offset,
                vbtable_offset,
                flags,
            } => {
                self.s("`RTTI Base Class Descriptor at (");
                self.int(*nv_offset as u32);
                self.s(", ");
                self.int(*vbptr_offset as i32);
                self.s(", ");
                self.int(*vbtable_offset as u32);
                self.s(", ");
                self.int(*flags as u32);
                self.s(")'");
            }
            Node::Integer { value, negative } => {
                if *negative {
                    self.s("-");
                }
                self.int(*value);
            }
            Node::TemplateReference {
                symbol,
                pointer,
                offsets,
            } => {
                if !offsets.is_empty() {
                    self.s("{");
                } else if *pointer {
                    self.s("&");
                }
                if let Some(symbol) = symbol {
                    self.node(*symbol);
                    if !offsets.is_empty() {
                        self.s(", ");
                    }
                }
                for (i, &o) in offsets.iter().enumerate() {
                    if i > 0 {
                        self.s(", ");
                    }
                    self.int(o);
                }
                if !offsets.is_empty() {
                    self.s("}");
                }
            }
            Node::FunctionSymbol { name, signature } => {
                self.pre(*signature, 0);
                self.space_if_necessary();
                self.node(*name);
                self.post(*signature, 0);
            }
            Node::VariableSymbol { name, ty, storage } => {
                self.s(match storage {
                    Storage::PrivateStatic => "private: static ",
                    Storage::ProtectedStatic => "protected: static ",
                    Storage::PublicStatic => "public: static ",
                    _ => "",
                });
                if let Some(ty) = ty {
                    self.pre(*ty, 0);
                    self.space_if_necessary();
                }
                self.node(*name);
                if let Some(ty) = ty {
                    self.post(*ty, 0);
                }
            }
            Node::SpecialTable {
                name,
                quals,
                target,
            } => {
                self.qualifiers(*quals, false, true);
                self.node(*name);
                if let Some(target) = target {
                    self.s("{for `");
                    self.node(*target);
                    self.s("'}");
                }
            }
            Node::GuardVariable { name } => self.node(*name),
            Node::StringLiteral {
                kind,
                text,
                truncated,
            } => {
                self.s(match kind {
                    CharKind::Char => "\"",
                    CharKind::Char16 => "u\"",
                    CharKind::Char32 => "U\"",
                    CharKind::Wchar => "L\"",
                });
                self.s(text);
                self.s("\"");
                if *truncated {
                    self.s("...");
                }
            }
            Node::Md5 { name } => self.s(name),
        }
    }

    fn targs(&mut self, targs: &Option<Vec<Id>>) {
        let Some(targs) = targs else { return };
        self.s("<");
        self.list(targs, ", ");
        self.s(">");
    }

    /// The half of a type before the declared name.
    fn pre(&mut self, id: Id, flags: u8) {
        self.nested(|p| p.pre_inner(id, flags));
    }

    fn pre_inner(&mut self, id: Id, flags: u8) {
        let nodes = self.nodes;
        match &nodes[id] {
            Node::Primitive { name, quals } => {
                self.s(name);
                self.qualifiers(*quals, true, false);
            }
            Node::TagType { tag, name, quals } => {
                self.s(match tag {
                    Tag::Class => "class ",
                    Tag::Struct => "struct ",
                    Tag::Union => "union ",
                    Tag::Enum => "enum ",
                });
                self.node(*name);
                self.qualifiers(*quals, true, false);
            }
            Node::Pointer {
                affinity,
                quals,
                class_parent,
                pointee,
            } => {
                let pointee_node = &nodes[*pointee];
                let function = matches!(pointee_node, Node::Function(_));
                if function {
                    // The calling convention goes inside the parentheses.
                    self.pre(*pointee, NO_CALLING_CONVENTION);
                } else {
                    self.pre(*pointee, flags);
                }
                self.space_if_necessary();
                if quals & UNALIGNED != 0 {
                    self.s("__unaligned ");
                }
                if let Node::Function(sig) = pointee_node {
                    self.s("(");
                    self.calling_convention(sig.call_conv);
                    self.s(" ");
                } else if matches!(pointee_node, Node::Array { .. }) {
                    self.s("(");
                }
                if let Some(class) = class_parent {
                    self.node(*class);
                    self.s("::");
                }
                self.s(match affinity {
                    Affinity::Pointer => "*",
                    Affinity::Reference => "&",
                    Affinity::RValueReference => "&&",
                });
                self.qualifiers(*quals, false, false);
            }
            Node::Array { quals, element, .. } => {
                self.pre(*element, flags);
                self.qualifiers(*quals, true, false);
            }
            Node::Function(sig) => {
                if sig.thunk.is_some() {
                    self.s("[thunk]: ");
                }
                let c = sig.class;
                if c & FC_PUBLIC != 0 {
                    self.s("public: ");
                }
                if c & FC_PROTECTED != 0 {
                    self.s("protected: ");
                }
                if c & FC_PRIVATE != 0 {
                    self.s("private: ");
                }
                if c & FC_GLOBAL == 0 && c & FC_STATIC != 0 {
                    self.s("static ");
                }
                if c & FC_VIRTUAL != 0 {
                    self.s("virtual ");
                }
                if c & FC_EXTERN_C != 0 {
                    self.s("extern \"C\" ");
                }
                if let Some(ret) = sig.ret {
                    self.pre(ret, flags);
                    self.s(" ");
                }
                if flags & NO_CALLING_CONVENTION == 0 {
                    self.calling_convention(sig.call_conv);
                }
            }
            Node::Custom { identifier } => self.node(*identifier),
            _ => self.node(id),
        }
    }

    fn calling_convention(&mut self, cc: Option<&str>) {
        self.space_if_necessary();
        if let Some(cc) = cc {
            self.s(cc);
        }
    }

    /// The half of a type after the declared name.
    fn post(&mut self, id: Id, flags: u8) {
        self.nested(|p| p.post_inner(id, flags));
    }

    fn post_inner(&mut self, id: Id, flags: u8) {
        let nodes = self.nodes;
        match &nodes[id] {
            Node::Pointer { pointee, .. } => {
                if matches!(nodes[*pointee], Node::Function(_) | Node::Array { .. }) {
                    self.s(")");
                }
                self.post(*pointee, flags);
            }
            Node::Array { dims, element, .. } => {
                self.s("[");
                for (i, &d) in dims.iter().enumerate() {
                    if i > 0 {
                        self.s("][");
                    }
                    if d != 0 {
                        self.int(d);
                    }
                }
                self.s("]");
                self.post(*element, flags);
            }
            Node::Function(sig) => {
                if let Some(adjust) = &sig.thunk {
                    let c = sig.class;
                    if c & FC_STATIC_THIS_ADJUST != 0 {
                        self.s("`adjustor{");
                        self.int(adjust.static_offset as u32);
                        self.s("}'");
                    } else if c & FC_VIRTUAL_THIS_ADJUST != 0 {
                        if c & FC_VIRTUAL_THIS_ADJUST_EX != 0 {
                            self.s("`vtordispex{");
                            self.int(adjust.vbptr_offset as i32);
                            self.s(", ");
                            self.int(adjust.vboffset_offset as i32);
                            self.s(", ");
                        } else {
                            self.s("`vtordisp{");
                        }
                        self.int(adjust.vtordisp_offset as i32);
                        self.s(", ");
                        self.int(adjust.static_offset as u32);
                        self.s("}'");
                    }
                }
                if sig.class & FC_NO_PARAMETER_LIST == 0 {
                    self.s("(");
                    match &sig.params {
                        Some(params) => self.list(params, ", "),
                        None => self.s("void"),
                    }
                    if sig.variadic {
                        if !self.out.ends_with('(') {
                            self.s(", ");
                        }
                        self.s("...");
                    }
                    self.s(")");
                }
                for (bit, word) in [
                    (CONST, " const"),
                    (VOLATILE, " volatile"),
                    (RESTRICT, " __restrict"),
                    (UNALIGNED, " __unaligned"),
                ] {
                    if sig.quals & bit != 0 {
                        self.s(word);
                    }
                }
                if sig.noexcept {
                    self.s(" noexcept");
                }
                match sig.ref_qualifier {
                    1 => self.s(" &"),
                    2 => self.s(" &&"),
                    _ => {}
                }
                if let Some(ret) = sig.ret {
                    self.post(ret, flags);
                }
            }
            _ => {}
        }
    }
}
