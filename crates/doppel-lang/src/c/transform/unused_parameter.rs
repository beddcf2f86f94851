//! stub
use crate::transform::*;
pub struct AddUnusedParameter;
impl ProgramTransformation for AddUnusedParameter {
    fn kind(&self) -> ProgramTransformationKind { ProgramTransformationKind::AddUnusedParameter }
    fn apply(&self, _input: ProgramInput<'_>, _rng: Rng<'_>) -> Result<Transformed, Skip> { Err(Skip::new(self.kind(), "todo")) }
}
