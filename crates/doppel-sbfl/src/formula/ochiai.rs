//! Ochiai: `ef / sqrt((ef + nf) * (ef + ep))` (Abreu, Zoeteweij and van
//! Gemund, "On the Accuracy of Spectrum-based Fault Localization",
//! TAIC-PART 2007, section 3).

use super::Formula;
use crate::Counts;

/// The Ochiai coefficient; 0 when no failing run exists or the element was
/// never executed (zero denominator).
#[derive(Debug, Clone, Copy, Default)]
pub struct Ochiai;

impl Formula for Ochiai {
    fn name(&self) -> String {
        "ochiai".into()
    }

    fn score(&self, c: Counts) -> f64 {
        let d = (f64::from(c.ef + c.nf) * f64::from(c.ef + c.ep)).sqrt();
        if d == 0.0 { 0.0 } else { f64::from(c.ef) / d }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // 2 of 2 failing, 1 of 3 passing: 2 / sqrt(2 * 3) = 0.8164965809...
        assert!((Ochiai.score(Counts::new(2, 1, 0, 2)) - 0.816_496_580_927_726).abs() < 1e-12);
        // Executed by the only failing run and nothing else: 1.
        assert_eq!(Ochiai.score(Counts::new(1, 0, 0, 4)), 1.0);
        // 1 of 2 failing, 3 of 3 passing: 1 / sqrt(2 * 4) = 0.35355...
        assert!((Ochiai.score(Counts::new(1, 3, 1, 0)) - 0.353_553_390_593_273_8).abs() < 1e-12);
        assert_eq!(Ochiai.score(Counts::new(0, 0, 1, 1)), 0.0, "never executed");
        assert_eq!(Ochiai.score(Counts::new(0, 2, 0, 0)), 0.0, "no failing run");
    }
}
