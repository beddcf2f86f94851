//! The AST node type of a JavaScript source line, for DBDB's equivalence
//! classes (Lehmann & Pradel, FSE 2018, section 3.4: "the lowest AST node
//! that includes all tokens in l"), and the syntax errors of a script.
//!
//! Implementation: oxc. The source is parsed as a classic script (not a
//! module: the JavaScript debuggers run subjects as scripts) with the token
//! list enabled, and semantic analysis builds the node tree with parent
//! links. For line `l`, the tokens of `l` are the tokens that *start* on
//! `l` (comments are not tokens; a multi-line template literal or string
//! belongs to the line where it starts). The node type of `l` is the lowest
//! node whose span covers the first token's start and the last token's end.
//!
//! Node names are ESTree's, as DBDB's JavaScript parser used them: oxc's
//! `Function` is `FunctionDeclaration` or `FunctionExpression`, its member
//! expressions are `MemberExpression`, `ObjectProperty` is `Property`, the
//! four identifier kinds are `Identifier`, literals are `Literal`, a
//! function body is a `BlockStatement`, a directive is an
//! `ExpressionStatement`. oxc nodes ESTree does not have (formal parameter
//! lists, parenthesized expressions, elisions, catch parameters) are
//! skipped in favour of their parent.
//!
//! Lines without tokens (empty lines, comment-only lines, lines inside a
//! block comment or inside a template literal where no token starts) map to
//! the root, [`ROOT`] (`Program`); so does every line when the parser gave
//! up on the file.

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_ast::ast::{ClassType, FunctionType};
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::config::TokensParserConfig;
use oxc_parser::{Kind, Parser};
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};

/// The node type of lines without tokens, and of every line when parsing
/// failed (DBDB's name for the root of a JavaScript AST).
pub const ROOT: &str = "Program";

/// A parsed JavaScript source file: the node type of each line and the
/// syntax errors, computed once at [`JsSyntax::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsSyntax {
    /// Node type per line (index = line - 1).
    node_types: Vec<String>,
    /// Syntax errors, `line:column: message` (1-based line and column).
    errors: Vec<String>,
    /// Names of the functions declared at the top level of the script.
    top_level_functions: Vec<String>,
}

impl JsSyntax {
    /// Parses `source` as a classic script (sloppy mode unless the script
    /// says `"use strict"`). Never fails: syntax errors are recorded (see
    /// [`JsSyntax::errors`]); when the parser recovers, the lines keep their
    /// node types, and when it gives up, every line is [`ROOT`].
    pub fn parse(source: &str) -> Self {
        let starts = line_starts(source);
        let line_count = count_lines_with(source, &starts);
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, source, SourceType::script())
            .with_config(TokensParserConfig)
            .parse();
        let mut errors: Vec<String> = parsed
            .diagnostics
            .errors()
            .map(|d| describe(source, &starts, d))
            .collect();
        if parsed.panicked {
            if errors.is_empty() {
                errors.push("1:1: the parser gave up on this file".into());
            }
            return Self {
                node_types: vec![ROOT.to_string(); line_count as usize],
                errors,
                top_level_functions: Vec::new(),
            };
        }
        let built = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .with_build_nodes(true)
            .build(&parsed.program);
        errors.extend(built.diagnostics.errors().map(|d| describe(source, &starts, d)));
        let nodes = built.semantic.nodes();

        // The tree as child lists (node ids are indexes, parents come first).
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut parents: Vec<usize> = vec![0; nodes.len()];
        for (id, node) in nodes.iter_enumerated() {
            if matches!(node.kind(), AstKind::Program(_)) {
                continue;
            }
            let parent = nodes.parent_id(id).index();
            parents[id.index()] = parent;
            children[parent].push(id.index());
        }
        let all: Vec<&oxc_semantic::AstNode<'_>> = nodes.iter().collect();
        let span = |i: usize| {
            let s = all[i].kind().span();
            (s.start as usize, s.end as usize)
        };

        // Per line: first token start and last token end.
        let mut ranges: Vec<Option<(usize, usize)>> = vec![None; line_count as usize];
        for tok in parsed.tokens.iter().filter(|t| t.kind() != Kind::Eof) {
            let (start, end) = (tok.start() as usize, tok.end() as usize);
            let line = starts.partition_point(|&s| s <= start).saturating_sub(1);
            if let Some(r) = ranges.get_mut(line) {
                *r = Some(match *r {
                    None => (start, end),
                    Some((a, b)) => (a.min(start), b.max(end)),
                });
            }
        }

        let node_types = ranges
            .iter()
            .map(|r| {
                let Some((a, b)) = *r else {
                    return ROOT.to_string();
                };
                // Descend from the root while a child covers [a, b).
                let mut at = 0usize;
                'down: loop {
                    for &c in &children[at] {
                        let (s, e) = span(c);
                        if s <= a && b <= e {
                            at = c;
                            continue 'down;
                        }
                    }
                    break;
                }
                // Skip the oxc nodes that ESTree does not have.
                loop {
                    if let Some(name) = estree_name(all[at].kind()) {
                        return name;
                    }
                    if at == 0 {
                        return ROOT.to_string();
                    }
                    at = parents[at];
                }
            })
            .collect();

        let top_level_functions = parsed
            .program
            .body
            .iter()
            .filter_map(|s| match s {
                oxc_ast::ast::Statement::FunctionDeclaration(f) => f.id.as_ref().map(|id| id.name.to_string()),
                _ => None,
            })
            .collect();

        Self {
            node_types,
            errors,
            top_level_functions,
        }
    }

    /// Number of lines (a final line without a line terminator counts).
    /// Lines end at `\n`, `\r\n`, `\r`, U+2028 and U+2029, as JavaScript
    /// engines (and so their debuggers) count them.
    pub fn line_count(&self) -> u32 {
        self.node_types.len() as u32
    }

    /// The AST node type of 1-based `line` (ESTree name, e.g.
    /// `ForStatement`, `ExpressionStatement`, `VariableDeclaration`);
    /// [`ROOT`] for line 0, lines out of range and lines without tokens.
    pub fn node_type(&self, line: u32) -> &str {
        (line as usize)
            .checked_sub(1)
            .and_then(|i| self.node_types.get(i))
            .map(String::as_str)
            .unwrap_or(ROOT)
    }

    /// [`JsSyntax::node_type`] as an owned string (the shape of
    /// `CSyntax::ast_node_type`, which the subject preparation stores).
    pub fn ast_node_type(&self, line: u32) -> String {
        self.node_type(line).to_string()
    }

    /// Whether the parser or the semantic checker reported a syntax error.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// The syntax errors, each `line:column: message` (1-based, column in
    /// characters); empty for a valid script.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Names of the functions declared at the top level (`function run()
    /// {}`), in source order; SunSpider programs must declare `run`.
    pub fn top_level_functions(&self) -> &[String] {
        &self.top_level_functions
    }
}

/// The syntax errors of `source` as a classic script: the parser's errors
/// followed by the semantic checker's (redeclared `let`s, duplicate
/// parameters in strict code, duplicate private names, ...), each
/// `line:column: message` (1-based). Empty when the script is valid.
pub fn syntax_errors(source: &str) -> Vec<String> {
    JsSyntax::parse(source).errors
}

/// The ESTree name of an oxc node, `None` for oxc nodes ESTree does not
/// have (the caller then takes the parent).
pub(crate) fn estree_name(kind: AstKind<'_>) -> Option<String> {
    let name = match kind {
        AstKind::IdentifierName(_)
        | AstKind::IdentifierReference(_)
        | AstKind::BindingIdentifier(_)
        | AstKind::LabelIdentifier(_) => "Identifier",
        AstKind::BooleanLiteral(_)
        | AstKind::NullLiteral(_)
        | AstKind::NumericLiteral(_)
        | AstKind::StringLiteral(_)
        | AstKind::BigIntLiteral(_)
        | AstKind::RegExpLiteral(_) => "Literal",
        AstKind::ComputedMemberExpression(_)
        | AstKind::StaticMemberExpression(_)
        | AstKind::PrivateFieldExpression(_) => "MemberExpression",
        AstKind::ObjectProperty(_)
        | AstKind::BindingProperty(_)
        | AstKind::AssignmentTargetPropertyIdentifier(_)
        | AstKind::AssignmentTargetPropertyProperty(_) => "Property",
        AstKind::PrivateInExpression(_) => "BinaryExpression",
        AstKind::ArrayAssignmentTarget(_) => "ArrayPattern",
        AstKind::ObjectAssignmentTarget(_) => "ObjectPattern",
        AstKind::AssignmentTargetWithDefault(_) => "AssignmentPattern",
        AstKind::AssignmentTargetRest(_) | AstKind::BindingRestElement(_) | AstKind::FormalParameterRest(_) => {
            "RestElement"
        }
        AstKind::Directive(_) => "ExpressionStatement",
        AstKind::FunctionBody(_) => "BlockStatement",
        AstKind::Function(f) => match f.r#type {
            FunctionType::FunctionDeclaration | FunctionType::TSDeclareFunction => "FunctionDeclaration",
            FunctionType::FunctionExpression | FunctionType::TSEmptyBodyFunctionExpression => "FunctionExpression",
        },
        AstKind::Class(c) => match c.r#type {
            ClassType::ClassDeclaration => "ClassDeclaration",
            ClassType::ClassExpression => "ClassExpression",
        },
        AstKind::FormalParameters(_)
        | AstKind::FormalParameter(_)
        | AstKind::CatchParameter(_)
        | AstKind::ParenthesizedExpression(_)
        | AstKind::Elision(_)
        | AstKind::Hashbang(_) => return None,
        // The remaining kinds carry ESTree's names (`ForStatement`,
        // `CallExpression`, `MethodDefinition`, ...): `AstType`'s Debug
        // output is the variant name.
        other => return Some(format!("{:?}", other.ty())),
    };
    Some(name.to_string())
}

/// Byte offset where each line starts; lines end at JavaScript's line
/// terminators (`\n`, `\r\n`, `\r`, U+2028, U+2029). A terminator at the very
/// end does not start another line.
pub(crate) fn line_starts(source: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let bytes = source.as_bytes();
    for (i, c) in source.char_indices() {
        let next = match c {
            '\n' => i + 1,
            '\r' if bytes.get(i + 1) == Some(&b'\n') => continue,
            '\r' => i + 1,
            '\u{2028}' | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        if next < source.len() {
            starts.push(next);
        }
    }
    starts
}

fn count_lines_with(source: &str, starts: &[usize]) -> u32 {
    if source.is_empty() { 0 } else { starts.len() as u32 }
}

/// Number of lines of a JavaScript source, with JavaScript's line
/// terminators (see [`JsSyntax::line_count`]); 0 for an empty source.
pub fn count_lines(source: &str) -> u32 {
    count_lines_with(source, &line_starts(source))
}

/// `line:column: message (help) [line:column: label; ...]` for a
/// diagnostic: located at its primary label (else its first), followed by
/// what each label says (e.g. where a redeclared name was first declared).
fn describe(source: &str, starts: &[usize], d: &OxcDiagnostic) -> String {
    let at = |offset: u32| {
        let offset = (offset as usize).min(source.len());
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let column = source
            .get(starts[line - 1]..offset)
            .map_or(1, |s| s.chars().count() + 1);
        format!("{line}:{column}")
    };
    let mut msg = d.message.to_string();
    if let Some(help) = &d.help {
        msg.push_str(&format!(" ({help})"));
    }
    let labelled: Vec<String> = d
        .labels
        .iter()
        .filter_map(|l| l.label().map(|text| format!("{}: {text}", at(l.offset()))))
        .collect();
    if !labelled.is_empty() {
        msg.push_str(&format!(" [{}]", labelled.join("; ")));
    }
    match d.labels.iter().find(|l| l.primary()).or(d.labels.first()) {
        Some(label) => format!("{}: {msg}", at(label.offset())),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints `line: type | text` for every line, for assertion messages.
    fn dump(src: &str) -> (JsSyntax, String) {
        let s = JsSyntax::parse(src);
        let text: Vec<&str> = src.lines().collect();
        let d = (1..=s.line_count())
            .map(|l| format!("{l}: {} | {}", s.node_type(l), text.get(l as usize - 1).unwrap_or(&"")))
            .collect::<Vec<_>>()
            .join("\n");
        (s, d)
    }

    const PROG: &str = r#"// A comment line
var array = [1, 2, 3];
/* a block
   comment */
function sum(xs) {
  let total = 0;
  for (let i = 0; i < xs.length; i++) {
    total += xs[i]; // trailing comment
  }
  return total;
}

let a = 1; let b = 2;
console.log(
  sum(array),
  a + b
);
const square = (x) => x * x;
const twice = (f) => {
  return (x) => f(f(x));
};
class Counter {
  constructor() {
    this.n = 0;
  }
  inc(by) {
    this.n += by;
    return this;
  }
}
const msg = `first
  middle ${a} line
plain text line
last`;
if (a > 0)
  b = square(b);
"use strict";
"#;

    #[test]
    fn lines_map_to_the_lowest_node_covering_their_tokens() {
        let (s, d) = dump(PROG);
        let expect = [
            (1, ROOT), // comment line
            (2, "VariableDeclaration"),
            (3, ROOT), // block comment start
            (4, ROOT), // inside the block comment
            (5, "FunctionDeclaration"),
            (6, "VariableDeclaration"),
            (7, "ForStatement"),        // for-loop header
            (8, "ExpressionStatement"), // trailing comment excluded
            (9, "BlockStatement"),      // closing brace of the loop body
            (10, "ReturnStatement"),
            (11, "BlockStatement"),      // closing brace of the function body
            (12, ROOT),                  // empty line
            (13, "Program"),             // two statements: their parent
            (14, "CallExpression"),      // first line of a multi-line call
            (15, "CallExpression"),      // an argument line with its comma
            (16, "BinaryExpression"),    // the last argument
            (17, "ExpressionStatement"), // `);`
            (18, "VariableDeclaration"), // arrow function with an expression body
            (19, "VariableDeclaration"), // arrow function with a block body
            (20, "ReturnStatement"),
            (21, "VariableDeclaration"), // `};`
            (22, "ClassDeclaration"),
            (23, "MethodDefinition"), // constructor header
            (24, "ExpressionStatement"),
            (25, "BlockStatement"),   // the constructor's closing brace
            (26, "MethodDefinition"), // class method header
            (27, "ExpressionStatement"),
            (28, "ReturnStatement"),
            (29, "BlockStatement"),
            (30, "ClassBody"),           // the class's closing brace
            (31, "VariableDeclaration"), // a template literal starts
            (32, "TemplateLiteral"),     // a substitution inside the template
            (33, ROOT),                  // template text only: no token starts here
            (34, "VariableDeclaration"), // the template's end: only `;` starts here
            (35, "IfStatement"),
            (36, "ExpressionStatement"),
            (37, "ExpressionStatement"), // a directive-like string statement
        ];
        assert_eq!(s.line_count(), 37, "{d}");
        for (line, ty) in expect {
            assert_eq!(s.node_type(line), ty, "line {line}\n{d}");
        }
        assert!(!s.has_errors(), "{:?}", s.errors());
        assert_eq!(s.top_level_functions(), ["sum"]);
    }

    #[test]
    fn out_of_range_empty_and_unparsable_sources_are_the_root() {
        let s = JsSyntax::parse(PROG);
        assert_eq!(s.node_type(0), ROOT);
        assert_eq!(s.node_type(999), ROOT);
        assert_eq!(s.ast_node_type(7), "ForStatement");
        assert_eq!(JsSyntax::parse("").line_count(), 0);
        assert_eq!(JsSyntax::parse("x;").line_count(), 1);
        assert_eq!(JsSyntax::parse("x;\n").line_count(), 1);
        assert_eq!(JsSyntax::parse("x;\r\ny;\rz;\u{2028}w;").line_count(), 4);
        let crlf = JsSyntax::parse("var a = 1;\r\n\r\nfor (;;) {\r\n  break;\r\n}\r\n");
        assert_eq!(
            (1..=5).map(|l| crlf.node_type(l)).collect::<Vec<_>>(),
            [
                "VariableDeclaration",
                ROOT,
                "ForStatement",
                "BreakStatement",
                "BlockStatement"
            ]
        );
        // The parser gives up: every line is the root, with a reason.
        let broken = JsSyntax::parse("function f( {\n  return 1;\n}\n");
        assert!(broken.has_errors());
        assert!((1..=3).all(|l| broken.node_type(l) == ROOT));
    }

    #[test]
    fn more_statement_kinds() {
        let src = "label: while (true) {\n  switch (x) {\n    case 1:\n      break label;\n    default:\n      continue;\n  }\n}\ntry {\n  throw new Error('e');\n} catch (e) {\n  debugger;\n} finally {\n  o = { a: 1,\n    b: 2 };\n}\nfor (const k in o) f(k);\nfor (const v of [1]) {}\ndo x++; while (x < 3)\n";
        let (s, d) = dump(src);
        let got: Vec<&str> = (1..=s.line_count()).map(|l| s.node_type(l)).collect();
        assert_eq!(
            got,
            [
                "LabeledStatement",
                "SwitchStatement",
                "SwitchCase",
                "BreakStatement",
                "SwitchCase",
                "ContinueStatement",
                "SwitchStatement",
                "BlockStatement",
                "TryStatement",
                "ThrowStatement",
                "TryStatement",
                "DebuggerStatement",
                "TryStatement",
                "AssignmentExpression",
                "ExpressionStatement", // the `;` ends the statement here
                "BlockStatement",
                "ForInStatement",
                "ForOfStatement",
                "DoWhileStatement",
            ],
            "{d}"
        );
    }

    #[test]
    fn regexes_continued_strings_and_hashbangs() {
        let src = "#!/usr/bin/env node\nvar re = /a\\/b/g;\nvar s = \"one \\\n  two \\\n  three\";\nvar n = (1 +\n  2);\nvar o = {\n  [k]: 1,\n  m() {},\n};\n";
        let (s, d) = dump(src);
        let got: Vec<&str> = (1..=s.line_count()).map(|l| s.node_type(l)).collect();
        assert_eq!(
            got,
            [
                ROOT, // a hashbang is not a token
                "VariableDeclaration",
                "VariableDeclaration",
                ROOT,                  // inside a string continued with a backslash: no token starts here
                "VariableDeclaration", // the string's end: only `;` starts here
                "VariableDeclaration",
                "VariableDeclaration", // `2);`: the parentheses are not an ESTree node
                "VariableDeclaration",
                "ObjectExpression", // a property with its comma
                "ObjectExpression",
                "VariableDeclaration",
            ],
            "{d}"
        );
    }

    #[test]
    fn syntax_errors_come_from_the_parser_and_the_semantic_checker() {
        assert!(syntax_errors("var x = 1;\nfunction f(a, b) { return a + b; }\n").is_empty());
        let parse = syntax_errors("var x = ;\n");
        assert_eq!(parse.len(), 1, "{parse:?}");
        assert!(parse[0].starts_with("1:9: "), "{parse:?}");
        // The parser alone accepts these; the semantic checker does not.
        let redeclared = syntax_errors("let a;\nlet a;\n");
        assert_eq!(
            redeclared,
            ["1:5: Identifier `a` has already been declared \
              [1:5: `a` has already been declared here; 2:5: It can not be redeclared here]"]
        );
        assert!(!syntax_errors("function f(a, a) { 'use strict'; }").is_empty());
        assert!(!syntax_errors("class C { #p; #p; }").is_empty());
        // Sloppy-mode scripts: `with` and legacy octals are fine, modules are not.
        assert!(syntax_errors("with (Math) { x = PI; }\nvar o = 010;\n").is_empty());
        assert!(!syntax_errors("import x from 'y';\n").is_empty());
        assert!(!syntax_errors("'use strict';\nwith (Math) {}\n").is_empty());
    }
}
