//! ER1b: `ef - ep / (ep + np + 1)`, one of the maximal formulas of Xie,
//! Chen, Kuo and Xu, "A Theoretical Analysis of the Risk Evaluation
//! Formulas for Spectrum-Based Fault Localization" (TOSEM 22(4), 2013,
//! section 4, group ER1), as used by JEST (Park et al., ICSE 2021,
//! section III-E "Bug Localizer").

use super::Formula;
use crate::Counts;

/// ER1b; the denominator is never zero.
#[derive(Debug, Clone, Copy, Default)]
pub struct Er1b;

impl Formula for Er1b {
    fn name(&self) -> String {
        "er1b".into()
    }

    fn score(&self, c: Counts) -> f64 {
        f64::from(c.ef) - f64::from(c.ep) / f64::from(c.ep + c.np + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // 2 - 1 / (1 + 2 + 1) = 1.75.
        assert_eq!(Er1b.score(Counts::new(2, 1, 0, 2)), 1.75);
        // 1 - 3 / (3 + 0 + 1) = 0.25.
        assert_eq!(Er1b.score(Counts::new(1, 3, 1, 0)), 0.25);
        // 0 - 0 = 0; 0 - 4/5 = -0.8.
        assert_eq!(Er1b.score(Counts::new(0, 0, 1, 4)), 0.0);
        assert_eq!(Er1b.score(Counts::new(0, 4, 1, 0)), -0.8);
    }
}
