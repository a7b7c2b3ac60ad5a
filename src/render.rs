//! Renderers (skeleton; filled in by its issue).
