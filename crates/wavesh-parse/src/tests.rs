use super::*;

fn bash(source: &str) -> Analysis {
    analyze(source, Dialect::Bash)
}

fn argvs(analysis: &Analysis) -> Vec<Vec<&str>> {
    analysis.commands.iter().map(SimpleCommand::args).collect()
}

#[test]
fn parse_1_lists_pipelines_and_connectors() {
    let a = bash("cd src && grep -rn 'fn main' . | head -5; ls || echo none");
    assert!(a.is_permission_safe(), "{:?}", a.unsafe_reason());
    assert_eq!(
        argvs(&a),
        vec![
            vec!["cd", "src"],
            vec!["grep", "-rn", "fn main", "."],
            vec!["head", "-5"],
            vec!["ls"],
            vec!["echo", "none"],
        ]
    );
    let connectors: Vec<Connector> = a.commands.iter().map(|c| c.connector).collect();
    assert_eq!(
        connectors,
        vec![
            Connector::Sequence,
            Connector::And,
            Connector::Pipe,
            Connector::Sequence,
            Connector::Or
        ]
    );
    assert_eq!(a.commands[1].text, "grep -rn 'fn main' .");
}

#[test]
fn parse_1_newlines_and_pipe_both() {
    let a = bash("echo a\necho b |& cat");
    assert_eq!(
        argvs(&a),
        vec![vec!["echo", "a"], vec!["echo", "b"], vec!["cat"]]
    );
    assert_eq!(a.commands[2].connector, Connector::PipeBoth);
}

#[test]
fn parse_1_assignments_and_redirects() {
    let a = bash("LANG=C TZ='UTC' sort -u names.txt 2>&1 >/dev/null < input.txt");
    let command = &a.commands[0];
    assert_eq!(command.args(), vec!["sort", "-u", "names.txt"]);
    let names: Vec<(&str, &str)> = command
        .assignments
        .iter()
        .map(|(n, w)| (n.as_str(), w.value.as_str()))
        .collect();
    assert_eq!(names, vec![("LANG", "C"), ("TZ", "UTC")]);
    assert_eq!(command.redirects.len(), 3);
    assert!(command.redirects[0].is_fd_duplication());
    assert!(command.redirects[1].is_dev_null_output());
    assert!(command.redirects[2].is_input());
    assert_eq!(command.redirects[2].target.value, "input.txt");
}

#[test]
fn parse_1_heredocs_quoted_and_not() {
    let quoted = bash("cat <<'EOF'\n$HOME `x`\nEOF");
    assert!(quoted.is_permission_safe());
    let heredoc = quoted.commands[0].redirects[0].heredoc.as_ref().unwrap();
    assert!(heredoc.quoted && !heredoc.dynamic);
    let unquoted = bash("cat <<EOF\nhello $USER\nEOF");
    assert!(!unquoted.is_permission_safe());
    assert!(unquoted.unsafe_reason().unwrap().contains("here-document"));
    assert!(bash("cat <<EOF\nplain text\nEOF").is_permission_safe());
}

#[test]
fn parse_2_unsupported_constructs_are_listed_and_their_commands_nested() {
    for (source, construct) in [
        ("(cd x && rm -rf y)", "subshell"),
        ("{ rm x; }", "{ } group"),
        ("if true; then rm x; fi", "if statement"),
        ("for f in *; do rm $f; done", "for loop"),
        ("while read l; do rm $l; done", "while loop"),
        ("case $x in a) rm y;; esac", "case statement"),
        ("f() { rm x; }", "function definition"),
        ("[[ -f x ]]", "[[ ]] test"),
        ("(( x++ ))", "(( )) arithmetic command"),
        ("sleep 5 &", "background &"),
        ("! rm x", "! negation"),
        ("time rm x", "time keyword"),
    ] {
        let a = bash(source);
        assert!(!a.is_permission_safe(), "{source}");
        assert_eq!(a.unsupported[0].construct, construct, "{source}");
        if source.contains("rm") {
            assert!(
                a.nested.iter().any(|c| c.args().first() == Some(&"rm")),
                "{source}: {:?}",
                a.nested
            );
        }
    }
}

#[test]
fn parse_2_substitutions_are_nested_commands() {
    let a = bash("echo $(rm -rf /tmp/x) `touch y` <(curl z)");
    let nested: Vec<&str> = a
        .nested
        .iter()
        .filter_map(|c| c.args().first().copied())
        .collect();
    assert_eq!(nested, vec!["rm", "touch", "curl"]);
    assert!(!a.is_permission_safe());
}

#[test]
fn parse_3_failures() {
    assert!(matches!(
        bash("echo 'open").failure,
        Some(ParseFailure::Syntax(_))
    ));
    assert!(matches!(
        bash("if then fi").failure,
        Some(ParseFailure::Syntax(_))
    ));
    let long = format!("echo {}", "x".repeat(MAX_COMMAND_CHARS));
    assert!(matches!(
        bash(&long).failure,
        Some(ParseFailure::TooLong(_))
    ));
    assert!(
        bash(&long)
            .unsafe_reason()
            .unwrap()
            .contains("characters long")
    );
}

#[test]
fn parse_4_dynamic_words_make_it_unsafe() {
    for source in [
        "echo $HOME",
        "ls \"$(pwd)\"",
        "cat `which x`",
        "diff <(ls a) <(ls b)",
        "echo {a,b}",
        "ls ~root",
        "X=$(id) ls",
        "cat < $FILE",
        "echo $((1+1))",
    ] {
        let a = bash(source);
        assert!(!a.is_permission_safe(), "{source}");
    }
    assert!(bash("ls ~/src *.rs 'a b'").is_permission_safe());
}

#[test]
fn git_commit_message_pattern_parses() {
    let source = "git commit -m \"$(cat <<'EOF'\nFix the thing\n\nLonger text.\nEOF\n)\"";
    let a = bash(source);
    assert!(a.failure.is_none(), "{:?}", a.failure);
    assert_eq!(a.commands[0].args()[..3], ["git", "commit", "-m"]);
    assert!(!a.is_permission_safe());
    assert!(a.nested.iter().any(|c| c.args().first() == Some(&"cat")));
}

#[test]
fn ro_11_odd_whitespace_outside_quotes() {
    let a = bash("ls\u{00A0}-la");
    assert!(!a.is_permission_safe());
    assert!(a.unsafe_reason().unwrap().contains("U+00A0"));
    assert!(!bash("ls\r").is_permission_safe());
    assert!(!bash("ls \u{3000}x").is_permission_safe());
    assert!(!bash("ls \u{200B}x").is_permission_safe());
    assert!(bash("echo 'a\u{00A0}b'").is_permission_safe());
    assert!(bash("echo \"a\u{3000}b\"").is_permission_safe());
}

#[test]
fn parse_6_zsh_dialect() {
    assert!(analyze("ls =ls", Dialect::Bash).is_permission_safe());
    assert!(!analyze("ls =ls", Dialect::Zsh).is_permission_safe());
    assert!(!analyze("ls *(e:'rm x':)", Dialect::Zsh).is_permission_safe());
}

#[test]
fn ro_10_second_opinion_agrees_on_plain_commands() {
    for source in [
        "ls -la",
        "git log --oneline -20 | head",
        "cd src && grep -rn 'x y' . ; echo done",
        "cat <<'EOF'\nhello\nEOF",
        "[ -f x ] && echo yes",
        "sort -u a.txt 2>/dev/null > /dev/null",
        "echo $'a\\tb' \"q\\\"x\" e\\ f",
    ] {
        let a = bash(source);
        assert!(a.is_permission_safe(), "{source}: {:?}", a.unsafe_reason());
        assert_eq!(second_opinion(source, &a), Ok(()), "{source}");
    }
}

#[test]
fn ro_10_second_opinion_reports_a_disagreement() {
    // A forged analysis claims one command where there are two.
    let mut a = bash("ls; rm -rf x");
    a.commands.truncate(1);
    let error = second_opinion("ls; rm -rf x", &a).unwrap_err();
    assert!(error.contains("sees 2 simple commands"), "{error}");
}

#[test]
fn ro_9_a_nul_byte_makes_the_word_dynamic() {
    // bash cuts `$'.env\0x'` to `.env`: a tokenizer that keeps the NUL sees another word.
    for source in [
        "cat $'.env\\0x'",
        "cat $'a\\x00b'",
        "git branch $'--del\\0' x",
        "cat a$'\\0'",
        "cat $'\\u0000'",
    ] {
        let a = bash(source);
        assert!(
            a.unsafe_reason().is_some_and(|why| why.contains("NUL")),
            "{source}: {:?}",
            a.unsafe_reason()
        );
    }
    assert!(bash("cat $'a\\tb'").is_permission_safe());
}

#[test]
fn ro_13_builtins_that_evaluate_subscripts_are_dynamic() {
    for source in [
        "printf -v 'a[$(id)]' x",
        "printf -va[0] x",
        "printf -v 'b[1]' %s x",
        "test -v 'a[$(id)]'",
        "[ -v 'a[1]' ]",
        "test -R 'r[0]'",
        "read 'c[$(id)]'",
        "read -a 'c[0]'",
        "declare 'd[$(id)]=1'",
        "typeset 'd[1]=1'",
        "local 'x[2]'",
        "export 'e[1]=1'",
        "readonly 'e[1]=1'",
        "unset 'a[$(id)]'",
        "let 'a[$(id)]'",
        "let x=1",
        "mapfile 'm[0]'",
        "readarray 'm[0]'",
        "wait -n -p 'w[0]'",
        "getopts a 'o[0]'",
    ] {
        let a = bash(source);
        assert!(
            a.unsafe_reason()
                .is_some_and(|why| why.contains("evaluates")),
            "{source}: {:?}",
            a.unsafe_reason()
        );
    }
    // Literal formats and operands stay static.
    for source in [
        "printf '[%s]\\n' x",
        "printf -v name %s x",
        "test -f 'a[1]'",
        "[ x = '[' ]",
        "echo 'a[$(id)]'",
    ] {
        assert!(bash(source).is_permission_safe(), "{source}");
    }
}

#[test]
fn parse_1_a_descriptor_before_a_redirect_parses_the_same_in_both_parsers() {
    for source in [
        "wc -l 0< file",
        "cat 0<file",
        "ls 2> /dev/null",
        "ls 1>/dev/null",
    ] {
        let a = bash(source);
        assert_eq!(second_opinion(source, &a), Ok(()), "{source}");
    }
    let a = bash("wc -l 0< file");
    assert_eq!(argvs(&a), vec![vec!["wc", "-l"]]);
    assert_eq!(a.commands[0].redirects[0].fd, Some(0));
    // A separate word `0` is an operand, for both.
    let a = bash("wc -l 0 < file");
    assert_eq!(argvs(&a), vec![vec!["wc", "-l", "0"]]);
    assert_eq!(second_opinion("wc -l 0 < file", &a), Ok(()));
}
