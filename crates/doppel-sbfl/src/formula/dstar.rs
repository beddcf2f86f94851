//! DStar: `ef^* / (ep + nf)` (Wong, Debroy, Gao and Li, "The DStar Method
//! for Effective Software Fault Localization", IEEE Trans. Reliability
//! 63(1), 2014, section III), `*` = 2 by default.

use super::Formula;
use crate::Counts;

/// DStar with exponent `star` (2 in the paper's main evaluation). With
/// `ep + nf = 0` the fraction is `+inf` if `ef > 0` (executed by every
/// failing run and no passing run: the most suspicious possible) and 0
/// otherwise (no failing run at all).
#[derive(Debug, Clone, Copy)]
pub struct DStar {
    /// The exponent `*` applied to `ef`.
    pub star: u32,
}

impl Default for DStar {
    fn default() -> Self {
        Self { star: 2 }
    }
}

impl Formula for DStar {
    fn name(&self) -> String {
        format!("dstar{}", self.star)
    }

    fn score(&self, c: Counts) -> f64 {
        let num = f64::from(c.ef).powi(self.star as i32);
        let den = f64::from(c.ep + c.nf);
        if den == 0.0 {
            if c.ef > 0 { f64::INFINITY } else { 0.0 }
        } else {
            num / den
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let d = DStar::default();
        assert_eq!(d.name(), "dstar2");
        // 2^2 / (1 + 0) = 4.
        assert_eq!(d.score(Counts::new(2, 1, 0, 2)), 4.0);
        // 1^2 / (3 + 1) = 0.25.
        assert_eq!(d.score(Counts::new(1, 3, 1, 0)), 0.25);
        // 3^2 / (2 + 1) = 3.
        assert_eq!(d.score(Counts::new(3, 2, 1, 5)), 3.0);
        assert_eq!(d.score(Counts::new(1, 0, 0, 4)), f64::INFINITY);
        assert_eq!(d.score(Counts::new(0, 0, 0, 4)), 0.0);
        let d3 = DStar { star: 3 };
        assert_eq!(d3.name(), "dstar3");
        // 3^3 / (2 + 1) = 9.
        assert_eq!(d3.score(Counts::new(3, 2, 1, 5)), 9.0);
    }
}
