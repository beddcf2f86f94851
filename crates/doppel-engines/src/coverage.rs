//! engine262 semantics coverage (filled in with the engine262 host).
