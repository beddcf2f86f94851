//! The pause state of the Firefox backend (step 6 of `mod.rs`): frames,
//! the top frame's environment chain, variables and their members.

use super::*;

impl Firefox {
    /// The frames of the paused thread, innermost first.
    pub(super) async fn frames(&mut self) -> Result<Vec<Json>, Fail> {
        let thread = self.thread()?;
        let r = self
            .request(&thread, "frames", json!({"start": 0, "count": v8::MAX_FRAMES + 16}))
            .await?;
        Ok(r["frames"].as_array().cloned().unwrap_or_default())
    }

    /// Reads the state of the paused program (see the module documentation).
    pub(super) async fn read_state(&mut self, paused: &Json, reason: PauseReason) -> Result<ProgramState, Fail> {
        let naming = self
            .naming
            .clone()
            .ok_or_else(|| Fail::Protocol("no subject loaded".into()))?;
        let mut call_stack = Vec::new();
        for f in self.frames().await? {
            let url = self.source_url(f["where"]["actor"].as_str().unwrap_or("")).await?;
            if naming.is_hidden(&url) {
                continue;
            }
            if call_stack.len() >= v8::MAX_FRAMES {
                break;
            }
            let function = match f["displayName"].as_str() {
                Some(n) if !n.is_empty() && f["type"] != "global" && n != "(global)" => n.to_string(),
                _ => "(anonymous)".to_string(),
            };
            call_stack.push(Frame {
                function,
                location: Some(Location {
                    file: naming.file(&url),
                    line: f["where"]["line"].as_u64().unwrap_or(0) as u32,
                    column: f["where"]["column"].as_u64().map(|c| c as u32 + 1),
                }),
            });
        }
        let location = call_stack
            .first()
            .and_then(|f| f.location.clone())
            .unwrap_or_else(|| Location::line("??", 0));
        let frame_actor = paused["frame"]["actor"].as_str().unwrap_or("").to_string();
        let env = self.request(&frame_actor, "getEnvironment", json!({})).await?;
        let variables = self.environment_variables(&env).await?;
        Ok(ProgramState {
            location,
            reason,
            call_stack,
            variables,
            signal: None,
            return_value: None,
        })
    }

    /// The variables of an environment chain (see the module documentation).
    pub(super) async fn environment_variables(&mut self, env: &Json) -> Result<Vec<Variable>, Fail> {
        let depth = self.cfg.value_depth;
        let mut out = Vec::new();
        let mut env = env.clone();
        loop {
            let (kind, last) = match (env["type"].as_str(), env["scopeKind"].as_str()) {
                (Some("block"), Some("global")) => break,
                (Some("block"), Some("function lexical")) => (VariableKind::Unknown, false),
                (Some("block"), _) => (VariableKind::Local, false),
                (Some("function"), _) => (VariableKind::Unknown, true),
                // A `with` block: its object's properties are not variables
                // (V8's `with` scope is not read either); the function's
                // variables are further out.
                (Some("with"), _) => {
                    env = env["parent"].clone();
                    continue;
                }
                _ => break,
            };
            let mut bindings: Vec<(String, Json)> = Vec::new();
            for a in env["bindings"]["arguments"].as_array().cloned().unwrap_or_default() {
                if let Some(m) = a.as_object() {
                    for (k, v) in m {
                        bindings.push((k.clone(), v.clone()));
                    }
                }
            }
            if let Some(m) = env["bindings"]["variables"].as_object() {
                for (k, v) in m {
                    if !(last && k == "arguments") {
                        bindings.push((k.clone(), v.clone()));
                    }
                }
            }
            for (name, desc) in bindings {
                let Some(grip) = desc.get("value") else {
                    continue; // an accessor: reading it would run program code
                };
                if grip["uninitialized"] == true || grip["type"] == "uninitialized" {
                    continue; // in its temporal dead zone: Chromium omits it
                }
                let mut v = self.variable(name, grip, depth).await?;
                v.kind = kind;
                out.push(v);
            }
            if last {
                break;
            }
            env = env["parent"].clone();
        }
        Ok(out)
    }

    /// A variable for `grip`, expanded `depth` more levels.
    pub(super) async fn variable(&mut self, name: String, grip: &Json, depth: u32) -> Result<Variable, Fail> {
        let (mut text, type_name) = grip_text(grip);
        if grip["class"] == "Function"
            && grip["isClassConstructor"] != true
            && let Some(head) = self.function_head(grip)
        {
            text = head;
        }
        let children = match grip["actor"].as_str() {
            Some(actor) if depth > 0 && expandable(grip) => {
                let actor = actor.to_string();
                Box::pin(self.members(&actor, grip["class"] == "Array", depth - 1)).await?
            }
            _ => Vec::new(),
        };
        Ok(Variable {
            name,
            type_name,
            value: Value { text, children },
            kind: VariableKind::Local,
        })
    }

    /// V8's header of the function `grip`, from the text of its file
    /// (read once per run; the scripts are local files). The grip's URL is
    /// tried first, then the page's other scripts: Firefox sometimes names
    /// the wrong script ([`checked_function_head`]). `None` when no script
    /// has the function's parameters at the grip's line and column.
    pub(super) fn function_head(&mut self, grip: &Json) -> Option<String> {
        let url = grip["location"]["url"].as_str()?;
        let line = grip["location"]["line"].as_u64()? as usize;
        let column = grip["location"]["column"].as_u64()? as usize;
        let params: Vec<Option<&str>> = grip["parameterNames"]
            .as_array()
            .map(|a| a.iter().map(Json::as_str).collect())
            .unwrap_or_default();
        let run = self.run.as_mut()?;
        let mut urls = vec![url.to_string()];
        let mut others: Vec<String> = run.sources.values().filter(|u| *u != url).cloned().collect();
        others.sort();
        others.dedup();
        urls.extend(others);
        for u in urls {
            if !run.texts.contains_key(&u) {
                let text = v8::url_path(&u).and_then(|p| std::fs::read_to_string(p).ok());
                run.texts.insert(u.clone(), text);
            }
            let Some(Some(text)) = run.texts.get(&u) else { continue };
            let lines: Vec<&str> = text.lines().collect();
            if let Some(head) = checked_function_head(&lines, line, column, grip["isAsync"] == true, &params) {
                return Some(head);
            }
        }
        None
    }

    /// The own data properties of object `actor` as variables, each expanded
    /// `depth` more levels; array indices in numeric order first.
    pub(super) async fn members(&mut self, actor: &str, array: bool, depth: u32) -> Result<Vec<Variable>, Fail> {
        let r = self.request(actor, "prototypeAndProperties", json!({})).await?;
        let mut props: Vec<(String, Json)> = r["ownProperties"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        if array {
            let index = |k: &str| k.parse::<u64>().ok();
            props.sort_by_key(|(k, _)| (index(k).is_none(), index(k).unwrap_or(0)));
        }
        let mut out = Vec::new();
        for (name, desc) in props {
            if out.len() >= v8::MAX_CHILDREN {
                break;
            }
            if name == "__proto__" {
                continue;
            }
            let Some(grip) = desc.get("value") else {
                continue; // an accessor
            };
            out.push(self.variable(name, grip, depth).await?);
        }
        Ok(out)
    }
}
