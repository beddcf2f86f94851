//! Program reduction of a metamorphic finding (issue 17, "What must exist"
//! item 5), after its initial actions were reduced ([`crate::reduce`]):
//! the test's initial program is reduced with C-Vise (C) or treereduce 0.4
//! with tree-sitter-javascript (JavaScript) by the differential technique's
//! driver (`doppel_differential::reduce_program`: the `/*DOPPEL_B<k>*/`
//! markers that keep the breakpoint lines, the interestingness script with
//! its syntax check and the run alone, `doppel reduce-probe`), with
//! [`MetaProbe`] as the test of a variant.
//!
//! A variant is interesting iff, with the reduced initial actions relined
//! to its markers: it builds; the actions run as the initial run
//! (`doppel_differential::scripted`); the test's round is re-applied to it
//! with the same generator (the sequence's origin hash, seed and round:
//! [`crate::sequence::replay_round_with_program`], so the same
//! transformation, at a place chosen on the variant), and with
//! [`crate::MetaConfig::control_run`] the variant and its follow-up end
//! alike with no breakpoint ([`crate::control::follow_up`]); and the
//! relation breaks with the stored class key (its transformation chain,
//! divergence type, last action, node type).

use crate::program::{Builder, Program};
use crate::record::{FollowUpProgram, MetaRecord};
use crate::reduce::{RoundTest, chain_before, per_test_timeout};
use anyhow::Context;
use doppel_core::RunRecord;
use doppel_debuggers::control::ControlCache;
use doppel_differential::reduce::{same_class, text_hash};
use doppel_differential::reduce_program::{Confirmed, ProbeCase, VariantProbe, variant_actions};
use std::path::Path;

/// The metamorphic test of a program variant ([`probe`], unmarked); its
/// extra part is the follow-up program of the round re-applied to the
/// variant.
pub struct MetaProbe;

impl VariantProbe for MetaProbe {
    type Extra = FollowUpProgram;

    async fn probe(&self, case: &ProbeCase, text: &str) -> anyhow::Result<Result<Confirmed<FollowUpProgram>, String>> {
        probe(case, text, false).await
    }
}

/// The stored test `run` with `text` as its initial program, built under
/// `cache_dir`: `Ok(Err(why))` when it does not build.
///
/// Errors: the run is not a metamorphic test, I/O.
pub async fn program_of(run: &RunRecord, text: &str, cache_dir: &Path) -> anyhow::Result<Result<Program, String>> {
    let mut rec = MetaRecord::of(run)?;
    rec.input.source_text = text.to_string();
    rec.reduced = None;
    rec.reduced_follow_up = None;
    let mut run = run.clone();
    run.config = rec.to_value();
    run.subject.hash = text_hash(text);
    run.subject.line_count = text.lines().count() as u32;
    let p = doppel_differential::replay::prepared_of(&run, &rec.input, cache_dir).await?;
    Ok(match &p.error {
        Some(e) => Err(format!("does not build: {}", e.lines().next().unwrap_or(""))),
        None => Ok(Program::new(p.subject.clone(), p.source_text.clone())),
    })
}

/// Runs the case's initial actions on the program `text` (marked or not:
/// with `marked`, the breakpoint lines come from its markers), re-applies
/// the test's round and says whether the relation breaks with the case's
/// class; `Ok(Err(why))` when not.
///
/// Errors (outer): the run is not a metamorphic test, its key is
/// malformed, the debugger cannot be created, I/O.
pub async fn probe(
    case: &ProbeCase,
    text: &str,
    marked: bool,
) -> anyhow::Result<Result<Confirmed<FollowUpProgram>, String>> {
    let actions = match variant_actions(case, text, marked) {
        Ok(a) => a,
        Err(why) => return Ok(Err(why)),
    };
    let c = MetaRecord::of(&case.run)?;
    let program = match program_of(&case.run, text, &case.cache_dir).await? {
        Ok(p) => p,
        Err(why) => return Ok(Err(why)),
    };
    let origin = crate::technique::origin_of(&case.run.key).context("malformed key")?;
    let chain = chain_before(&c);
    let dcfg = crate::campaign::debugger_config(&c.input.debugger);
    let builder = Builder::new(case.cache_dir.join("meta-sources"), case.cache_dir.clone(), dcfg.limits);
    let dbg = doppel_debuggers::registry::create(&c.debugger_name, &dcfg)?;
    let mut test = RoundTest {
        c: &c,
        program: &program,
        builder: &builder,
        origin: &origin,
        seed: case.run.seed,
        chain: &chain,
        class: &case.class,
        per_test: per_test_timeout(&dcfg, actions.len()),
        dcfg,
        dbg,
        controls: c.meta.control_run.then(ControlCache::default),
    };
    let out = test.run(&actions).await;
    test.dbg.shutdown().await;
    Ok(match out {
        Some((traces, verdict, follow)) if same_class(&verdict, &case.class) => Ok(Confirmed {
            verdict,
            traces,
            extra: FollowUpProgram {
                subject: follow.subject,
                source_text: follow.text,
            },
        }),
        Some((_, verdict, _)) => Err(format!("verdict {}", crate::technique::describe(&verdict))),
        None => Err("timed out".into()),
    })
}
