//! awk: approved only for programs in a subset read exactly as awk reads them (RO-15).
//!
//! The program is tokenized as awk's lexer does: strings and regular expressions are
//! skipped as wholes, and a `/` starts a regular expression only where awk expects an
//! operand (after an operator, `(`, `,`, `{`, `;`, a newline or a keyword like
//! `print`); after an operand it is a division, and the text after it is read as code.
//! Reading a regular expression as code can only refuse more.
//!
//! Refused: anything that runs a program, writes or reads a file the command line does
//! not name, or reads the environment: `system`, `getline`, `close`, `fflush`, pipes
//! (`|`, `|&`), output redirections (`>`, `>>` in a `print` or `printf` statement,
//! outside parentheses), `ENVIRON`, `ARGV` and `ARGC` (a program can point awk at
//! another file), `PROCINFO`, `SYMTAB`, `FUNCTAB` and gawk's `@` directives and
//! indirect calls. Options: only `-F` and `-v`; `-f` (a program file), gawk's `-i`,
//! `-l`, `-o`, `-p`, `-d` (they load code or write files) and mawk's `-W` ask.

use crate::Reason;
use wavesh_parse::Word;

use super::Judgement;
use crate::flags::Parsed;

/// Names a program may not use.
const BANNED: &[&str] = &[
    "system", "getline", "close", "fflush", "ENVIRON", "ARGV", "ARGC", "PROCINFO", "SYMTAB",
    "FUNCTAB",
];

/// Keywords after which awk expects an operand (so a `/` starts a regular expression).
const OPERAND_AFTER: &[&str] = &["print", "printf", "return", "case", "do", "else", "in"];

/// The `awk` callback: `-v` names checked, the program (the first operand) checked, the
/// other operands left to the path policy as the files it reads.
pub(super) fn awk(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    for option in &parsed.options {
        if option.name == "-v" {
            let value = option.value.as_deref().unwrap_or("");
            let name = value.split_once('=').map_or(value, |(name, _)| name);
            if BANNED.contains(&name) {
                return Err(crate::refuse!(
                    "`awk -v {name}=…` sets what awk reads files or the environment from"
                ));
            }
        }
    }
    let Some(&program) = parsed.operands.first() else {
        return Err("`awk` without a program".into());
    };
    check_program(&args[program].value)?;
    Ok(Judgement {
        not_paths: vec![program],
        ..Judgement::default()
    })
}

/// Checks an awk program against the subset (see the module documentation).
pub fn check_program(program: &str) -> Result<(), Reason> {
    let shown = wavesh_parse::shorten(program);
    let refuse = |what: &str| Err(crate::refuse!("the awk program `{shown}` {what}"));
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Whether the previous significant token ends an operand (then `/` divides).
    let mut after_operand = false;
    let mut depth = 0i32;
    // For each open parenthesis: whether it holds the condition of `if`, `while` or
    // `for`, after whose `)` a statement starts (so a `/` there is a regular expression,
    // as awk's parser tells its lexer), where after any other `)` it divides.
    let mut opened: Vec<bool> = Vec::new();
    let mut last_name = String::new();
    // The parenthesis depth of the `print`/`printf` statement being read, if any.
    let mut print_depth: Option<i32> = None;
    while i < chars.len() {
        let c = chars[i];
        // The identifier just before `(`, if that is what came last (blanks aside).
        if !matches!(c, ' ' | '\t' | '(') {
            last_name.clear();
        }
        match c {
            ' ' | '\t' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            // A print statement may go on after a newline (after a comma): a newline
            // does not end it here, so a `>` on a later line of a pattern is refused
            // too, which only refuses more.
            '\n' => {
                after_operand = false;
                i += 1;
            }
            ';' => {
                print_depth = None;
                after_operand = false;
                i += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return refuse("has an unterminated string"),
                        Some('\\') => i += 2,
                        Some('"') => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                after_operand = true;
            }
            '/' if !after_operand => {
                i += 1;
                let mut class = false;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => {
                            return refuse("has an unterminated regular expression");
                        }
                        Some('\\') => i += 2,
                        Some('[') => {
                            class = true;
                            i += 1;
                        }
                        Some(']') => {
                            class = false;
                            i += 1;
                        }
                        Some('/') if !class => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                after_operand = true;
            }
            '|' => {
                if chars.get(i + 1) == Some(&'|') {
                    i += 2;
                    after_operand = false;
                } else {
                    return refuse("pipes to or from a program (`|`)");
                }
            }
            '>' => {
                if print_depth == Some(depth) {
                    return refuse("redirects output to a file (`>` in a print statement)");
                }
                i += if chars.get(i + 1) == Some(&'=') { 2 } else { 1 };
                after_operand = false;
            }
            '@' => return refuse("uses a gawk directive or an indirect call (`@`)"),
            '(' | '[' => {
                opened.push(
                    c == '('
                        && matches!(last_name.as_str(), "if" | "while" | "for")
                        && !after_operand,
                );
                depth += 1;
                i += 1;
                after_operand = false;
                last_name.clear();
            }
            ')' | ']' => {
                let control = opened.pop().unwrap_or(false);
                depth -= 1;
                i += 1;
                after_operand = !control;
                last_name.clear();
                continue;
            }
            '{' => {
                print_depth = None;
                i += 1;
                after_operand = false;
            }
            '}' => {
                print_depth = None;
                i += 1;
                after_operand = false;
            }
            '$' => {
                i += 1;
                after_operand = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if BANNED.contains(&name.as_str()) {
                    return refuse(&format!("uses `{name}`"));
                }
                if name == "print" || name == "printf" {
                    print_depth = Some(depth);
                }
                after_operand = !OPERAND_AFTER.contains(&name.as_str())
                    && !matches!(name.as_str(), "if" | "while" | "for");
                last_name = name;
                continue;
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                after_operand = true;
            }
            '+' | '-' if chars.get(i + 1) == Some(&c) => {
                // `x++` ends an operand; `++x` starts one: either way what follows is
                // read as code, and a `/` after `x++` divides.
                i += 2;
            }
            c if c.is_ascii() && "+-*/%^!=<~?:,&".contains(c) => {
                i += 1;
                after_operand = false;
            }
            c => {
                return refuse(&format!(
                    "has the character `{c}`, outside the subset read here"
                ));
            }
        }
    }
    if depth != 0 {
        return refuse("has unbalanced parentheses");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_program;

    #[test]
    fn ro_15_awk_programs_in_the_subset() {
        for program in [
            "{print $1}",
            "NR==2",
            "$3 > 100 {print $1}",
            "/error/ {c++} END {print c}",
            "BEGIN{FS=\",\"} {s+=$2} END{printf \"%.2f\\n\", s/NR}",
            "{print ($1 > 5)}",
            "length($0) > 80",
            "!seen[$0]++",
            "$1 ~ /a|b/ {print}",
            "{ x = 1 / 2 / 3; print x }",
            "{ n = split($0, parts, /[,|]/); print n }",
            "{ print $NF } # the last field",
            "{ printf(\"%s %d\\n\", $1, NR) }",
            "NR % 2 == 0 && $2 >= 10 || /x>y/",
            "{ if ($1 > 0) print $1 / 2 }",
            "{ if (/a|b/) print }",
            "{ x = f($1) / 2; y = (a + b) / c }",
        ] {
            assert!(
                check_program(program).is_ok(),
                "{program}: {:?}",
                check_program(program)
            );
        }
    }

    #[test]
    fn ro_15_awk_programs_outside_the_subset() {
        for program in [
            "BEGIN{system(\"id\")}",
            "{print > \"out\"}",
            "{print $1 >> \"log\"}",
            "{printf(\"%s\\n\", $1) > \"x\"}",
            "{ print a/b > \"f\" }",
            "{print | \"sh\"}",
            "BEGIN{\"id\" | getline x; print x}",
            "BEGIN{while ((getline line < \"/etc/shadow\") > 0) print line}",
            "BEGIN{print ENVIRON[\"HOME\"]}",
            "BEGIN{ARGV[1]=\"/etc/shadow\"; ARGC=2} {print}",
            "@include \"x\"",
            "BEGIN{cmd=\"id\"; cmd |& getline}",
            "BEGIN { x = 4 / 2; system(\"id\") }",
            "{ print \"unterminated }",
            "{ close(\"x\") }",
            "{ f = \"system\"; @f(\"id\") }",
            "{ print a,\n b > \"f\" }",
            "BEGIN { print 1; print 2 > \"/tmp/x\" }",
            // After `if (...)` a statement starts: `/` there is a regular expression,
            // whose quote must not be read as a string hiding `system`.
            "{ if (1) /\"/ ; system(\"id\") ; /\"/ }",
            "{ while (x) /\"/; system(\"id\"); /\"/ }",
        ] {
            assert!(check_program(program).is_err(), "{program}");
        }
    }
}
