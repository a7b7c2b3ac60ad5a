//! The tree a Microsoft name is read into. Nodes live in one vector and
//! refer to each other by index: a function parameter back-reference
//! shares the node it names.

pub type Id = usize;

/// cv-qualifiers and the pointer extras, as bits.
pub const CONST: u8 = 1;
pub const VOLATILE: u8 = 2;
pub const RESTRICT: u8 = 4;
pub const UNALIGNED: u8 = 8;

/// Function classes: access, storage, virtuality and the thunk kinds.
pub const FC_PRIVATE: u32 = 1;
pub const FC_PROTECTED: u32 = 2;
pub const FC_PUBLIC: u32 = 4;
pub const FC_GLOBAL: u32 = 8;
pub const FC_STATIC: u32 = 16;
pub const FC_VIRTUAL: u32 = 32;
pub const FC_EXTERN_C: u32 = 64;
pub const FC_NO_PARAMETER_LIST: u32 = 128;
pub const FC_STATIC_THIS_ADJUST: u32 = 256;
pub const FC_VIRTUAL_THIS_ADJUST: u32 = 512;
pub const FC_VIRTUAL_THIS_ADJUST_EX: u32 = 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    Pointer,
    Reference,
    RValueReference,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Class,
    Struct,
    Union,
    Enum,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    PrivateStatic,
    ProtectedStatic,
    PublicStatic,
    Global,
    FunctionLocalStatic,
    /// Synthesized variables (RTTI descriptors): no access, no `static`.
    None,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CharKind {
    Char,
    Char16,
    Char32,
    Wchar,
}

#[derive(Clone, Default)]
pub struct ThisAdjust {
    pub static_offset: i64,
    pub vbptr_offset: i64,
    pub vboffset_offset: i64,
    pub vtordisp_offset: i64,
}

#[derive(Clone)]
pub struct Signature {
    pub class: u32,
    pub quals: u8,
    /// 0: none, 1: `&`, 2: `&&`.
    pub ref_qualifier: u8,
    pub call_conv: Option<&'static str>,
    pub ret: Option<Id>,
    /// `None` for `(void)`.
    pub params: Option<Vec<Id>>,
    pub variadic: bool,
    pub noexcept: bool,
    /// Set for thunks (`[thunk]: `).
    pub thunk: Option<ThisAdjust>,
}

impl Signature {
    pub fn global() -> Signature {
        Signature {
            class: FC_GLOBAL,
            quals: 0,
            ref_qualifier: 0,
            call_conv: None,
            ret: None,
            params: None,
            variadic: false,
            noexcept: false,
            thunk: None,
        }
    }
}

pub enum Node {
    // Types; `quals` are printed after the type's own text.
    Primitive {
        name: &'static str,
        quals: u8,
    },
    TagType {
        tag: Tag,
        name: Id,
        quals: u8,
    },
    Pointer {
        affinity: Affinity,
        quals: u8,
        class_parent: Option<Id>,
        pointee: Id,
    },
    Array {
        dims: Vec<u64>,
        quals: u8,
        element: Id,
    },
    Function(Signature),
    Custom {
        identifier: Id,
    },

    // Names.
    Qualified(Vec<Id>),
    Named {
        name: String,
        targs: Option<Vec<Id>>,
    },
    Intrinsic {
        op: &'static str,
        targs: Option<Vec<Id>>,
    },
    Structor {
        destructor: bool,
        class: Option<Id>,
        targs: Option<Vec<Id>>,
    },
    Conversion {
        target: Option<Id>,
        targs: Option<Vec<Id>>,
    },
    LiteralOperator {
        name: String,
        targs: Option<Vec<Id>>,
    },
    LocalStaticGuard {
        thread: bool,
        scope_index: u64,
    },
    DynamicStructor {
        destructor: bool,
        variable: Option<Id>,
        name: Option<Id>,
    },
    VcallThunk {
        offset: u64,
    },
    RttiBaseClassDescriptor {
        nv_offset: u64,
        vbptr_offset: i64,
        vbtable_offset: u64,
        flags: u64,
    },

    // Template arguments other than types.
    Integer {
        value: u64,
        negative: bool,
    },
    TemplateReference {
        symbol: Option<Id>,
        pointer: bool,
        offsets: Vec<i64>,
    },

    // Symbols.
    FunctionSymbol {
        name: Id,
        signature: Id,
    },
    VariableSymbol {
        name: Id,
        ty: Option<Id>,
        storage: Storage,
    },
    SpecialTable {
        name: Id,
        quals: u8,
        target: Option<Id>,
    },
    GuardVariable {
        name: Id,
    },
    StringLiteral {
        kind: CharKind,
        text: String,
        truncated: bool,
    },
    Md5 {
        name: String,
    },
}
