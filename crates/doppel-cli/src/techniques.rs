//! The technique registry: one line per technique. `show`, `replay`,
//! `repro`, `classes`, `sample`, `reclassify` and `report` find a run's
//! technique here by its tag ([`doppel_core::RunRecord::technique`]) and
//! call it through [`Technique`]; no command matches on technique names. A
//! new technique is one crate implementing the trait plus one line below.

use doppel_core::technique::Technique;

/// Every technique this doppel knows, in the order reports list them.
static TECHNIQUES: &[&dyn Technique] = &[
    &doppel_differential::technique::Differential,
    &doppel_metamorphic::technique::Metamorphic,
    &doppel_debuginfo::technique::Debuginfo,
    &doppel_conform::technique::Conform,
    &doppel_localize::technique::Localize,
];

/// All registered techniques.
pub fn all() -> &'static [&'static dyn Technique] {
    TECHNIQUES
}

/// The technique with tag `tag`.
///
/// Errors: no registered technique has that tag (a store written by a doppel
/// with more techniques).
pub fn get(tag: &str) -> anyhow::Result<&'static dyn Technique> {
    TECHNIQUES.iter().copied().find(|t| t.tag() == tag).ok_or_else(|| {
        anyhow::anyhow!(
            "technique {tag:?} is not known to this doppel (known: {})",
            TECHNIQUES.iter().map(|t| t.tag()).collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_unique_and_class_layouts_are_prefixed_apart() {
        let mut tags: Vec<&str> = all().iter().map(|t| t.tag()).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), all().len());
        // Classes are grouped by their Display form: two techniques may not
        // share a layout that could read alike (the first part's prefix
        // tells them apart, and at most one technique has none).
        let unprefixed = all().iter().filter(|t| t.class_parts()[0].prefix.is_none()).count();
        assert!(unprefixed <= 1);
        let err = get("nonesuch").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("\"nonesuch\" is not known") && err.contains("differential"),
            "{err}"
        );
        assert_eq!(get("debuginfo").map(|t| t.tag()).ok(), Some("debuginfo"));
    }
}
