//! Upgrades of older store schemas, run by [`super::Store::open`] inside the
//! schema transaction (so a failed upgrade leaves the store as it was, and on
//! PostgreSQL under the schema lock, so one machine upgrades).
//!
//! 1 -> 2: class keys become technique-tagged named parts. Schema 1 stored
//! a finding's class as fixed fields (`divergence`, `last_action`,
//! `ast_node`, optional `policy`, metamorphic `transformations`, debug-info
//! `signature`); the upgrade rewrites every divergent run's `record_json`
//! to the new [`ClassKey`], fills the new `class_json` column and the part
//! columns, and checks that the key's `Display` form, which `class_key`
//! holds and classes group by, is unchanged: the same runs stay in the same
//! classes. The field layout below is schema 1's, frozen: it is how those
//! three techniques wrote their classes then, not how they do now.
//!
//! 2 -> 3: debug-information records get their own verdict (`checked`) and
//! findings without debugger actions ([`v2_to_v3`]).
//!
//! 3 -> 4: the `triage` table (`store/triage.rs`), empty.

use crate::model::ClassKey;
use anyhow::Context;
use serde_json::Value;
use sqlx::{Any, Row, Transaction};

/// Runs converted per query (records can be large; a batch is in memory).
const BATCH: i64 = 64;

/// Upgrades the store from schema version `from` to [`super::SCHEMA_VERSION`].
pub(super) async fn upgrade(tx: &mut Transaction<'static, Any>, from: i64) -> anyhow::Result<()> {
    anyhow::ensure!(from >= 1, "unknown schema version {from}");
    if from < 2 {
        v1_to_v2(tx).await?;
    }
    if from < 3 {
        v2_to_v3(tx).await?;
    }
    if from < 4 {
        sqlx::query(super::triage::DDL)
            .execute(&mut **tx)
            .await
            .context("creating the triage table")?;
    }
    sqlx::query("UPDATE doppel_schema SET version = $1")
        .bind(super::SCHEMA_VERSION)
        .execute(&mut **tx)
        .await
        .context("recording the new schema version")?;
    Ok(())
}

async fn v1_to_v2(tx: &mut Transaction<'static, Any>) -> anyhow::Result<()> {
    sqlx::query("ALTER TABLE runs ADD COLUMN class_json TEXT")
        .execute(&mut **tx)
        .await
        .context("adding the class_json column")?;
    let mut after = i64::MIN;
    loop {
        let rows = sqlx::query(
            "SELECT id, technique, class_key, record_json FROM runs \
             WHERE class_key IS NOT NULL AND id > $1 ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(BATCH)
        .fetch_all(&mut **tx)
        .await?;
        if rows.is_empty() {
            return Ok(());
        }
        for r in rows {
            let id: i64 = r.try_get(0)?;
            after = id;
            let technique: String = r.try_get(1)?;
            let stored: String = r.try_get(2)?;
            let json: String = r.try_get(3)?;
            let mut record: Value =
                serde_json::from_str(&json).with_context(|| format!("run {id}: record does not parse"))?;
            let old = record
                .pointer("/verdict/class")
                .with_context(|| format!("run {id} has a class key but its record has no class"))?;
            let key = v1_class(&technique, old).with_context(|| format!("run {id}: class {old}"))?;
            anyhow::ensure!(
                key.to_string() == stored,
                "run {id}: the class would read {key} instead of {stored}"
            );
            record["verdict"]["class"] = serde_json::to_value(&key)?;
            sqlx::query(
                "UPDATE runs SET record_json = $1, class_json = $2, divergence = $3, last_action = $4, \
                 ast_node = $5, policy = $6 WHERE id = $7",
            )
            .bind(serde_json::to_string(&record)?)
            .bind(serde_json::to_string(&key)?)
            .bind(key.part("divergence").map(str::to_string))
            .bind(key.part("last_action").map(str::to_string))
            .bind(key.part("node").map(str::to_string))
            .bind(key.part("policy").map(str::to_string))
            .bind(id)
            .execute(&mut **tx)
            .await
            .with_context(|| format!("rewriting run {id}"))?;
        }
    }
}

/// 2 -> 3: debug-information records (technique `debuginfo`, the only
/// technique whose records carried no debugger actions) get their own
/// verdict and findings: `program_finished {actions}` becomes `checked
/// {checks}` (a program record counted its checks in `actions`; a session
/// record counted pauses, and its checks are its `config.verdicts`), and a
/// finding loses the `action_index: 0` and `last_action: resume` it carried.
async fn v2_to_v3(tx: &mut Transaction<'static, Any>) -> anyhow::Result<()> {
    let mut after = i64::MIN;
    loop {
        let rows = sqlx::query(
            "SELECT id, record_json FROM runs WHERE technique = 'debuginfo' \
             AND (verdict = 'program_finished' OR verdict = 'divergence') AND id > $1 ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(BATCH)
        .fetch_all(&mut **tx)
        .await?;
        if rows.is_empty() {
            return Ok(());
        }
        for r in rows {
            let id: i64 = r.try_get(0)?;
            after = id;
            let json: String = r.try_get(1)?;
            let mut record: Value =
                serde_json::from_str(&json).with_context(|| format!("run {id}: record does not parse"))?;
            let verdict = record
                .get_mut("verdict")
                .and_then(Value::as_object_mut)
                .with_context(|| format!("run {id}: no verdict"))?;
            match verdict.get("verdict").and_then(Value::as_str) {
                Some("program_finished") => {
                    let checks = match record["config"]["kind"].as_str() {
                        Some("session") => record["config"]["verdicts"].as_array().map_or(0, Vec::len),
                        _ => record["verdict"]["actions"].as_u64().unwrap_or(0) as usize,
                    };
                    record["verdict"] = serde_json::json!({"verdict": "checked", "checks": checks});
                }
                Some("divergence") => {
                    verdict.remove("action_index");
                    verdict.remove("last_action");
                }
                _ => continue,
            }
            let name = record["verdict"]["verdict"].as_str().unwrap_or_default().to_string();
            sqlx::query("UPDATE runs SET record_json = $1, verdict = $2 WHERE id = $3")
                .bind(serde_json::to_string(&record)?)
                .bind(name)
                .bind(id)
                .execute(&mut **tx)
                .await
                .with_context(|| format!("rewriting run {id}"))?;
        }
    }
}

/// A schema-1 class (`{divergence, last_action, ast_node, policy?,
/// transformations?, signature?}`) as a technique-tagged key with the parts
/// its technique uses now.
fn v1_class(technique: &str, old: &Value) -> anyhow::Result<ClassKey> {
    let field = |name: &str| -> anyhow::Result<String> {
        old[name]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("no {name}"))
    };
    let optional = |name: &str| old[name].as_str().map(str::to_string);
    let mut key = ClassKey::new(technique);
    if let Some(signature) = optional("signature") {
        // Debug-information findings: signature, what was found, how the
        // line was reached (always a resume to its breakpoint), the node.
        return Ok(key
            .with_prefixed("signature", "debuginfo", signature)
            .with("finding", field("divergence")?)
            .with("reached_by", field("last_action")?)
            .with("node", field("ast_node")?));
    }
    if let Some(chain) = optional("transformations") {
        key = key.with_prefixed("chain", "meta", chain);
    }
    key = key
        .with("divergence", field("divergence")?)
        .with("last_action", field("last_action")?)
        .with("node", field("ast_node")?);
    if let Some(policy) = optional("policy") {
        key = key.with_prefixed("policy", "policy", policy);
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_1_classes_keep_their_display_form() {
        let cases = [
            (
                "differential",
                serde_json::json!({"divergence": "pause_location", "last_action": "resume", "ast_node": "if_statement",
                    "policy": "resume_completes_interrupted_step"}),
                "pause_location|resume|if_statement|policy:resume_completes_interrupted_step",
            ),
            (
                "metamorphic",
                serde_json::json!({"divergence": "variables", "last_action": "step_over", "ast_node": "for_statement",
                    "transformations": "insert_no_op+add_breakpoint"}),
                "meta:insert_no_op+add_breakpoint|variables|step_over|for_statement",
            ),
            (
                "debuginfo",
                serde_json::json!({"divergence": "wrong_value", "last_action": "resume", "ast_node": "expression_statement",
                    "signature": "gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb"}),
                "debuginfo:gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb|wrong_value|resume|expression_statement",
            ),
        ];
        for (technique, old, shown) in cases {
            let k = v1_class(technique, &old).unwrap();
            assert_eq!(k.technique, technique);
            assert_eq!(k.to_string(), shown);
        }
        assert!(v1_class("differential", &serde_json::json!({"divergence": "x"})).is_err());
    }
}
