//! Definite assignment of C locals: which automatic variables may still hold
//! their indeterminate initial value ("stack garbage") before a statement.
//!
//! Used by interactive metamorphic testing (Tolksdorf, Lehmann & Pradel,
//! ISSTA 2019, section 3.2: the output relation; section 5.2: false
//! positives). A debugger that pauses before a local's first assignment
//! shows whatever the stack held there, and that depends on the code the
//! compiler laid out before: a transformed program legitimately shows other
//! garbage (c-testsuite 00143.c: `count` is 0 before `count = 39;` in the
//! initial program and 32767 after a no-op was inserted). The relation does
//! not compare such variables, and the no-op transformation (`v = v;`) only
//! uses variables definitely assigned where it inserts (reading an
//! indeterminate automatic variable whose address is never taken is
//! undefined behaviour, C11 6.3.2.1p2).
//!
//! The analysis follows the rules of definite assignment of the Java
//! Language Specification (chapter 16), over a tree-sitter-c parse, per
//! function definition:
//! - a local declared with an initializer, or `static`, is assigned by its
//!   declaration (a static local is never indeterminate and is not
//!   tracked); one declared without is unassigned there (C11 6.2.4p6: its
//!   value becomes indeterminate each time the declaration is reached);
//! - `v = e` assigns `v` after `e`, except `v = v` (the value stays
//!   indeterminate); compound assignments and `++`/`--` do not assign (the
//!   new value is computed from the indeterminate one, so it is garbage too);
//!   an assignment to a member or an element (`s.f = 1`, `a[i] = 1`) does
//!   not assign the whole object: arrays, structs and unions declared
//!   without initializer are assigned only by a whole-object assignment, by
//!   taking their address, or (arrays) by passing them to a call;
//! - `&v` anywhere (also `&v.f`, `&a[i]`) counts as an assignment of `v`
//!   (whatever receives the address may fill it), and so does an array
//!   passed as an argument of a call (`memset(a, ...)`, `strcpy(buf, ...)`);
//! - `sizeof`, `_Alignof` and `_Generic` operands are not evaluated;
//! - blocks are sequential; after `if`/`else`, what both branches assign
//!   (an `if` without `else`: what the condition assigns); after `a && b`
//!   and `a || b`, what `a` assigns; after `c ? x : y`, what both arms
//!   assign; after a loop, what is assigned when the condition is false
//!   (nothing unreachable for `while (1)`, `for (;;)`) and at every `break`
//!   that leaves it; the body of a loop sees the state before the loop (the
//!   JLS rule: a back edge can only add assignments);
//! - `switch`: every `case` is entered with the state after the controlling
//!   expression, met with the fall-through of the case before; after the
//!   switch, the fall-through of the last case, every `break`, and (without
//!   `default`) the controlling expression's state;
//! - after `return`, `break`, `continue` nothing is reachable, which assigns
//!   everything vacuously (JLS 16: "V is definitely assigned after any
//!   statement that cannot complete normally").
//!
//! A function containing `goto`, a label, a `case` label that is not
//! directly in a switch body (Duff's device), or a syntax error is not
//! analysed by flow: there, a local is definitely assigned exactly after its
//! declaration ends when the declaration initializes it (the conservative
//! answer). Parameters are always assigned and never reported.
//!
//! Conservative in the direction the relation needs: when in doubt a local
//! is reported as maybe unassigned (comparisons are dropped, no false
//! warning). Not seen: assignments through pointers (`p = &v` counts, `*p =
//! 1` is the assignment), macros (not expanded), `longjmp`.

use super::transform::scope;
use crate::edit::{LineIndex, Pos};
use crate::transform::ScopeIndexing;
use std::collections::{BTreeSet, HashMap};
use tree_sitter::{Node, Parser};

/// The definite-assignment facts of every function definition of a C file.
#[derive(Debug, Clone, Default)]
pub struct DefiniteAssignment {
    functions: Vec<Function>,
}

/// A set of tracked locals, or unreachable code (everything assigned
/// vacuously).
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Unreachable,
    Assigned(Vec<bool>),
}

impl State {
    fn meet(self, other: State) -> State {
        match (self, other) {
            (State::Unreachable, s) | (s, State::Unreachable) => s,
            (State::Assigned(a), State::Assigned(b)) => {
                State::Assigned(a.iter().zip(&b).map(|(x, y)| *x && *y).collect())
            }
        }
    }

    fn set(&mut self, v: usize, value: bool) {
        if let State::Assigned(a) = self
            && let Some(x) = a.get_mut(v)
        {
            *x = value;
        }
    }

    fn has(&self, v: usize) -> bool {
        match self {
            State::Unreachable => true,
            State::Assigned(a) => a.get(v).copied().unwrap_or(false),
        }
    }
}

#[derive(Debug, Clone)]
struct Local {
    name: String,
    /// Where the local is visible (its block, or its `for` statement),
    /// before its declaration included (a debugger shows a block's locals
    /// anywhere in the block).
    scope: (Pos, Pos),
    /// The end of its declarator (where an initializer has assigned it).
    declared: Pos,
    initialized: bool,
    array: bool,
}

#[derive(Debug, Clone)]
struct Stmt {
    start: Pos,
    end: Pos,
    depth: u32,
    before: State,
    /// For blocks: the starts of the statements in it, and the state at its
    /// closing brace.
    block: Option<(Vec<Pos>, State)>,
}

#[derive(Debug, Clone)]
struct Function {
    name: String,
    body: (Pos, Pos),
    locals: Vec<Local>,
    /// In document order (pre-order).
    stmts: Vec<Stmt>,
}

impl DefiniteAssignment {
    /// Analyses every function definition of `source` (C). Never fails: a
    /// function tree-sitter-c cannot parse cleanly gets the conservative
    /// answer (see the module docs), and text that is no C at all has no
    /// functions.
    pub fn analyze(source: &str) -> Self {
        let mut parser = Parser::new();
        if parser.set_language(&tree_sitter_c::LANGUAGE.into()).is_err() {
            return Self::default();
        }
        let Some(tree) = parser.parse(source, None) else {
            return Self::default();
        };
        let lines = LineIndex::new(source);
        let root = tree.root_node();
        let functions = super::transform::descendants(root)
            .into_iter()
            .filter(|n| n.kind() == "function_definition")
            .filter_map(|f| analyze_function(source, &lines, root, f))
            .collect();
        Self { functions }
    }

    /// The analysis of one function definition `f` of the tree `root` of
    /// `source` (the one `analyze` would make for it): for callers that hold
    /// the tree and need one function, as a transformation that draws one
    /// insertion point. Queries name the function as for `analyze`.
    pub(crate) fn analyze_one(source: &str, lines: &LineIndex, root: Node<'_>, f: Node<'_>) -> Self {
        Self {
            functions: analyze_function(source, lines, root, f).into_iter().collect(),
        }
    }

    /// Names of the locals of `function` that may be unassigned (hold an
    /// indeterminate value) when a debugger pauses at `line` (1-based) and
    /// `column` (1-based, characters; `None` when the debugger reports lines
    /// only), sorted, each once. Only locals whose block contains the pause
    /// are named (those a debugger shows there); parameters and static
    /// locals never.
    ///
    /// The pause stands for the state before a statement: the innermost
    /// statement starting at (`line`, `column`); without a column, the
    /// first statement starting on `line`; else the innermost statement
    /// around the position (for a block: the next statement in it, or its
    /// closing brace); before the body, the function's entry.
    ///
    /// `function` is the name a debugger shows (`main`; anything from a `(`
    /// on is ignored). Empty when the file has no such function.
    pub fn maybe_unassigned(&self, function: &str, line: u32, column: Option<u32>) -> Vec<String> {
        let name = function.split('(').next().unwrap_or("").trim();
        let mut candidates = self.functions.iter().filter(|f| f.name == name);
        let first = candidates.next();
        let Some(f) = candidates
            .find(|f| f.body.0.line <= line && line <= f.body.1.line)
            .or(first)
        else {
            return Vec::new();
        };
        let (state, at) = f.state_at(line, column);
        let names: BTreeSet<&str> = f
            .locals
            .iter()
            .enumerate()
            .filter(|(i, l)| !state.has(*i) && l.scope.0 <= at && at < l.scope.1)
            .map(|(_, l)| l.name.as_str())
            .collect();
        names.into_iter().map(String::from).collect()
    }

    /// Whether the local `name` of `function` is definitely assigned before
    /// the statement that starts at `at` (as [`Self::maybe_unassigned`] with
    /// that line and column).
    pub fn definitely_assigned(&self, function: &str, at: Pos, name: &str) -> bool {
        !self
            .maybe_unassigned(function, at.line, Some(at.column))
            .iter()
            .any(|n| n == name)
    }
}

impl Function {
    /// The state a pause at (`line`, `column`) stands for, and the position
    /// at which locals' scopes are tested.
    fn state_at(&self, line: u32, column: Option<u32>) -> (State, Pos) {
        let p = Pos::new(line, column.unwrap_or(1));
        let entry = || {
            let s = self.stmts.first().map_or(State::Unreachable, |s| s.before.clone());
            (s, self.body.0)
        };
        let starting = match column {
            Some(_) => self.stmts.iter().filter(|s| s.start == p).max_by_key(|s| s.depth),
            None => self.stmts.iter().find(|s| s.start.line == line),
        };
        if let Some(s) = starting {
            return (s.before.clone(), s.start);
        }
        let around = self
            .stmts
            .iter()
            .filter(|s| match column {
                Some(_) => s.start <= p && p < s.end,
                None => s.start.line <= line && line <= s.end.line,
            })
            .max_by_key(|s| s.depth);
        let Some(s) = around else {
            if p < self.body.0 {
                return entry();
            }
            // After the body (its closing brace is its end).
            return self
                .stmts
                .first()
                .and_then(|b| b.block.as_ref().map(|(_, end)| (end.clone(), before_end(b.end))))
                .unwrap_or_else(entry);
        };
        match &s.block {
            Some((children, end)) => {
                let next = children.iter().find(|c| match column {
                    Some(_) => **c > p,
                    None => c.line > line,
                });
                match next.and_then(|c| self.stmts.iter().find(|t| t.start == *c && t.depth == s.depth + 1)) {
                    Some(t) => (t.before.clone(), t.start),
                    None => (end.clone(), before_end(s.end)),
                }
            }
            None => (s.before.clone(), s.start),
        }
    }
}

/// The position of a block's closing brace, given the block's end.
fn before_end(end: Pos) -> Pos {
    Pos::new(end.line, end.column.saturating_sub(1).max(1))
}

/// Whether a node of this kind is a statement whose start a pause may
/// stand for.
fn is_statement(kind: &str) -> bool {
    super::statements::STATEMENTS.contains(&kind)
        || matches!(
            kind,
            "compound_statement" | "case_statement" | "labeled_statement" | "attributed_statement"
        )
}

fn analyze_function(src: &str, lines: &LineIndex, root: Node<'_>, f: Node<'_>) -> Option<Function> {
    let body = f.child_by_field_name("body")?;
    let name = f
        .child_by_field_name("declarator")
        .and_then(scope::declarator_name)
        .map(|n| super::transform::text(n, src).to_string())?;
    let mut a = Analyzer {
        src,
        lines,
        locals: Vec::new(),
        by_declarator: HashMap::new(),
        stmts: Vec::new(),
        targets: Vec::new(),
        returns: State::Unreachable,
    };
    a.collect_locals(root, body);
    let regular = !body.has_error() && !irregular(body);
    let n = a.locals.len();
    if regular {
        a.stmt(body, State::Assigned(vec![false; n]), 0);
        // The closing brace of the body is also reached from every `return`.
        let returns = a.returns.clone();
        if let Some(first) = a.stmts.first_mut()
            && let Some((_, end)) = &mut first.block
        {
            *end = end.clone().meet(returns);
        }
    } else {
        a.structure(body, 0);
        let at = |p: Pos| State::Assigned(a.locals.iter().map(|l| l.initialized && l.declared <= p).collect());
        let fallback: Vec<Stmt> = a
            .stmts
            .iter()
            .map(|s| Stmt {
                before: at(s.start),
                block: s.block.as_ref().map(|(c, _)| (c.clone(), at(s.end))),
                ..s.clone()
            })
            .collect();
        a.stmts = fallback;
    }
    Some(Function {
        name,
        body: (a.pos(body.start_byte()), a.pos(body.end_byte())),
        locals: a.locals,
        stmts: a.stmts,
    })
}

/// `goto`, a label, or a `case` label not directly in a switch's body:
/// control flow the structured rules do not follow.
fn irregular(body: Node<'_>) -> bool {
    super::transform::descendants(body).into_iter().any(|n| match n.kind() {
        "goto_statement" | "labeled_statement" => true,
        "case_statement" => n
            .parent()
            .filter(|p| p.kind() == "compound_statement")
            .and_then(|p| p.parent())
            .is_none_or(|s| s.kind() != "switch_statement"),
        _ => false,
    })
}

/// A break or continue target.
struct Target {
    is_loop: bool,
    breaks: State,
    continues: State,
}

struct Analyzer<'s> {
    src: &'s str,
    lines: &'s LineIndex,
    locals: Vec<Local>,
    /// Declarator node id to local.
    by_declarator: HashMap<usize, usize>,
    stmts: Vec<Stmt>,
    targets: Vec<Target>,
    returns: State,
}

impl Analyzer<'_> {
    fn pos(&self, byte: usize) -> Pos {
        self.lines.pos(self.src, byte)
    }

    /// Every automatic local declared in `body` (not `extern`, not
    /// `static`, not a function declaration).
    fn collect_locals(&mut self, root: Node<'_>, body: Node<'_>) {
        for d in super::transform::descendants(body) {
            if d.kind() != "declaration" {
                continue;
            }
            let mut cursor = d.walk();
            let storage: Vec<&str> = d
                .children(&mut cursor)
                .filter(|c| c.kind() == "storage_class_specifier")
                .map(|c| super::transform::text(c, self.src))
                .collect();
            if storage.iter().any(|s| *s == "extern" || *s == "static") {
                continue;
            }
            let Some(scope_node) = d.parent().map(|p| match p.kind() {
                "for_statement" => p,
                _ => super::transform::ancestors(d)
                    .find(|a| a.kind() == "compound_statement")
                    .unwrap_or(p),
            }) else {
                continue;
            };
            let scope = (self.pos(scope_node.start_byte()), self.pos(scope_node.end_byte()));
            let mut cursor = d.walk();
            let declarators: Vec<Node> = d.children_by_field_name("declarator", &mut cursor).collect();
            for decl in declarators {
                let initialized = decl.kind() == "init_declarator";
                let class = scope::ScopeIndex::new(self.src, root, ScopeIndexing::PerStatement).class_of(d, decl);
                if class == scope::TypeClass::Function {
                    continue;
                }
                let Some(name) = scope::declarator_name(decl) else {
                    continue;
                };
                self.by_declarator.insert(decl.id(), self.locals.len());
                self.locals.push(Local {
                    name: super::transform::text(name, self.src).to_string(),
                    scope,
                    declared: self.pos(decl.end_byte()),
                    initialized,
                    array: class == scope::TypeClass::Array,
                });
            }
        }
    }

    /// The local an identifier at `n` names (innermost visible declaration).
    fn local_of(&self, n: Node<'_>) -> Option<usize> {
        let n = strip(n);
        if n.kind() != "identifier" {
            return None;
        }
        let name = super::transform::text(n, self.src);
        let at = self.pos(n.start_byte());
        self.locals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.name == name && l.scope.0 <= at && at < l.scope.1 && l.declared <= at)
            .max_by_key(|(_, l)| (l.scope.0, l.declared))
            .map(|(i, _)| i)
    }

    fn record(&mut self, n: Node<'_>, depth: u32, before: &State) -> usize {
        self.stmts.push(Stmt {
            start: self.pos(n.start_byte()),
            end: self.pos(n.end_byte()),
            depth,
            before: before.clone(),
            block: None,
        });
        self.stmts.len() - 1
    }

    /// Records the statements of `n` without flow (the fallback): every
    /// state is replaced afterwards.
    fn structure(&mut self, n: Node<'_>, depth: u32) {
        let is_stmt = is_statement(n.kind());
        let d = if is_stmt {
            let i = self.record(n, depth, &State::Unreachable);
            if n.kind() == "compound_statement" {
                let children = self.block_children(n);
                self.stmts[i].block = Some((children, State::Unreachable));
            }
            depth + 1
        } else {
            depth
        };
        let mut cursor = n.walk();
        let children: Vec<Node> = n.named_children(&mut cursor).collect();
        for c in children {
            self.structure(c, d);
        }
    }

    fn block_children(&self, block: Node<'_>) -> Vec<Pos> {
        let mut cursor = block.walk();
        block
            .named_children(&mut cursor)
            .filter(|c| is_statement(c.kind()))
            .map(|c| self.pos(c.start_byte()))
            .collect()
    }

    /// The state after `n` completes normally, given the state before it.
    fn stmt(&mut self, n: Node<'_>, s: State, depth: u32) -> State {
        if !is_statement(n.kind()) {
            // An expression where a statement may stand, or something
            // without effect (a type definition, a comment).
            return self.expr(n, s);
        }
        let i = self.record(n, depth, &s);
        let d = depth + 1;
        match n.kind() {
            "compound_statement" => {
                let children = self.block_children(n);
                let mut cur = s;
                let mut cursor = n.walk();
                let items: Vec<Node> = n.named_children(&mut cursor).collect();
                for c in items {
                    cur = self.stmt(c, cur, d);
                }
                self.stmts[i].block = Some((children, cur.clone()));
                cur
            }
            "declaration" => self.declaration(n, s),
            "expression_statement" | "attributed_statement" => self.children(n, s, d),
            "if_statement" => {
                let c = self.field_expr(n, "condition", s);
                let t = match n.child_by_field_name("consequence") {
                    Some(b) => self.stmt(b, c.clone(), d),
                    None => c.clone(),
                };
                let e = match n.child_by_field_name("alternative").and_then(|e| e.named_child(0)) {
                    Some(b) => self.stmt(b, c, d),
                    None => c,
                };
                t.meet(e)
            }
            "while_statement" => {
                let c = self.field_expr(n, "condition", s);
                let (_, breaks, _) = self.looped(n, c.clone(), d);
                self.exit(n, c).meet(breaks)
            }
            "do_statement" => {
                let (b, breaks, continues) = self.looped(n, s, d);
                let c = self.field_expr(n, "condition", b.meet(continues));
                self.exit(n, c).meet(breaks)
            }
            "for_statement" => {
                let init = match n.child_by_field_name("initializer") {
                    Some(x) if x.kind() == "declaration" => self.declaration(x, s),
                    Some(x) => self.expr(x, s),
                    None => s,
                };
                let c = self.field_expr(n, "condition", init);
                let (b, breaks, continues) = self.looped(n, c.clone(), d);
                if let Some(u) = n.child_by_field_name("update") {
                    self.expr(u, b.meet(continues));
                }
                let exit = if n.child_by_field_name("condition").is_none() {
                    State::Unreachable
                } else {
                    self.exit(n, c)
                };
                exit.meet(breaks)
            }
            "switch_statement" => {
                let c = self.field_expr(n, "condition", s);
                let Some(body) = n.child_by_field_name("body") else {
                    return c;
                };
                let bi = self.record(body, d, &c);
                let children = self.block_children(body);
                self.targets.push(Target {
                    is_loop: false,
                    breaks: State::Unreachable,
                    continues: State::Unreachable,
                });
                let mut fall = State::Unreachable;
                let mut has_default = false;
                let mut cursor = body.walk();
                let items: Vec<Node> = body.named_children(&mut cursor).collect();
                for item in items {
                    if item.kind() == "case_statement" {
                        has_default |= item.child_by_field_name("value").is_none();
                        let entry = c.clone().meet(fall);
                        self.record(item, d + 1, &entry);
                        let value = item.child_by_field_name("value").map(|v| v.id());
                        let mut cur = entry;
                        let mut cursor = item.walk();
                        let stmts: Vec<Node> = item.named_children(&mut cursor).collect();
                        for x in stmts.into_iter().filter(|x| Some(x.id()) != value) {
                            cur = self.stmt(x, cur, d + 2);
                        }
                        fall = cur;
                    } else {
                        // Before the first label: never reached from the switch.
                        fall = self.stmt(item, fall, d + 1);
                    }
                }
                let t = self.targets.pop().map_or(State::Unreachable, |t| t.breaks);
                let mut after = fall.meet(t);
                if !has_default {
                    after = after.meet(c);
                }
                self.stmts[bi].block = Some((children, after.clone()));
                after
            }
            "break_statement" => {
                if let Some(t) = self.targets.last_mut() {
                    t.breaks = std::mem::replace(&mut t.breaks, State::Unreachable).meet(s);
                }
                State::Unreachable
            }
            "continue_statement" => {
                if let Some(t) = self.targets.iter_mut().rev().find(|t| t.is_loop) {
                    t.continues = std::mem::replace(&mut t.continues, State::Unreachable).meet(s);
                }
                State::Unreachable
            }
            "return_statement" => {
                let r = self.children(n, s, d);
                self.returns = std::mem::replace(&mut self.returns, State::Unreachable).meet(r);
                State::Unreachable
            }
            // `goto`, labels and stray `case`s make the function irregular
            // (never analysed by flow); anything else changes nothing.
            _ => self.children(n, s, d),
        }
    }

    /// The body of loop `n` from state `s`: (normal completion, breaks, continues).
    fn looped(&mut self, n: Node<'_>, s: State, depth: u32) -> (State, State, State) {
        self.targets.push(Target {
            is_loop: true,
            breaks: State::Unreachable,
            continues: State::Unreachable,
        });
        let b = match n.child_by_field_name("body") {
            Some(body) => self.stmt(body, s, depth),
            None => s,
        };
        let t = self.targets.pop().expect("pushed above");
        (b, t.breaks, t.continues)
    }

    /// The named children of `n` in order: statements as statements,
    /// anything else as expressions.
    fn children(&mut self, n: Node<'_>, s: State, depth: u32) -> State {
        let mut cursor = n.walk();
        let items: Vec<Node> = n.named_children(&mut cursor).collect();
        items.into_iter().fold(s, |cur, c| {
            if is_statement(c.kind()) {
                self.stmt(c, cur, depth)
            } else {
                self.expr(c, cur)
            }
        })
    }

    fn field_expr(&mut self, n: Node<'_>, field: &str, s: State) -> State {
        match n.child_by_field_name(field) {
            Some(x) => self.expr(x, s),
            None => s,
        }
    }

    fn declaration(&mut self, d: Node<'_>, s: State) -> State {
        let mut cursor = d.walk();
        let declarators: Vec<Node> = d.children_by_field_name("declarator", &mut cursor).collect();
        let mut cur = s;
        for decl in declarators {
            if let Some(value) = decl.child_by_field_name("value") {
                cur = self.expr(value, cur);
            }
            if let Some(&v) = self.by_declarator.get(&decl.id()) {
                cur.set(v, decl.kind() == "init_declarator");
            }
        }
        cur
    }

    /// The state after evaluating expression `n` from `s`.
    fn expr(&mut self, n: Node<'_>, s: State) -> State {
        match n.kind() {
            "assignment_expression" => {
                let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
                    return s;
                };
                let simple = n
                    .child_by_field_name("operator")
                    .is_some_and(|o| super::transform::text(o, self.src) == "=");
                let mut after = self.expr(right, s);
                match self.local_of(left) {
                    Some(v) if simple && self.local_of(right) != Some(v) => after.set(v, true),
                    Some(_) => {}
                    None => after = self.expr(left, after),
                }
                after
            }
            "pointer_expression" => {
                let Some(arg) = n.child_by_field_name("argument") else {
                    return s;
                };
                let mut after = self.expr(arg, s);
                let address = n
                    .child_by_field_name("operator")
                    .is_some_and(|o| super::transform::text(o, self.src) == "&");
                if address && let Some(v) = self.object_of(arg) {
                    after.set(v, true);
                }
                after
            }
            "call_expression" => {
                let mut after = self.field_expr(n, "function", s);
                if let Some(args) = n.child_by_field_name("arguments") {
                    let mut cursor = args.walk();
                    let items: Vec<Node> = args.named_children(&mut cursor).collect();
                    for a in items {
                        after = self.expr(a, after);
                        if let Some(v) = self.array_of(a) {
                            after.set(v, true);
                        }
                    }
                }
                after
            }
            "binary_expression" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| super::transform::text(o, self.src))
                    .unwrap_or("");
                let left = self.field_expr(n, "left", s);
                let right = self.field_expr(n, "right", left.clone());
                if op == "&&" || op == "||" { left } else { right }
            }
            "conditional_expression" => {
                let c = self.field_expr(n, "condition", s);
                let t = self.field_expr(n, "consequence", c.clone());
                let e = self.field_expr(n, "alternative", c);
                t.meet(e)
            }
            "sizeof_expression" | "alignof_expression" | "offsetof_expression" | "generic_expression" => s,
            // A GNU statement expression.
            "compound_statement" => self.stmt(n, s, 1000),
            _ => {
                let mut cursor = n.walk();
                let items: Vec<Node> = n.named_children(&mut cursor).collect();
                items.into_iter().fold(s, |cur, c| self.expr(c, cur))
            }
        }
    }

    /// The state when loop `n`'s condition is false: unreachable for a
    /// nonzero integer literal (`while (1)`), else the state after the
    /// condition.
    fn exit(&self, n: Node<'_>, after_condition: State) -> State {
        let constant_true = n.child_by_field_name("condition").map(strip).is_some_and(|c| {
            c.kind() == "number_literal"
                && super::transform::text(c, self.src)
                    .trim_end_matches(['u', 'U', 'l', 'L'])
                    .chars()
                    .any(|d| d.is_ascii_digit() && d != '0')
        });
        if constant_true {
            State::Unreachable
        } else {
            after_condition
        }
    }

    /// The local whose storage `&n` exposes: `v`, `v.f`, `v[i]` for an
    /// array `v`, through parentheses.
    fn object_of(&self, n: Node<'_>) -> Option<usize> {
        let n = strip(n);
        match n.kind() {
            "identifier" => self.local_of(n),
            "field_expression"
                if n.child_by_field_name("operator")
                    .is_some_and(|o| super::transform::text(o, self.src) == ".") =>
            {
                self.object_of(n.child_by_field_name("argument")?)
            }
            "subscript_expression" => self
                .object_of(n.child_by_field_name("argument")?)
                .filter(|&v| self.locals[v].array),
            _ => None,
        }
    }

    /// The array local a call argument passes (decayed to a pointer):
    /// `a`, `(a)`, `(char *)a`, `a + k`.
    fn array_of(&self, n: Node<'_>) -> Option<usize> {
        let n = strip(n);
        match n.kind() {
            "identifier" => self.local_of(n).filter(|&v| self.locals[v].array),
            "cast_expression" => self.array_of(n.child_by_field_name("value")?),
            "binary_expression" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| super::transform::text(o, self.src))?;
                if op != "+" && op != "-" {
                    return None;
                }
                self.array_of(n.child_by_field_name("left")?)
                    .or_else(|| self.array_of(n.child_by_field_name("right")?))
            }
            _ => None,
        }
    }
}

/// `n` without enclosing parentheses.
fn strip(mut n: Node<'_>) -> Node<'_> {
    while n.kind() == "parenthesized_expression" && n.named_child_count() == 1 {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Locals maybe unassigned before the statement at the first line
    /// containing `marker` (no column, as GDB reports).
    fn at(src: &str, function: &str, marker: &str) -> Vec<String> {
        let line = src
            .lines()
            .position(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no line with {marker}")) as u32
            + 1;
        DefiniteAssignment::analyze(src).maybe_unassigned(function, line, None)
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn straight_line_code_assigns_in_order_and_a_declaration_assigns_after_itself() {
        let src = "int main(void) {\n    int a;\n    int b = 1;\n    a = b;\n    return a + b;\n}\n";
        assert_eq!(at(src, "main", "int a;"), names(&["a", "b"]));
        assert_eq!(at(src, "main", "int b = 1;"), names(&["a", "b"]));
        assert_eq!(at(src, "main", "a = b;"), names(&["a"]));
        assert_eq!(at(src, "main", "return"), names(&[]));
        // The closing brace, and the function's first line.
        let da = DefiniteAssignment::analyze(src);
        assert_eq!(da.maybe_unassigned("main", 6, None), names(&[]));
        assert_eq!(da.maybe_unassigned("main", 1, None), names(&["a", "b"]));
        // Another function, or none of that name.
        assert_eq!(da.maybe_unassigned("other", 4, None), names(&[]));
    }

    #[test]
    fn both_branches_of_an_if_must_assign() {
        let src = "int f(int c) {\n    int x, y;\n    if (c) {\n        x = 1;\n        y = 1;\n    } else\n        x = 2;\n    return x + y;\n}\n";
        assert_eq!(at(src, "f", "return"), names(&["y"]));
        assert_eq!(at(src, "f", "y = 1;"), names(&["y"]));
        assert_eq!(at(src, "f", "x = 2;"), names(&["x", "y"]));
        let one = "int f(int c) {\n    int x;\n    if (c)\n        x = 1;\n    return x;\n}\n";
        assert_eq!(at(one, "f", "return"), names(&["x"]));
        // A branch that cannot complete normally assigns vacuously.
        let ret =
            "int f(int c) {\n    int x;\n    if (c)\n        return 0;\n    else\n        x = 1;\n    return x;\n}\n";
        assert_eq!(at(ret, "f", "return x"), names(&[]));
    }

    #[test]
    fn loops_assign_only_what_every_exit_assigns() {
        let src = "int f(int n) {\n    int s, t;\n    while (n) {\n        s = n;\n        n--;\n    }\n    for (;;) {\n        t = 1;\n        break;\n    }\n    return s + t;\n}\n";
        assert_eq!(at(src, "f", "return"), names(&["s"]));
        assert_eq!(at(src, "f", "n--;"), names(&["t"]));
        let init = "int f(void) {\n    int i, t;\n    for (i = 0; i < 3; i++)\n        t = i;\n    return i + t;\n}\n";
        assert_eq!(at(init, "f", "t = i;"), names(&["t"]));
        assert_eq!(at(init, "f", "return"), names(&["t"]));
        assert_eq!(at(init, "f", "for ("), names(&["i", "t"]));
        // A declaration in the for header: unassigned at the for line.
        let decl =
            "int f(void) {\n    int t = 0;\n    for (int i = 0; i < 3; i++)\n        t += i;\n    return t;\n}\n";
        assert_eq!(at(decl, "f", "for ("), names(&["i"]));
        assert_eq!(at(decl, "f", "t += i"), names(&[]));
        assert_eq!(at(decl, "f", "return"), names(&[]));
        // do-while: the body runs once.
        let dw = "int f(int n) {\n    int x;\n    do {\n        x = n;\n    } while (--n > 0);\n    return x;\n}\n";
        assert_eq!(at(dw, "f", "return"), names(&[]));
        assert_eq!(at(dw, "f", "} while"), names(&[]), "the condition follows the body");
    }

    #[test]
    fn address_taken_and_arrays_passed_to_calls_count_as_assignments() {
        let src = "void init(int *p);\nint main(void) {\n    int v, w;\n    char buf[8];\n    char other[8];\n    init(&v);\n    strcpy(buf, \"x\");\n    other[0] = 1;\n    w++;\n    return v + w + buf[0] + other[0];\n}\n";
        assert_eq!(at(src, "main", "strcpy"), names(&["buf", "other", "w"]));
        assert_eq!(at(src, "main", "return"), names(&["other", "w"]));
    }

    #[test]
    fn self_assignment_and_compound_assignment_keep_garbage() {
        let src = "int main(void) {\n    int x, s;\n    x = x;\n    s += 1;\n    return x + s;\n}\n";
        assert_eq!(at(src, "main", "return"), names(&["s", "x"]));
    }

    #[test]
    fn structs_and_arrays_need_a_whole_object_assignment() {
        let src = "struct p { int a, b; };\nint main(void) {\n    struct p s, t;\n    struct p u = {1, 2};\n    int a[2];\n    s.a = 1;\n    t = u;\n    a[0] = 1;\n    return s.a + t.a + a[0];\n}\n";
        assert_eq!(at(src, "main", "return"), names(&["a", "s"]));
    }

    #[test]
    fn switch_cases_and_short_circuits() {
        let src = "int f(int k) {\n    int x, y;\n    switch (k) {\n    case 1:\n        x = 1;\n        break;\n    default:\n        x = 2;\n    }\n    if (k && (y = 1))\n        k = 2;\n    return x + y;\n}\n";
        assert_eq!(at(src, "f", "return"), names(&["y"]));
        assert_eq!(at(src, "f", "x = 2;"), names(&["x", "y"]));
        let no_default =
            "int f(int k) {\n    int x;\n    switch (k) {\n    case 1:\n        x = 1;\n    }\n    return x;\n}\n";
        assert_eq!(at(no_default, "f", "return"), names(&["x"]));
        let cond = "int f(int k) {\n    int x;\n    k ? (x = 1) : (x = 2);\n    return x;\n}\n";
        assert_eq!(at(cond, "f", "return"), names(&[]));
    }

    #[test]
    fn goto_labels_and_duffs_device_fall_back_to_initializers() {
        // c-testsuite 00143.c, reduced.
        let duff = "int main()\n{\n    int count = 0, n;\n    short *from, *to;\n    short a[39], b[39];\n    from = a;\n    to = b;\n    count = 39;\n    n = (count + 7) / 8;\n    switch (count % 8) {\n    case 0: do { *to++ = *from++;\n    case 1:      *to++ = *from++;\n            } while (--n > 0);\n    }\n    return 0;\n}\n";
        assert_eq!(at(duff, "main", "count = 39;"), names(&["a", "b", "from", "n", "to"]));
        assert_eq!(at(duff, "main", "return"), names(&["a", "b", "from", "n", "to"]));
        assert_eq!(
            at(duff, "main", "int count"),
            names(&["a", "b", "count", "from", "n", "to"])
        );
        // c-testsuite 00199.c: `goto` in joe.
        let joe = "void joe()\n{\n   int b = 5678;\n   {\n      int c = 1234;\n      goto outer;\n   }\nouter:\n   b = 1;\n}\n";
        assert_eq!(at(joe, "joe", "int b"), names(&["b"]));
        assert_eq!(at(joe, "joe", "goto"), names(&[]));
        assert_eq!(at(joe, "joe", "b = 1;"), names(&[]), "c is out of scope");
    }

    #[test]
    fn columns_select_the_statement_and_blocks_their_next_statement() {
        let src = "int main(void) {\n    int x; x = 1; int y;\n    {\n        int z;\n    }\n    return x;\n}\n";
        let da = DefiniteAssignment::analyze(src);
        assert_eq!(da.maybe_unassigned("main", 2, Some(5)), names(&["x", "y"]));
        assert_eq!(da.maybe_unassigned("main", 2, Some(12)), names(&["x", "y"]));
        assert_eq!(da.maybe_unassigned("main", 2, Some(19)), names(&["y"]));
        // Mid-statement: the statement around it.
        assert_eq!(da.maybe_unassigned("main", 2, Some(14)), names(&["x", "y"]));
        // Between statements: the next one.
        assert_eq!(da.maybe_unassigned("main", 2, Some(18)), names(&["y"]));
        // In the inner block z is visible; outside it is not.
        assert_eq!(da.maybe_unassigned("main", 4, Some(9)), names(&["y", "z"]));
        assert_eq!(da.maybe_unassigned("main", 5, Some(5)), names(&["y", "z"]));
        assert_eq!(da.maybe_unassigned("main", 6, Some(5)), names(&["y"]));
        assert_eq!(da.maybe_unassigned("main", 7, Some(1)), names(&["y"]));
        assert!(da.definitely_assigned("main", Pos::new(6, 5), "x"));
        assert!(!da.definitely_assigned("main", Pos::new(2, 12), "x"));
    }

    #[test]
    fn the_innermost_declaration_of_a_name_is_the_one_assigned() {
        let src =
            "int main(void) {\n    int x = 1;\n    {\n        int x;\n        x = 2;\n        return x;\n    }\n}\n";
        assert_eq!(at(src, "main", "x = 2;"), names(&["x"]));
        assert_eq!(at(src, "main", "return"), names(&[]));
        let outer =
            "int main(void) {\n    int x;\n    {\n        int x = 0;\n        x = 2;\n    }\n    return x;\n}\n";
        assert_eq!(at(outer, "main", "return"), names(&["x"]));
    }

    #[test]
    fn not_c_gives_no_functions() {
        let da = DefiniteAssignment::analyze("this is not C {{{");
        assert!(da.maybe_unassigned("main", 1, None).is_empty());
        let broken = "int main(void) {\n    int x;\n    x = = 1;\n    return x;\n}\n";
        // A syntax error: the conservative answer (x is never initialized).
        assert_eq!(at(broken, "main", "return"), names(&["x"]));
    }
}
