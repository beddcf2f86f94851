//! Every SBFL formula doppel knows, one line each.

use crate::formula::{DStar, Er1b, Formula, Ochiai, Tarantula};

/// All formulas, in reporting order (DStar with its default `*` = 2).
pub fn all() -> Vec<Box<dyn Formula>> {
    vec![
        Box::new(Ochiai),
        Box::new(Tarantula),
        Box::new(DStar::default()),
        Box::new(Er1b),
    ]
}

/// The formula called `name` (as [`Formula::name`] gives it, case
/// insensitive); `dstarN` selects DStar with exponent `N` (1..=10).
/// `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Box<dyn Formula>> {
    let name = name.to_ascii_lowercase();
    if let Some(n) = name.strip_prefix("dstar").and_then(|s| s.parse::<u32>().ok()) {
        return (1..=10)
            .contains(&n)
            .then(|| Box::new(DStar { star: n }) as Box<dyn Formula>);
    }
    all().into_iter().find(|f| f.name() == name)
}

/// The names of [`all`].
pub fn names() -> Vec<String> {
    all().iter().map(|f| f.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        assert_eq!(names(), ["ochiai", "tarantula", "dstar2", "er1b"]);
        for n in names() {
            assert_eq!(by_name(&n).unwrap().name(), n);
        }
        assert_eq!(by_name("DStar3").unwrap().name(), "dstar3");
        assert!(by_name("dstar0").is_none());
        assert!(by_name("jaccard").is_none());
    }
}
