//! The second opinion (RO-10): tree-sitter-bash, an independent grammar, parses the same
//! text; the caller approves only if both see the same simple commands with the same argv.

use tree_sitter::{Node, Parser};

use crate::word::{Dialect, evaluate};
use crate::{Analysis, SimpleCommand};

/// Node kinds that are simple commands for tree-sitter-bash.
const COMMAND_KINDS: &[&str] = &[
    "command",
    "test_command",
    "declaration_command",
    "unset_command",
];

/// Kinds whose children are walked for commands in supported positions.
const STRUCTURE_KINDS: &[&str] = &["program", "list", "pipeline", "redirected_statement"];

/// How many second opinions this process gave (see `parse_counts`).
pub(crate) static SECOND_OPINIONS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Checks that tree-sitter-bash sees exactly the simple commands of `analysis`, with the
/// same argv after quote removal. `Err` says how they differ.
pub fn second_opinion(source: &str, analysis: &Analysis) -> Result<(), String> {
    SECOND_OPINIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|error| format!("tree-sitter-bash cannot load: {error}"))?;
    let tree = parser
        .parse(source, None)
        .ok_or_else(|| "tree-sitter-bash gave no tree".to_owned())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("tree-sitter-bash finds a syntax error".to_owned());
    }
    let mut found = Vec::new();
    collect(root, source, &mut found)?;
    if found.len() != analysis.commands.len() {
        return Err(format!(
            "tree-sitter-bash sees {} simple commands, rable {}",
            found.len(),
            analysis.commands.len()
        ));
    }
    for (theirs, ours) in found.iter().zip(&analysis.commands) {
        compare(theirs, ours, source, analysis.dialect)?;
    }
    Ok(())
}

fn collect<'t>(node: Node<'t>, source: &str, found: &mut Vec<Node<'t>>) -> Result<(), String> {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = child.kind();
        if COMMAND_KINDS.contains(&kind) {
            found.push(child);
        } else if STRUCTURE_KINDS.contains(&kind) {
            collect(child, source, found)?;
        } else if matches!(
            kind,
            "comment"
                | "heredoc_body"
                | "file_redirect"
                | "heredoc_redirect"
                | "herestring_redirect"
        ) {
            // Redirects and here-doc bodies belong to the command before them.
        } else {
            return Err(format!(
                "tree-sitter-bash sees a {kind} at `{}`",
                crate::shorten(text(child, source))
            ));
        }
    }
    Ok(())
}

fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or("")
}

fn compare(
    theirs: &Node<'_>,
    ours: &SimpleCommand,
    source: &str,
    dialect: Dialect,
) -> Result<(), String> {
    let differ = |detail: String| {
        Err(format!(
            "the parsers disagree on `{}`: {detail}",
            crate::shorten(&ours.text)
        ))
    };
    if theirs.kind() != "command" {
        // `[ ... ]`, `declare ...`, `unset ...`: tree-sitter has its own node; both must
        // at least cover the same text and start with the same word.
        let their_text = text(*theirs, source).trim();
        let first = ours.argv.first().map(|w| w.raw.as_str()).unwrap_or("");
        if !their_text.starts_with(first)
            || !ours
                .text
                .trim()
                .starts_with(their_text.split_whitespace().next().unwrap_or(""))
        {
            return differ(format!(
                "tree-sitter-bash reads `{}`",
                crate::shorten(their_text)
            ));
        }
        return Ok(());
    }
    let mut argv = Vec::new();
    let mut cursor = theirs.walk();
    for child in theirs.named_children(&mut cursor) {
        match child.kind() {
            "command_name" => argv.push(evaluate(text(child, source), dialect).value),
            "variable_assignment"
            | "file_redirect"
            | "heredoc_redirect"
            | "herestring_redirect"
            | "comment" => {}
            _ if is_descriptor_word(child, source, ours) => {}
            _ => argv.push(evaluate(text(child, source), dialect).value),
        }
    }
    let ours_argv: Vec<String> = ours.argv.iter().map(|w| w.value.clone()).collect();
    if argv != ours_argv {
        return differ(format!("argv {argv:?} against {ours_argv:?}"));
    }
    Ok(())
}

/// tree-sitter-bash reads the `0` of `wc -l 0< file` as a word and the redirect as the
/// statement's; bash (and rable) read a descriptor number written right before `<` or
/// `>`. The word is skipped only when rable saw a redirect of exactly that descriptor,
/// so the two readings still have to agree (PARSE-1, RO-10).
fn is_descriptor_word(node: Node<'_>, source: &str, ours: &SimpleCommand) -> bool {
    let word = text(node, source);
    let follows = source[node.end_byte()..].chars().next();
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_digit())
        && matches!(follows, Some('<' | '>'))
        && word
            .parse::<i32>()
            .is_ok_and(|fd| ours.redirects.iter().any(|r| r.fd == Some(fd)))
}
