//! What the dynamic checkers and the shadow program print: MSan (and
//! other sanitizer) reports and valgrind memcheck reports with their
//! innermost frame in the shadow file, and the `@@doppel` value lines.

use super::source::MARKER;
use crate::wellformed::strip_pid;
use std::collections::HashMap;

/// Where a report points in the shadow source: line and column (0 when
/// the checker gives none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Site {
    pub(super) line: u32,
    pub(super) col: usize,
}

/// A report of a dynamic checker: its first line and its innermost frame in
/// the shadow file, if any.
#[derive(Debug, Clone)]
pub(super) struct Report {
    pub(super) what: String,
    pub(super) site: Option<Site>,
}

/// MSan (or other sanitizer) reports in `stderr`; frames look like
/// `#0 0x55 in main /dir/shadow.c:12:5`.
pub(super) fn sanitizer_reports(stderr: &str, file: &str) -> Vec<Report> {
    let mut out: Vec<Report> = Vec::new();
    let mut in_stack = false;
    for raw in stderr.lines() {
        let line = strip_pid(raw);
        if line.starts_with("WARNING: MemorySanitizer")
            || line.starts_with("ERROR: ")
            || line.contains("runtime error:")
        {
            out.push(Report {
                what: line.to_string(),
                site: None,
            });
            in_stack = true;
            continue;
        }
        if !in_stack {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            if !line.is_empty() {
                in_stack = false;
            }
            continue;
        };
        let report = out.last_mut().expect("in a report");
        if report.site.is_some() {
            continue;
        }
        // "#0 0x.. in fn /path/file.c:12:5"
        if let Some(loc) = rest.split_whitespace().last()
            && let Some(site) = parse_location(loc, file)
        {
            report.site = Some(site);
        }
    }
    out
}

/// `path/file.c:12:5` or `path/file.c:12` in `file` -> the site.
pub(super) fn parse_location(loc: &str, file: &str) -> Option<Site> {
    let mut parts = loc.rsplitn(3, ':');
    let a = parts.next()?;
    let b = parts.next()?;
    let (path, line, col) = match parts.next() {
        Some(p) if b.chars().all(|c| c.is_ascii_digit()) => (p, b, a),
        _ => (b, a, "0"),
    };
    let name = path.rsplit('/').next()?;
    if name != file {
        return None;
    }
    Some(Site {
        line: line.parse().ok()?,
        col: col.parse().ok()?,
    })
}

/// Valgrind reports in `stderr`: blocks of `==pid==` lines separated by an
/// empty `==pid==` line; frames look like `at 0x..: main (shadow.c:12)`.
pub(super) fn valgrind_reports(stderr: &str, file: &str) -> Vec<Report> {
    let mut out: Vec<Report> = Vec::new();
    let mut open = false;
    for raw in stderr.lines().filter(|l| l.starts_with("==")) {
        let line = strip_pid(raw);
        if line.is_empty() {
            open = false;
            continue;
        }
        let is_frame = line.starts_with("at 0x") || line.starts_with("by 0x");
        // Valgrind's own warnings ("Warning: set address range perms ...")
        // are no errors of the program.
        if !open && line.starts_with("Warning:") {
            continue;
        }
        if !open && !is_frame {
            out.push(Report {
                what: line.to_string(),
                site: None,
            });
            open = true;
            continue;
        }
        if let (true, Some(report)) = (is_frame, out.last_mut())
            && report.site.is_none()
            && let Some(inner) = line.rsplit_once('(').map(|(_, r)| r.trim_end_matches(')'))
        {
            report.site = parse_location(inner, file);
        }
    }
    out
}

/// The values printed by a shadow run: (line, name) -> value (the first
/// print of each).
pub(super) fn parse_values(stdout: &str) -> HashMap<(u32, String), String> {
    let mut values = HashMap::new();
    for line in stdout.lines() {
        let Some(at) = line.find(MARKER) else { continue };
        let rest = &line[at + MARKER.len()..];
        let mut it = rest.splitn(3, ' ');
        let (Some(s), Some(name), Some(value)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if let Ok(s) = s.parse::<u32>() {
            values
                .entry((s, name.to_string()))
                .or_insert_with(|| value.trim().to_string());
        }
    }
    values
}

/// Every value printed by a run: (line, name) -> the values in the order
/// printed (one per execution of the line).
pub(super) fn parse_all_values(stdout: &str) -> HashMap<(u32, String), Vec<String>> {
    let mut values: HashMap<(u32, String), Vec<String>> = HashMap::new();
    for line in stdout.lines() {
        let Some(at) = line.find(MARKER) else { continue };
        let mut it = line[at + MARKER.len()..].splitn(3, ' ');
        let (Some(s), Some(name), Some(value)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if let Ok(s) = s.parse::<u32>() {
            values
                .entry((s, name.to_string()))
                .or_default()
                .push(value.trim().to_string());
        }
    }
    values
}
