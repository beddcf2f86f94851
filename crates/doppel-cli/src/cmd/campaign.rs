//! What every campaign subcommand (`diff`, `meta`, `debuginfo`) shares:
//! the runner's flags (`--partition`, `--claim`, `--deadline`), the
//! progress bar drawn from the runner's events, and the closing lines.

use clap::Args;
use doppel_core::campaign::{CampaignStats, Options, Progress, Source};
use doppel_core::partition::Partition;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The runner's flags.
#[derive(Args, Debug, Clone, Default)]
pub struct RunnerArgs {
    /// Run only partition k of N of the campaign's items (`k/N` or
    /// `count:k/N`, as cargo-nextest: item i goes to partition i mod N + 1),
    /// e.g. one per machine of a Kubernetes Indexed Job or Slurm array.
    #[arg(long, value_name = "k/N", conflicts_with = "claim")]
    pub partition: Option<Partition>,
    /// Claim items one at a time from the PostgreSQL store's work-item
    /// table (leases that expire, so a dead worker's items are taken over):
    /// workers of unequal speed finish together.
    #[arg(long)]
    pub claim: bool,
    /// With --claim: the lease length in seconds (renewed while an item runs).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub lease_secs: u64,
    /// With --claim: this worker's name (default: host name and process id).
    #[arg(long)]
    pub worker: Option<String>,
    /// Start no new item after this budget from now (`90s`, `30m`, `2h`,
    /// `1h30m`, or seconds); running items finish, `--resume` runs the rest.
    #[arg(long, value_parser = parse_budget, value_name = "BUDGET")]
    pub deadline: Option<Duration>,
}

/// `90s`, `30m`, `2h`, `1h30m`, `45` (seconds).
pub fn parse_budget(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = 0u64;
    let mut number = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return Err(format!("'{s}': unknown unit '{c}' (use s, m, h or d, e.g. 1h30m)")),
        };
        let n: u64 = number
            .parse()
            .map_err(|_| format!("'{s}': a number must come before '{c}'"))?;
        total += n * unit;
        number.clear();
    }
    if !number.is_empty() || total == 0 {
        return Err(format!("'{s}': not a budget (e.g. 90s, 30m, 2h, 1h30m)"));
    }
    Ok(Duration::from_secs(total))
}

impl RunnerArgs {
    /// The runner's options for campaign `name`.
    ///
    /// Errors: `--claim` on a store that is not PostgreSQL.
    pub fn options(&self, name: &str, jobs: usize, resume: bool, db: &str) -> anyhow::Result<Options> {
        let source = if self.claim {
            anyhow::ensure!(
                db.starts_with("postgres://") || db.starts_with("postgresql://"),
                "--claim needs a PostgreSQL store (--db postgres://...); with SQLite, split a campaign by --partition k/N"
            );
            Source::Claim {
                worker: self.worker.clone().unwrap_or_else(default_worker),
                lease: Duration::from_secs(self.lease_secs),
            }
        } else if let Some(p) = self.partition {
            Source::Partition(p)
        } else {
            Source::All
        };
        Ok(Options {
            campaign: name.to_string(),
            jobs,
            resume,
            deadline: self.deadline.map(|d| Instant::now() + d),
            source,
        })
    }

    /// ` partition k/N` / ` claiming as W` / nothing, for the opening line.
    pub fn describe(&self) -> String {
        match (&self.partition, self.claim) {
            (_, true) => ", claiming work items".into(),
            (Some(p), _) => format!(", partition {p}"),
            _ => String::new(),
        }
    }
}

fn default_worker() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    format!("{host}:{}", std::process::id())
}

/// The progress handler of a campaign: the bar counts items (`unit`), its
/// message is the last finding; store and environment errors are printed.
pub fn on_progress<'a>(bar: &'a indicatif::ProgressBar, unit: &'a str) -> impl Fn(Progress<'_>) + Sync + 'a {
    move |p: Progress<'_>| match p {
        Progress::Started { total, skipped } => {
            bar.set_length(total as u64);
            if skipped > 0 {
                bar.suspend(|| eprintln!("resuming: {skipped} {unit} already stored are skipped"));
            }
        }
        Progress::Stored { subject, seed, run } => {
            if let Some(f) = run.verdict.finding() {
                bar.set_message(format!("last finding: {subject} seed {seed}: {}", f.class));
            }
        }
        Progress::StoreError { subject, seed, error } => {
            bar.suspend(|| eprintln!("error: a run of {subject} seed {seed} was not stored: {error}"));
        }
        Progress::ItemError { subject, seed, error } => {
            bar.suspend(|| eprintln!("error: {subject} seed {seed}: {error} (not stored; --resume runs it again)"));
        }
        Progress::ItemDone { .. } => bar.inc(1),
    }
}

/// The closing lines about what went wrong or was left, and the exit code:
/// non-zero when a run was not stored or an item failed for the environment.
pub fn finish(stats: &CampaignStats, unit: &str) -> ExitCode {
    if stats.store_unavailable {
        eprintln!(
            "error: the store stayed unreachable (see above): stopped, {} {unit} not started; \
             run the same command with --resume when it is back",
            stats.not_started
        );
    } else if stats.not_started > 0 {
        eprintln!(
            "deadline reached: {} {unit} not started (run again with --resume)",
            stats.not_started
        );
    }
    if stats.taken_over > 0 {
        eprintln!(
            "{} {unit} were completed by another worker first (lease expired); not stored twice",
            stats.taken_over
        );
    }
    if stats.item_errors > 0 {
        eprintln!(
            "error: {} {unit} failed for a reason of the environment (see above); nothing of them is stored, --resume runs them",
            stats.item_errors
        );
    }
    if stats.store_errors > 0 {
        eprintln!("error: {} runs were NOT STORED", stats.store_errors);
    }
    if stats.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::parse_budget;
    use std::time::Duration;

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_budget("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_budget("2m5s"), Ok(Duration::from_secs(125)));
        assert!(parse_budget("5x").is_err());
        assert!(parse_budget("m").is_err());
        assert!(parse_budget("").is_err());
        assert!(parse_budget("10m5").is_err());
    }
}
