//! SBFL risk-evaluation formulas, one file each. A formula maps the
//! [`Counts`] of an element to a suspiciousness score: higher means more
//! likely faulty. Scores are finite or `+inf`, never NaN: each formula says
//! what it gives where its fraction has a zero denominator.

use crate::Counts;

mod dstar;
mod er1b;
mod ochiai;
mod tarantula;

pub use dstar::DStar;
pub use er1b::Er1b;
pub use ochiai::Ochiai;
pub use tarantula::Tarantula;

/// A risk-evaluation formula.
pub trait Formula: Send + Sync {
    /// The formula's name as used on the command line and in reports
    /// (lower case, e.g. `ochiai`, `dstar2`).
    fn name(&self) -> String;
    /// The suspiciousness of an element with these counts (finite or
    /// `+inf`, never NaN).
    fn score(&self, c: Counts) -> f64;
}
