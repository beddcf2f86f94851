//! Insert a no-op statement (ISSTA'19 section 3.2.2, "Add no-op-like
//! statement"): `v = v;` on a new line before a statement.

use super::{insert_statement, scope, shuffled, skip, usable_insert_points};
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};
use rand::Rng as _;

/// Inserts `v = v;` on a new line, with the statement's indentation, before
/// a statement of a statement list (script, function body or block) that is
/// the first token of its line. `v` must be readable without side effects
/// and writable there: declared by the program with `var`/`let` or as a
/// parameter in an enclosing scope, not `const`, a class or a function, not
/// in its temporal dead zone, not used inside `with` (the `scope` module
/// gives the exact rules). Later lines move down by one.
///
/// `Transformed::at` is the inserted statement (new numbering); `node` is the
/// ESTree type of the statement it precedes. Skips when no such place has
/// such a variable.
#[derive(Debug, Clone, Copy, Default)]
pub struct InsertNoOp;

impl ProgramTransformation for InsertNoOp {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::InsertNoOp
    }

    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let points = usable_insert_points(
            kind,
            input.source,
            scope::Use::ReadWrite,
            "no statement start with an initialized program variable in scope",
        )?;
        let mut last = String::new();
        for point in shuffled(points, rng) {
            let var = &point.vars[rng.random_range(0..point.vars.len())];
            let code = format!("{var} = {var};");
            match insert_statement(input.source, &point, &code, "ExpressionStatement", 1) {
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
