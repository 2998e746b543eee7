//! From rable's AST to an [`Analysis`]: statements, and/or lists, pipelines and simple
//! commands are descended into; everything else is recorded as unsupported, and its inner
//! simple commands are collected as nested (PARSE-2).

use rable::{ListOperator, Node, NodeKind, PipeSep};

use crate::word::{Dialect, Dynamic, evaluate};
use crate::{Analysis, Connector, HereDoc, Redirect, SimpleCommand, Unsupported};

struct Walker<'a> {
    source: &'a str,
    dialect: Dialect,
}

pub(crate) fn walk_program(
    source: &str,
    nodes: &[Node],
    dialect: Dialect,
    analysis: &mut Analysis,
) {
    let walker = Walker { source, dialect };
    for node in nodes {
        walker.statement(node, Connector::Sequence, false, analysis);
    }
}

impl Walker<'_> {
    fn text(&self, node: &Node) -> String {
        node.source_text(self.source).to_owned()
    }

    /// A node in supported position (`nested == false`) or inside something unsupported.
    fn statement(&self, node: &Node, connector: Connector, nested: bool, out: &mut Analysis) {
        match &node.kind {
            NodeKind::Command {
                assignments,
                words,
                redirects,
            } => {
                let command =
                    self.simple_command(node, assignments, words, redirects, connector, out);
                if nested {
                    out.nested.push(command);
                } else {
                    out.commands.push(command);
                }
            }
            NodeKind::Pipeline {
                commands,
                separators,
            } => {
                for (i, command) in commands.iter().enumerate() {
                    let connector = match i.checked_sub(1).and_then(|j| separators.get(j)) {
                        None => connector,
                        Some(PipeSep::Pipe) => Connector::Pipe,
                        Some(PipeSep::PipeBoth) => Connector::PipeBoth,
                    };
                    self.statement(command, connector, nested, out);
                }
            }
            NodeKind::List { items } => {
                let mut next = connector;
                for item in items {
                    if item.operator == Some(ListOperator::Background) {
                        self.unsupported("background &", &item.command, out);
                        self.statement(&item.command, next, true, out);
                    } else {
                        self.statement(&item.command, next, nested, out);
                    }
                    next = match item.operator {
                        Some(ListOperator::And) => Connector::And,
                        Some(ListOperator::Or) => Connector::Or,
                        _ => Connector::Sequence,
                    };
                }
            }
            NodeKind::Comment { .. } | NodeKind::Empty => {}
            other => {
                let construct = construct_name(other);
                self.unsupported(construct, node, out);
                self.descend(node, out);
            }
        }
    }

    fn unsupported(&self, construct: &'static str, node: &Node, out: &mut Analysis) {
        out.unsupported.push(Unsupported {
            construct,
            text: self.text(node),
        });
    }

    /// Collects every simple command inside `node` as nested.
    fn descend(&self, node: &Node, out: &mut Analysis) {
        match &node.kind {
            NodeKind::Command { .. } | NodeKind::Pipeline { .. } | NodeKind::List { .. } => {
                self.statement(node, Connector::Sequence, true, out);
            }
            NodeKind::If {
                condition,
                then_body,
                else_body,
                redirects,
            } => {
                self.descend(condition, out);
                self.descend(then_body, out);
                if let Some(else_body) = else_body {
                    self.descend(else_body, out);
                }
                self.descend_all(redirects, out);
            }
            NodeKind::While {
                condition,
                body,
                redirects,
            }
            | NodeKind::Until {
                condition,
                body,
                redirects,
            } => {
                self.descend(condition, out);
                self.descend(body, out);
                self.descend_all(redirects, out);
            }
            NodeKind::For {
                words,
                body,
                redirects,
                ..
            }
            | NodeKind::Select {
                words,
                body,
                redirects,
                ..
            } => {
                if let Some(words) = words {
                    self.descend_all(words, out);
                }
                self.descend(body, out);
                self.descend_all(redirects, out);
            }
            NodeKind::ForArith {
                body, redirects, ..
            } => {
                self.descend(body, out);
                self.descend_all(redirects, out);
            }
            NodeKind::Case {
                word,
                patterns,
                redirects,
            } => {
                self.descend(word, out);
                for pattern in patterns {
                    self.descend_all(&pattern.patterns, out);
                    if let Some(body) = &pattern.body {
                        self.descend(body, out);
                    }
                }
                self.descend_all(redirects, out);
            }
            NodeKind::Function { body, .. } => self.descend(body, out),
            NodeKind::Subshell { body, redirects } | NodeKind::BraceGroup { body, redirects } => {
                self.descend(body, out);
                self.descend_all(redirects, out);
            }
            NodeKind::Coproc { command, .. } => self.descend(command, out),
            NodeKind::Negation { pipeline } | NodeKind::Time { pipeline, .. } => {
                self.descend(pipeline, out)
            }
            NodeKind::Word { parts, .. } => self.descend_all(parts, out),
            NodeKind::Redirect { target, .. } => self.descend(target, out),
            NodeKind::CommandSubstitution { command, .. }
            | NodeKind::ProcessSubstitution { command, .. } => {
                self.descend(command, out);
            }
            NodeKind::Array { elements } => self.descend_all(elements, out),
            NodeKind::ConditionalExpr { body, redirects } => {
                self.descend(body, out);
                self.descend_all(redirects, out);
            }
            NodeKind::ArithmeticCommand { redirects, .. } => self.descend_all(redirects, out),
            _ => {}
        }
    }

    fn descend_all(&self, nodes: &[Node], out: &mut Analysis) {
        for node in nodes {
            self.descend(node, out);
        }
    }

    fn simple_command(
        &self,
        node: &Node,
        assignments: &[Node],
        words: &[Node],
        redirects: &[Node],
        connector: Connector,
        out: &mut Analysis,
    ) -> SimpleCommand {
        // Substitutions inside the words run commands too: collect them as nested.
        self.descend_all(words, out);
        self.descend_all(assignments, out);
        self.descend_all(redirects, out);
        let mut argv: Vec<crate::Word> = words.iter().map(|word| self.word(word)).collect();
        crate::builtins::mark_evaluated(&mut argv);
        let assignments = assignments
            .iter()
            .map(|assignment| {
                let raw = self.word_text(assignment);
                let (name, value) = raw.split_once('=').unwrap_or((&raw, ""));
                let name = name.trim_end_matches('+').to_owned();
                let mut value = evaluate(value, self.dialect);
                // `~` expands after `=` and `:` in assignments; fail closed on any.
                if value.is_static() && value.raw.contains('~') {
                    value.dynamic = Some(Dynamic::TildeUser);
                }
                (name, value)
            })
            .collect();
        let redirects = redirects.iter().filter_map(|r| self.redirect(r)).collect();
        SimpleCommand {
            argv,
            assignments,
            redirects,
            connector,
            text: self.text(node),
        }
    }

    fn word_text(&self, node: &Node) -> String {
        match &node.kind {
            NodeKind::Word { value, .. } => value.clone(),
            _ => self.text(node),
        }
    }

    fn word(&self, node: &Node) -> crate::Word {
        let mut word = evaluate(&self.word_text(node), self.dialect);
        // rable's own view of the parts: any expansion node it found makes the word
        // dynamic even if the text scan missed it.
        if word.dynamic.is_none()
            && let NodeKind::Word { parts, .. } = &node.kind
            && let Some(part) = parts.iter().find(|part| !is_static_part(&part.kind))
        {
            word.dynamic = Some(part_dynamic(&part.kind));
        }
        word
    }

    fn redirect(&self, node: &Node) -> Option<Redirect> {
        match &node.kind {
            NodeKind::Redirect { op, target, fd, .. } => Some(Redirect {
                fd: (*fd >= 0).then_some(*fd),
                op: op.clone(),
                target: self.word(target),
                heredoc: None,
            }),
            NodeKind::HereDoc {
                delimiter,
                content,
                strip_tabs,
                quoted,
                fd,
                ..
            } => Some(Redirect {
                fd: (*fd >= 0).then_some(*fd),
                op: if *strip_tabs { "<<-" } else { "<<" }.to_owned(),
                target: evaluate(delimiter, Dialect::Bash),
                heredoc: Some(HereDoc {
                    body: content.clone(),
                    quoted: *quoted,
                    // An unquoted body expands `$...` and backquotes (DESIGN: fail closed).
                    dynamic: !*quoted && (content.contains('$') || content.contains('`')),
                }),
            }),
            _ => None,
        }
    }
}

fn is_static_part(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::WordLiteral { .. } | NodeKind::AnsiCQuote { .. }
    )
}

fn part_dynamic(kind: &NodeKind) -> Dynamic {
    match kind {
        NodeKind::CommandSubstitution { .. } => Dynamic::CommandSubstitution,
        NodeKind::ProcessSubstitution { .. } => Dynamic::ProcessSubstitution,
        NodeKind::ArithmeticExpansion { .. } | NodeKind::ArithDeprecated { .. } => {
            Dynamic::Arithmetic
        }
        NodeKind::BraceExpansion { .. } => Dynamic::BraceExpansion,
        NodeKind::LocaleString { .. } => Dynamic::LocaleString,
        _ => Dynamic::Parameter,
    }
}

fn construct_name(kind: &NodeKind) -> &'static str {
    match kind {
        NodeKind::If { .. } => "if statement",
        NodeKind::While { .. } => "while loop",
        NodeKind::Until { .. } => "until loop",
        NodeKind::For { .. } | NodeKind::ForArith { .. } => "for loop",
        NodeKind::Select { .. } => "select statement",
        NodeKind::Case { .. } => "case statement",
        NodeKind::Function { .. } => "function definition",
        NodeKind::Subshell { .. } => "subshell",
        NodeKind::BraceGroup { .. } => "{ } group",
        NodeKind::Coproc { .. } => "coprocess",
        NodeKind::ConditionalExpr { .. } => "[[ ]] test",
        NodeKind::ArithmeticCommand { .. } => "(( )) arithmetic command",
        NodeKind::Negation { .. } => "! negation",
        NodeKind::Time { .. } => "time keyword",
        _ => "construct",
    }
}
