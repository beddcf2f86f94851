//! Tarantula: `(ef/(ef+nf)) / (ef/(ef+nf) + ep/(ep+np))` (Jones and
//! Harrold, "Empirical Evaluation of the Tarantula Automatic
//! Fault-Localization Technique", ASE 2005, section 2).

use super::Formula;
use crate::Counts;

/// Tarantula's suspiciousness in [0, 1]. A ratio with no runs behind it
/// (no failing or no passing runs) counts as 0; an element no run executed
/// scores 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tarantula;

fn ratio(x: u32, total: u32) -> f64 {
    if total == 0 {
        0.0
    } else {
        f64::from(x) / f64::from(total)
    }
}

impl Formula for Tarantula {
    fn name(&self) -> String {
        "tarantula".into()
    }

    fn score(&self, c: Counts) -> f64 {
        let f = ratio(c.ef, c.ef + c.nf);
        let p = ratio(c.ep, c.ep + c.np);
        if f + p == 0.0 { 0.0 } else { f / (f + p) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // f = 2/2 = 1, p = 1/3: 1 / (4/3) = 0.75.
        assert!((Tarantula.score(Counts::new(2, 1, 0, 2)) - 0.75).abs() < 1e-12);
        // f = 1/2, p = 3/3: 0.5 / 1.5 = 1/3.
        assert!((Tarantula.score(Counts::new(1, 3, 1, 0)) - 1.0 / 3.0).abs() < 1e-12);
        // Only failing runs executed it: 1.
        assert_eq!(Tarantula.score(Counts::new(1, 0, 0, 4)), 1.0);
        assert_eq!(Tarantula.score(Counts::new(0, 0, 1, 1)), 0.0, "never executed");
        // No passing runs at all: p counts as 0, so 1 if a failing run executed it.
        assert_eq!(Tarantula.score(Counts::new(1, 0, 0, 0)), 1.0);
    }
}
