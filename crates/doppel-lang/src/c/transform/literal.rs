//! stub
use crate::transform::*;
pub struct LiteralToExpression;
impl ProgramTransformation for LiteralToExpression {
    fn kind(&self) -> ProgramTransformationKind { ProgramTransformationKind::LiteralToExpression }
    fn apply(&self, _input: ProgramInput<'_>, _rng: Rng<'_>) -> Result<Transformed, Skip> { Err(Skip::new(self.kind(), "todo")) }
}
