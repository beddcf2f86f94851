pub fn entry() -> crate::registry::BackendEntry {
    todo!()
}
