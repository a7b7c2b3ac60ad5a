//! Demangling, full (human) and LLVM-compatible (skeleton).
