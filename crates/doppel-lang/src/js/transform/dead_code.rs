//! Insert dead code (ISSTA'19 section 3.2.2, "Add dead code"):
//! `if (false) { v = <small integer>; }` on a new line before a statement.

use super::{insert_statement, scope, shuffled, skip, usable_insert_points};
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};
use rand::Rng as _;

/// Inserts `if (false) { v = n; }` (with `n` in `0..=9`) on a new line, with
/// the statement's indentation, before a statement of a statement list
/// (script, function body or block) that is the first token of its line.
/// `v` is a program variable visible there that is not `const`, a class,
/// function or import binding (see the `scope` module); the code never runs,
/// so TDZ does not matter. Later lines move down by one.
///
/// `Transformed::at` is the inserted statement (new numbering); `node` is the
/// ESTree type of the statement it precedes. Skips when no such place has
/// such a variable.
#[derive(Debug, Clone, Copy, Default)]
pub struct InsertDeadCode;

impl ProgramTransformation for InsertDeadCode {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::InsertDeadCode
    }

    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let points = usable_insert_points(
            kind,
            input.source,
            scope::Use::DeadWrite,
            "no statement start with a program variable in scope",
        )?;
        let mut last = String::new();
        for point in shuffled(points, rng) {
            let var = &point.vars[rng.random_range(0..point.vars.len())];
            let value: u32 = rng.random_range(0..10);
            let code = format!("if (false) {{ {var} = {value}; }}");
            match insert_statement(input.source, &point, &code, "IfStatement", 3) {
                Ok((text, map, at)) => {
                    return Ok(Transformed {
                        kind,
                        description: format!("inserted `{code}` at {}:{} before a {}", at.line, at.column, point.node),
                        text,
                        map,
                        at,
                        node: point.node,
                        expect_variable: None,
                        breakability_may_change: Vec::new(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(skip(kind, format!("no candidate place passed the checks ({last})")))
    }
}
