//! Insert a no-op-like statement (ISSTA'19 section 3.2.2, "Add no-op-like
//! statement"): a new line `v = v;` before a statement, `v` a variable
//! visible there that is not const, volatile, extern, an array or a function
//! (structs defined in the file without const members, and pointers, are
//! fine), and that is definitely assigned there (`crate::c::assignment`):
//! reading an automatic variable that holds its indeterminate initial
//! value, whose address is never taken, is undefined behaviour (C11
//! 6.3.2.1p2), and the new program must do what the old one did. Lines
//! after the insertion move down by one.

use super::dead_code::insert_statement;
use super::scope::Variable;
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};

/// [`ProgramTransformationKind::InsertNoOp`] for C.
pub struct InsertNoOp;

impl ProgramTransformation for InsertNoOp {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::InsertNoOp
    }

    /// Inserts `v = v;` on a new line before a randomly chosen statement;
    /// [`Transformed::node`] is `expression_statement`, [`Transformed::at`]
    /// the new statement in new numbering.
    ///
    /// Errors: [`Skip`] when the program has syntax errors, no statement
    /// begins a line, or no self-assignable, definitely assigned variable
    /// is in scope.
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        insert_statement(
            self.kind(),
            input,
            rng,
            Variable::self_assignable,
            true,
            "expression_statement",
            |v, _| format!("{0} = {0};", v.name),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::transform::test_util::{compiles, run};
    use crate::edit::Pos;

    #[test]
    fn single_candidate_gives_the_exact_program() {
        let src = "int main(void) {\n    const int c = 2;\n    int arr[3];\n    volatile int v = 0;\n    char *p = 0;\n    return c + arr[0] + v + (p != 0);\n}\n";
        let t = run(&InsertNoOp, src, 7).unwrap();
        assert_eq!(
            t.text,
            "int main(void) {\n    const int c = 2;\n    int arr[3];\n    volatile int v = 0;\n    char *p = 0;\n    p = p;\n    return c + arr[0] + v + (p != 0);\n}\n"
        );
        assert_eq!(t.at, Pos::new(6, 5));
        assert_eq!(t.node, "expression_statement");
        assert_eq!(t.map.map_line(6), Some(7));
        assert_eq!(t.map.map(Pos::new(7, 1)), Some(Pos::new(8, 1)));
        assert!(compiles(&t.text));
    }

    #[test]
    fn const_and_volatile_variables_are_never_chosen() {
        let src = "int main(void) {\n    const int c = 2;\n    volatile int v = 0;\n    return c + v;\n}\n";
        let err = run(&InsertNoOp, src, 1).unwrap_err();
        assert!(err.reason.contains("no suitable variable"), "{}", err.reason);
    }

    #[test]
    fn only_definitely_assigned_variables_are_read() {
        // c-testsuite 00143.c, reduced: `count` and `to` are assigned late.
        let src = "int g;\nint main(void) {\n    int count, n;\n    short *to;\n    short b[3];\n    for (n = 0; n < 3; n++) {\n        b[n] = 0;\n    }\n    to = b;\n    count = 3;\n    return count + *to + g;\n}\n";
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..60 {
            let t = run(&InsertNoOp, src, seed).unwrap();
            let line = t.text.lines().nth(t.at.line as usize - 1).unwrap().trim().to_string();
            let var = line.split(" = ").next().unwrap().to_string();
            let before = t.at.line as usize - 1;
            let prior: Vec<&str> = t.text.lines().take(before).collect();
            match var.as_str() {
                "g" => {}
                "n" => assert!(prior.iter().any(|l| l.contains("for (n = 0")), "{}", t.text),
                "to" => assert!(prior.iter().any(|l| l.contains("to = b;")), "{}", t.text),
                "count" => assert!(prior.iter().any(|l| l.contains("count = 3;")), "{}", t.text),
                other => panic!("unexpected variable {other}:\n{}", t.text),
            }
            seen.insert(var);
            assert!(compiles(&t.text));
        }
        assert!(seen.contains("count") && seen.contains("g"), "{seen:?}");
        // Nothing assigned yet before the first statements: only the global.
        let early = "int main(void) {\n    int x;\n    x = 1;\n    return x;\n}\n";
        for seed in 0..10 {
            let t = run(&InsertNoOp, early, seed).unwrap();
            assert_eq!(t.at.line, 4, "only before `return x;`:\n{}", t.text);
        }
    }

    #[test]
    fn structs_and_globals_compile() {
        let src = "struct s { int a; double b; };\nstatic int g;\nint main(void) {\n    struct s v = {1, 2.0};\n    g = v.a;\n    return g;\n}\n";
        for seed in 0..10 {
            let t = run(&InsertNoOp, src, seed).unwrap();
            assert!(compiles(&t.text));
        }
    }
}
