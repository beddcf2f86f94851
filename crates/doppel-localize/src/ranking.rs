//! Darwin's report: the ranking of root causes (TOSEM section 4: by
//! agreement of outputs) and which of the lines found on t it holds.

use crate::darwin::{DivergencePoint, RootCause};
use crate::report::Report;
use crate::truth::Side;

/// A root cause's rank score (higher first): the program's own branches
/// before virtual ones (predicates reach every assignment a wrong value
/// flows through; measured on Codeflaws, docs/results/localize.md), then
/// witnesses on which P and P' agree (the paper's ranking by agreement of
/// outputs), then by where the deviating branch sits in its run's path
/// condition (the fraction before it), earlier first: an assignment's wrong
/// value reaches later predicates too, and the first place the runs can
/// part is nearest its cause. With `late_predicates`, predicates later
/// first (early predicates are often the assignments that read the input,
/// which every input change flips). The lines found on t
/// ([`RootCause::point`]) rank after all of them: the branch divergence
/// point, the critical predicates, the output divergence point (measured
/// on both Codeflaws sets, docs/results/localize.md: critical predicates
/// before the branch point cost same-author pairs top-1 hits).
pub fn score(c: &RootCause, late_predicates: bool) -> f64 {
    let modified = c.line.side == Side::Modified;
    match c.point {
        // Below every deviation: the branch divergence point (P''s branch,
        // then P's), the critical predicates (earlier instances first),
        // the output divergence point (P''s statement, then P's).
        Some(DivergencePoint::Branch) => return if modified { -0.2 } else { -0.3 },
        Some(DivergencePoint::CriticalPredicate) => {
            let (k, n) = c.position;
            return -0.5 - 0.4 * if n == 0 { 0.0 } else { k as f64 / n as f64 };
        }
        Some(DivergencePoint::Output) => return if modified { -1.0 } else { -2.0 },
        None => {}
    }
    let (j, n) = c.position;
    let early = if n == 0 { 0.0 } else { 1.0 - j as f64 / n as f64 };
    let place = if c.predicate && late_predicates {
        1.0 - early
    } else {
        early
    };
    (if c.predicate { 0.0 } else { 4.0 }) + (if c.witness.successful { 2.0 } else { 0.0 }) + place
}

/// Darwin's report of `causes`: ranked by [`score`], at most `max_lines`
/// lines (0: all; every cause stays in [`crate::darwin::DarwinResult::causes`]). The
/// lines found on t (divergence points, critical predicates) are left out
/// when a validated deviation has a successful witness, and also beside
/// any validated deviation without `on_t_with_deviations`
/// ([`crate::darwin::DarwinConfig::on_t_with_deviations`]).
pub fn rank(causes: &[RootCause], max_lines: usize, late_predicates: bool, on_t_with_deviations: bool) -> Report {
    let show_on_t = on_t_shown(causes.iter().filter(|c| c.point.is_none()), on_t_with_deviations);
    let shown = causes.iter().filter(|c| show_on_t || c.point.is_none());
    let mut r = Report::ranked("darwin", shown.map(|c| (c.line, score(c, late_predicates))));
    if max_lines > 0 {
        r.entries.truncate(max_lines);
    }
    r
}

/// Whether the lines found on t belong in a report beside these validated
/// deviations: when there is none, or (`on_t_with_deviations`) when none
/// has a successful witness.
pub(crate) fn on_t_shown<'a>(deviations: impl IntoIterator<Item = &'a RootCause>, on_t_with_deviations: bool) -> bool {
    let mut deviations = deviations.into_iter().peekable();
    deviations.peek().is_none() || (on_t_with_deviations && deviations.all(|d| !d.witness.successful))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::darwin::Witness;
    use crate::truth::Line;

    fn cause(line: u32, point: Option<DivergencePoint>, position: (u32, u32), successful: bool) -> RootCause {
        RootCause {
            line: Line {
                side: Side::Modified,
                line,
            },
            function: "main".into(),
            offset: 0,
            witness: Witness {
                input: vec![],
                reference_output: String::new(),
                modified_output: String::new(),
                successful,
            },
            predicate: false,
            position,
            point,
        }
    }

    fn lines(r: &Report) -> Vec<u32> {
        r.entries.iter().map(|e| e.line.line).collect()
    }

    #[test]
    fn deviations_rank_before_what_t_shows_which_a_successful_witness_leaves_out() {
        let causes = [
            cause(30, Some(DivergencePoint::Output), (4, 9), false),
            cause(20, Some(DivergencePoint::CriticalPredicate), (7, 10), false),
            cause(12, Some(DivergencePoint::CriticalPredicate), (2, 10), false),
            cause(5, None, (3, 40), false),
        ];
        assert_eq!(lines(&rank(&causes, 0, true, true)), [5, 12, 20, 30]);
        // Without them beside deviations, only the deviation is reported.
        assert_eq!(lines(&rank(&causes, 0, true, false)), [5]);
        // Without a deviation, what t shows is the report either way.
        assert_eq!(lines(&rank(&causes[..3], 0, true, false)), [12, 20, 30]);
        assert_eq!(lines(&rank(&causes, 2, true, true)), [5, 12]);
        // A deviation with a successful witness is reported alone.
        let mut strong = causes.to_vec();
        strong[3].witness.successful = true;
        assert_eq!(lines(&rank(&strong, 0, true, true)), [5]);
        // The branch divergence point ranks before the critical predicates.
        let mut t_only = causes[..3].to_vec();
        t_only.push(cause(40, Some(DivergencePoint::Branch), (3, 0), false));
        assert_eq!(lines(&rank(&t_only, 0, true, true)), [40, 12, 20, 30]);
        assert_eq!(
            cause(1, Some(DivergencePoint::CriticalPredicate), (0, 1), false).kind(),
            "critical predicate"
        );
    }
}
