//! A deterministic split of a campaign's work items over N machines
//! (`--partition k/N`), with cargo-nextest's `count:` semantics: item `i`
//! (0-based, in the campaign's deterministic order) belongs to partition
//! `(i mod N) + 1`. N invocations with `1/N` ... `N/N` run every item
//! exactly once, whatever machine runs which index (a Kubernetes Indexed
//! Job's `JOB_COMPLETION_INDEX + 1`, a Slurm array's `SLURM_ARRAY_TASK_ID`).

use std::fmt;
use std::str::FromStr;

/// Partition `index` of `count` (both 1-based: `1 <= index <= count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Partition {
    index: usize,
    count: usize,
}

/// A partition spec that does not name a partition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad partition {spec:?}: {reason} (expected k/N with 1 <= k <= N, e.g. 2/3 or count:2/3)")]
pub struct PartitionError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Partition {
    /// Partition `index` of `count`.
    ///
    /// Errors: `count` is 0, or `index` is not in `1..=count`.
    pub fn new(index: usize, count: usize) -> Result<Partition, PartitionError> {
        let err = |reason: String| PartitionError {
            spec: format!("{index}/{count}"),
            reason,
        };
        if count == 0 {
            return Err(err("the number of partitions N must be at least 1".into()));
        }
        if index == 0 || index > count {
            return Err(err(format!("k must be between 1 and {count} (partitions are 1-based)")));
        }
        Ok(Partition { index, count })
    }

    /// The partition that holds everything (`1/1`).
    pub fn whole() -> Partition {
        Partition { index: 1, count: 1 }
    }

    /// This partition's 1-based index k.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of partitions N.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the item at 0-based `position` of the campaign's order is in
    /// this partition.
    pub fn contains(&self, position: usize) -> bool {
        position % self.count + 1 == self.index
    }

    /// The items of this partition, in their order. `items` must be the
    /// whole campaign in its deterministic order (before `--resume` drops
    /// finished ones: otherwise partitions shift between invocations).
    pub fn select<T>(&self, items: impl IntoIterator<Item = T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.contains(*i))
            .map(|(_, t)| t)
            .collect()
    }
}

impl FromStr for Partition {
    type Err = PartitionError;

    /// `k/N` or nextest's `count:k/N`; surrounding whitespace is ignored.
    fn from_str(s: &str) -> Result<Partition, PartitionError> {
        let err = |reason: &str| PartitionError {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let body = s.trim();
        let body = body.strip_prefix("count:").unwrap_or(body);
        let (k, n) = body.split_once('/').ok_or_else(|| err("no '/'"))?;
        let k: usize = k.trim().parse().map_err(|_| err("k is not a whole number"))?;
        let n: usize = n.trim().parse().map_err(|_| err("N is not a whole number"))?;
        Partition::new(k, n).map_err(|e| PartitionError {
            spec: s.to_string(),
            reason: e.reason,
        })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_go_round_robin_like_nextest_count() {
        let p: Partition = "2/3".parse().unwrap();
        assert_eq!(p.select(0..10), vec![1, 4, 7]);
        assert_eq!(
            "count:1/3".parse::<Partition>().unwrap().select(0..10),
            vec![0, 3, 6, 9]
        );
        assert_eq!(Partition::whole().select(0..3), vec![0, 1, 2]);
        assert_eq!(p.to_string(), "2/3");
    }

    #[test]
    fn every_item_is_in_exactly_one_partition() {
        for n in 1..=7 {
            let mut seen = vec![0; 50];
            for k in 1..=n {
                for i in Partition::new(k, n).unwrap().select(0..50) {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "N = {n}: {seen:?}");
        }
    }

    #[test]
    fn out_of_range_and_malformed_specs_are_clear_errors() {
        for (spec, says) in [
            ("0/3", "1-based"),
            ("4/3", "between 1 and 3"),
            ("1/0", "at least 1"),
            ("3", "no '/'"),
            ("a/3", "k is not"),
            ("1/-2", "N is not"),
            ("hash:1/2", "k is not"),
        ] {
            let e = spec.parse::<Partition>().unwrap_err().to_string();
            assert!(e.contains(says) && e.contains(spec), "{spec}: {e}");
        }
        assert_eq!(" 1/2 ".parse::<Partition>().unwrap(), Partition::new(1, 2).unwrap());
    }
}
