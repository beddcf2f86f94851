//! Slicing of a deviation query to the input bytes its negated branch
//! depends on (Darwin, TOSEM section 5, "dynamic slicing"; the constraint
//! independence of KLEE, Cadar et al., OSDI 2008).
//!
//! The constraints of f ∧ ψ1..ψi fall into independent groups: two
//! constraints are in one group when they share an input byte, directly or
//! through other constraints. t satisfies every constraint, so a group
//! that shares no byte with ¬ψi+1 stays satisfied when those bytes keep
//! t's values (the concretization of the rest): φi is satisfiable iff
//! ¬ψi+1 together with the groups it touches is, and a model of that
//! slice, completed with t's other bytes, satisfies φi. The solver sees
//! the slice only.
//!
//! [`Slicer`] keeps the groups of a growing constraint set (a union-find
//! over input byte indices) and answers which constraints a new condition
//! touches.

/// A constraint registered with a [`Slicer`]: its index in registration
/// order (the caller keeps the constraint itself).
pub type ConstraintId = usize;

/// Independent groups of constraints over input bytes `0..n`.
#[derive(Debug, Clone)]
pub struct Slicer {
    parent: Vec<u32>,
    /// Per registered constraint: one of its bytes (all of them are in one
    /// group once registered), or `None` for a constraint without input
    /// bytes (concrete: true on t, never in a slice).
    anchors: Vec<Option<u32>>,
}

impl Slicer {
    /// A slicer over input bytes `0..bytes`.
    pub fn new(bytes: usize) -> Self {
        Slicer {
            parent: (0..bytes as u32).collect(),
            anchors: Vec::new(),
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            // Path halving.
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra.max(rb) as usize] = ra.min(rb);
        }
    }

    /// Registers a constraint over the input bytes `bytes` (indices below
    /// the slicer's size; others are ignored) and returns its id: its bytes
    /// join one group.
    pub fn add(&mut self, bytes: &[u32]) -> ConstraintId {
        let bytes: Vec<u32> = bytes
            .iter()
            .copied()
            .filter(|&b| (b as usize) < self.parent.len())
            .collect();
        for w in bytes.windows(2) {
            self.union(w[0], w[1]);
        }
        self.anchors.push(bytes.first().copied());
        self.anchors.len() - 1
    }

    /// The constraints (ids in registration order) that share a group with
    /// any of `bytes`, the condition to be added (not registered by this
    /// call), and the input bytes of those groups (sorted): the slice of a
    /// query of that condition.
    pub fn slice(&mut self, bytes: &[u32]) -> (Vec<ConstraintId>, Vec<u32>) {
        let n = self.parent.len();
        let mut roots: Vec<u32> = Vec::new();
        for &b in bytes.iter().filter(|&&b| (b as usize) < n) {
            roots.push(self.find(b));
        }
        roots.sort_unstable();
        roots.dedup();
        let mut members = Vec::new();
        for i in 0..self.anchors.len() {
            if let Some(a) = self.anchors[i]
                && roots.binary_search(&self.find(a)).is_ok()
            {
                members.push(i);
            }
        }
        let vars = (0..self.parent.len() as u32)
            .filter(|&b| roots.binary_search(&self.find(b)).is_ok())
            .collect();
        (members, vars)
    }

    /// Registered constraints.
    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_reaches_the_groups_it_shares_a_byte_with() {
        // Bytes 0..6: c0 over {0,1}, c1 over {2}, c2 over {1,3}, c3 over {5}.
        let mut s = Slicer::new(6);
        let c0 = s.add(&[0, 1]);
        let c1 = s.add(&[2]);
        let c2 = s.add(&[1, 3]);
        let c3 = s.add(&[5]);
        assert_eq!(s.slice(&[3]), (vec![c0, c2], vec![0, 1, 3]));
        assert_eq!(s.slice(&[2]), (vec![c1], vec![2]));
        // A condition over two groups joins them in its slice only.
        assert_eq!(s.slice(&[2, 5]), (vec![c1, c3], vec![2, 5]));
        assert_eq!(s.slice(&[5]), (vec![c3], vec![5]));
        // A byte no constraint mentions: an empty slice but the byte itself.
        assert_eq!(s.slice(&[4]), (vec![], vec![4]));
    }

    #[test]
    fn registering_a_bridge_merges_groups() {
        let mut s = Slicer::new(4);
        let a = s.add(&[0]);
        let b = s.add(&[3]);
        assert_eq!(s.slice(&[0]).0, vec![a]);
        let bridge = s.add(&[3, 0]);
        assert_eq!(s.slice(&[0]), (vec![a, b, bridge], vec![0, 3]));
    }

    #[test]
    fn concrete_constraints_and_out_of_range_bytes_are_in_no_slice() {
        let mut s = Slicer::new(2);
        let concrete = s.add(&[]);
        let c = s.add(&[1, 9]);
        assert_eq!(s.slice(&[1]).0, vec![c]);
        assert!(!s.slice(&[0, 1, 9]).0.contains(&concrete));
        assert_eq!(s.len(), 2);
    }
}
