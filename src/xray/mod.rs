//! LLVM XRay flight-data-recorder traces (skeleton; filled in by its issue).
