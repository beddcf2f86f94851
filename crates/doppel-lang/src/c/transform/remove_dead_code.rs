//! stub
use crate::transform::*;
pub struct RemoveDeadCode;
impl ProgramTransformation for RemoveDeadCode {
    fn kind(&self) -> ProgramTransformationKind { ProgramTransformationKind::RemoveDeadCode }
    fn apply(&self, _input: ProgramInput<'_>, _rng: Rng<'_>) -> Result<Transformed, Skip> { Err(Skip::new(self.kind(), "todo")) }
}
