//! Spectrum-based fault localization (SBFL), generic over program elements.
//!
//! A *spectrum* records, for every program element (a line, a branch, a
//! specification step: any `Ord + Clone` id), how many passing and failing
//! executions touched it: the counts `ef`, `ep`, `nf`, `np` of Wong et al.,
//! "A survey on software fault localization" (TSE 2016), section 3.1.
//! A *formula* turns those counts into a suspiciousness score; one file per
//! formula under `formula/`, one line per formula in [`registry`]. A
//! [`Ranking`] orders elements by score with ties made explicit (best,
//! worst and average rank of a tie group).
//!
//! ```
//! use doppel_sbfl::{Spectra, Verdict, registry, Ranking};
//! let mut s = Spectra::new();
//! s.add_run([1u32, 2, 3], Verdict::Passed);
//! s.add_run([1u32, 3], Verdict::Failed);
//! let ochiai = registry::by_name("ochiai").unwrap();
//! let r = Ranking::new(&s, ochiai.as_ref());
//! assert_eq!(r.rank_of(&3).unwrap().best, 1);
//! ```

#![deny(missing_docs)]

pub mod formula;
mod ranking;
pub mod registry;
mod spectra;

pub use formula::Formula;
pub use ranking::{Rank, Ranked, Ranking, TieBreak};
pub use spectra::{Counts, Spectra, Verdict};
