//! Text tools that read their inputs and write only to stdout.

use crate::Reason;
use wavesh_parse::Word;

use super::{Entry, Judgement};
use crate::flags::Parsed;

const GREP: &str = "-E -F -G -P -e$ -f$ -i -y -v -w -x -c -L -l -m# -o -q -s -b -H -h -n -T -Z -z -a -I -r -R -U -A# -B# -C# -d$ -D$ --color=? --colour=? \
    --extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp=$ --file=$ --ignore-case --no-ignore-case --invert-match --word-regexp \
    --line-regexp --count --files-without-match --files-with-matches --max-count=# --only-matching --quiet --silent --no-messages --byte-offset \
    --with-filename --no-filename --label=$ --line-number --initial-tab --null --null-data --text --binary-files=$ --recursive \
    --dereference-recursive --include=$ --exclude=$ --exclude-from=$ --exclude-dir=$ --after-context=# --before-context=# --context=# \
    --directories=$ --devices=$ --line-buffered --binary --help --version @files @num @writes";

/// `uniq IN OUT` writes its second operand: at most one (glob operands are counted
/// after expansion by the classifier).
fn at_most_one_operand(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    if let Some(second) = parsed.operands.get(1) {
        return Err(crate::refuse!(
            "`{}` would be written as the output file",
            args[*second].raw
        ));
    }
    Ok(Judgement::default())
}

/// `date` with an operand not starting with `+` sets the clock (RO-4); `-d` and `-f`
/// values are dates and a file of dates, judged by the table and the path policy.
fn date(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    let mut judgement = Judgement::default();
    for &index in &parsed.operands {
        let word = &args[index];
        if !word.value.starts_with('+') {
            return Err(crate::refuse!("`{}` would set the date", word.raw));
        }
        judgement.not_paths.push(index);
    }
    if parsed.operands.len() > 1 {
        return Err("`date` with two formats sets the date on some systems".into());
    }
    for option in &parsed.options {
        if matches!(option.name.as_str(), "-d" | "--date")
            && let Some(index) = option.value_index
        {
            judgement.not_paths.push(index);
        }
    }
    Ok(judgement)
}

/// `sed`: every script is scanned, wherever it is given: `-e` attached inside a
/// cluster (`-ne'p'`, `-nEe...`), `--expression=`, a file given with `-f`, or the first
/// operand (RO-4).
fn sed(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    let mut judgement = Judgement::default();
    let mut explicit = false;
    for option in &parsed.options {
        match option.name.as_str() {
            "-e" | "--expression" => {
                explicit = true;
                let script = option.value.as_deref().unwrap_or("");
                judgement.paths.extend(sed_script(script)?);
                if let Some(index) = option.value_index {
                    judgement.not_paths.push(index);
                } else {
                    judgement.not_paths.push(option.index);
                }
            }
            "-f" | "--file" => {
                explicit = true;
                let file = option.value.clone().unwrap_or_default();
                judgement.script_files.push(file);
            }
            _ => {}
        }
    }
    if !explicit && let Some(&first) = parsed.operands.first() {
        judgement.paths.extend(sed_script(&args[first].value)?);
        judgement.not_paths.push(first);
    }
    Ok(judgement)
}

/// Scans a sed script with GNU sed's grammar and approves only the subset it reads
/// exactly (RO-15); `Ok` holds the files the script reads, for the path policy (none,
/// since `r` and `R` ask). Writing (`w`, `W`, `s///w`), executing (`e`, `s///e`), labels,
/// branches, text and file commands refuse, inside `{}` blocks too.
pub fn sed_script(script: &str) -> Result<Vec<String>, Reason> {
    let chars: Vec<char> = script.chars().collect();
    let reads = Vec::new();
    let mut i = 0;
    let shown = wavesh_parse::shorten(script);
    let err = |what: String| Err(crate::refuse!("the sed script `{shown}` {what}"));
    let skip_blank = |i: &mut usize| {
        while *i < chars.len() && matches!(chars[*i], ' ' | '\t') {
            *i += 1;
        }
    };
    // The rest of the line: a file name or text argument.
    let to_end_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i].iter().collect()
    };
    while i < chars.len() {
        // Separators between commands.
        if matches!(chars[i], ' ' | '\t' | '\n' | ';' | '}') {
            i += 1;
            continue;
        }
        if chars[i] == '#' {
            to_end_of_line(&mut i);
            continue;
        }
        // Up to two addresses, then `!`.
        for n in 0..2 {
            skip_blank(&mut i);
            match chars.get(i) {
                Some('0'..='9') => {
                    while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '~') {
                        i += 1;
                    }
                }
                Some('$') => i += 1,
                Some('+' | '~') if n == 1 => {
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                Some('/') => {
                    i = skip_delimited(&chars, i + 1, '/');
                    while matches!(chars.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                Some('\\') => {
                    let delimiter = chars.get(i + 1).copied().unwrap_or('/');
                    i = skip_delimited(&chars, i + 2, delimiter);
                    while matches!(chars.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ if n == 1 => break,
                _ => break,
            }
            skip_blank(&mut i);
            if n == 0 && chars.get(i) == Some(&',') {
                i += 1;
                continue;
            }
            break;
        }
        skip_blank(&mut i);
        while chars.get(i) == Some(&'!') {
            i += 1;
            skip_blank(&mut i);
        }
        let Some(&command) = chars.get(i) else {
            break;
        };
        i += 1;
        match command {
            '{' | '}' | ';' => {}
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' => {}
            'l' | 'L' | 'q' | 'Q' => {
                skip_blank(&mut i);
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            // RO-15: what GNU sed reads differently from a plain reading is not
            // approved. A label or branch target ends at whitespace in GNU sed, so
            // `:a w out` is a label then a write; text commands, file reads and `F`/`v`
            // have one-liner forms of their own. These ask.
            ':' | 'b' | 't' | 'T' | 'v' => {
                return err(format!(
                    "has a label or branch (`{command}`), which GNU sed reads differently \
                     from how it looks"
                ));
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'F' => {
                return err(format!(
                    "has a text or file command (`{command}`) that is not approved without \
                     asking"
                ));
            }
            'w' | 'W' => return err(format!("writes a file (`{command}`)")),
            'e' => return err("executes a command (`e`)".into()),
            's' | 'y' => {
                let Some(&delimiter) = chars.get(i) else {
                    return err(format!("has an unfinished `{command}` command"));
                };
                if delimiter == '\n' || delimiter == '\\' {
                    return err(format!(
                        "has a `{command}` delimiter this check does not read"
                    ));
                }
                i = skip_delimited(&chars, i + 1, delimiter);
                i = skip_delimited(&chars, i, delimiter);
                if command == 's' {
                    while let Some(&flag) = chars.get(i) {
                        match flag {
                            'w' | 'W' => return err("writes a file (s///w)".into()),
                            'e' => return err("executes a command (s///e)".into()),
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            _ => break,
                        }
                    }
                }
            }
            other => {
                return err(format!(
                    "has a command (`{other}`) this check does not know"
                ));
            }
        }
    }
    Ok(reads)
}

/// Index after the next unescaped `delimiter` from `start`.
fn skip_delimited(chars: &[char], start: usize, delimiter: char) -> usize {
    let mut i = start;
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == delimiter {
            return i + 1;
        }
        i += 1;
    }
    i
}

/// jq builtins and variables that read the environment, files or modules, or write to
/// stderr (RO-4).
const JQ_FORBIDDEN: &[&str] = &[
    "env",
    "$ENV",
    "input_filename",
    "$__loc__",
    "include",
    "import",
    "modulemeta",
    "get_search_list",
    "debug",
    "stderr",
];

/// jq options without a value (short letters may be clustered).
const JQ_FLAGS: &[&str] = &[
    "--raw-output",
    "--raw-output0",
    "--compact-output",
    "--null-input",
    "--exit-status",
    "--slurp",
    "--join-output",
    "--ascii-output",
    "--sort-keys",
    "--color-output",
    "--monochrome-output",
    "--raw-input",
    "--tab",
    "--seq",
    "--stream",
    "--stream-errors",
    "--unbuffered",
    "--help",
    "--version",
];

/// bash's `printf -v NAME` (or `-vNAME`) assigns NAME instead of printing (RO-15): a
/// later `cd`, `~` or command lookup in the same command line reads it, so it is judged
/// as the assignment `NAME=…` is, by name. Options end at `--` or the first other word.
fn printf(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let (name, word) = if word.value == "-v" {
            i += 1;
            let Some(next) = args.get(i) else {
                break;
            };
            (next.value.as_str(), next)
        } else if let Some(attached) = word.value.strip_prefix("-v") {
            (attached, word)
        } else {
            break;
        };
        if !word.is_static() || !crate::env::is_inert_name(name) {
            return Err(crate::refuse!(
                "`printf -v {name}` assigns `{name}`, which may change what the commands after it run or read"
            ));
        }
        i += 1;
    }
    Ok(Judgement::default())
}

/// `jq`: options with their arity (`--arg NAME VALUE`), the filter wherever it is
/// (`--args` and `--jsonargs` end the files, not the filter), and the filter's
/// identifiers with whitespace and comments after `$` removed (RO-4).
fn jq(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    let mut judgement = Judgement {
        only_listed_paths: true,
        ..Judgement::default()
    };
    let mut filter_seen = false;
    let mut rest_are_args = false;
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let value = args[i].value.as_str();
        let index = i;
        i += 1;
        if options_done || !value.starts_with('-') || value == "-" {
            if !filter_seen {
                filter_seen = true;
                judgement.not_paths.push(index);
                jq_filter(value)?;
            } else if !rest_are_args {
                judgement.path_words.push(index);
            }
            continue;
        }
        match value {
            "--" => options_done = true,
            "--arg" | "--argjson" => {
                if i + 1 >= args.len() {
                    return Err(crate::refuse!("`jq {value}` needs a name and a value"));
                }
                i += 2;
            }
            "--rawfile" | "--slurpfile" => {
                return Err(crate::refuse!(
                    "`jq {value}` reads a file this check does not judge"
                ));
            }
            "--indent" => {
                if !args
                    .get(i)
                    .is_some_and(|w| w.value.chars().all(|c| c.is_ascii_digit()))
                {
                    return Err("`jq --indent` needs a number".into());
                }
                i += 1;
            }
            "--args" | "--jsonargs" => rest_are_args = true,
            "-f" | "--from-file" => {
                return Err(crate::refuse!(
                    "`jq {value}` reads a program this check cannot see"
                ));
            }
            _ if value.starts_with("-L") || value.starts_with("--library-path") => {
                return Err("`jq -L` loads modules from a directory".into());
            }
            _ if value.starts_with("--") => {
                if !JQ_FLAGS.contains(&value) {
                    return Err(crate::refuse!("`{value}` is not a known safe jq option"));
                }
            }
            _ => {
                if let Some(bad) = value[1..].chars().find(|c| !"rcnesjaSCMRh".contains(*c)) {
                    return Err(crate::refuse!(
                        "`-{bad}` (in `{value}`) is not a known safe jq option"
                    ));
                }
            }
        }
    }
    Ok(judgement)
}

/// Refuses a jq filter that uses a [`JQ_FORBIDDEN`] name. Strings are scanned too:
/// `"\(env)"` interpolates code.
pub fn jq_filter(filter: &str) -> Result<(), Reason> {
    let chars: Vec<char> = filter.chars().collect();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' || ident(c) && (i == 0 || !ident(chars[i - 1])) {
            let dollar = c == '$';
            let mut j = if dollar { i + 1 } else { i };
            if dollar {
                // `$ ENV` and `$ # comment\n ENV` are `$ENV` to jq's lexer.
                loop {
                    while j < chars.len() && chars[j].is_whitespace() {
                        j += 1;
                    }
                    if chars.get(j) == Some(&'#') {
                        while j < chars.len() && chars[j] != '\n' {
                            j += 1;
                        }
                        continue;
                    }
                    break;
                }
            }
            let start = j;
            while j < chars.len()
                && (ident(chars[j]) || chars[j] == ':' && chars.get(j + 1) == Some(&':'))
            {
                j += if chars[j] == ':' { 2 } else { 1 };
            }
            let name: String = chars[start..j].iter().collect();
            let field = !dollar && i > 0 && chars[i - 1] == '.';
            let full = if dollar { format!("${name}") } else { name };
            if !field && JQ_FORBIDDEN.contains(&full.as_str()) {
                return Err(crate::refuse!("the jq filter uses `{full}`"));
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    Ok(())
}

/// `xargs` runs its command with names read from standard input appended: the command
/// is judged like any other, and the classifier also refuses one with an option that
/// a read name (`-f.env`) could turn on (RO-4).
fn xargs(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    let mut judgement = Judgement {
        only_listed_paths: true,
        runs_get_input_names: true,
        ..Judgement::default()
    };
    for option in &parsed.options {
        if matches!(option.name.as_str(), "-a" | "--arg-file") {
            if let Some(index) = option.value_index {
                judgement.path_words.push(index);
            } else if let Some(value) = &option.value {
                judgement.paths.push(value.clone());
            }
        }
        if matches!(option.name.as_str(), "-I" | "-i" | "--replace") {
            // Names replace the string instead of being appended; they are still names.
        }
    }
    let start = parsed.operands.first().copied().unwrap_or(args.len());
    if start < args.len() {
        judgement.runs.push(start..args.len());
    }
    Ok(judgement)
}

const SORT: &str = "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k$ -t$ -S$ --ignore-leading-blanks --dictionary-order --ignore-case \
    --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort \
    --sort=$ --check=? --merge --stable --unique --zero-terminated --key=$ --field-separator=$ --buffer-size=$ \
    --parallel=# --debug --help --version @files @writes";

pub(super) const COMMANDS: &[Entry] = &[
    ("grep", Some(GREP), None),
    ("egrep", Some(GREP), None),
    ("fgrep", Some(GREP), None),
    ("sort", Some(SORT), None),
    (
        "uniq",
        Some(
            "-c -d -D -f# -i -s# -u -w# -z --count --repeated --all-repeated=? --skip-fields=# --ignore-case --skip-chars=# --unique --zero-terminated --check-chars=# --group=? @files @writes",
        ),
        Some(at_most_one_operand),
    ),
    (
        "cut",
        Some(
            "-b$ -c$ -d$ -f$ -n -s -z --bytes=$ --characters=$ --delimiter=$ --fields=$ --complement --only-delimited --output-delimiter=$ --zero-terminated @files",
        ),
        None,
    ),
    (
        "tr",
        Some("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 @files"),
        None,
    ),
    (
        "column",
        Some(
            "-c# -t -s$ -o$ -x -n -e -J -N$ -R$ -l# -L -W$ -H$ -r$ -E$ -d --table --separator=$ --output-separator=$ --columns=# @files",
        ),
        None,
    ),
    (
        "comm",
        Some(
            "-1 -2 -3 -z --check-order --nocheck-order --output-delimiter=$ --total --zero-terminated @files",
        ),
        None,
    ),
    (
        "diff",
        Some(
            "-q -s -c -C# -u -U# -e -n -y -W# -l -t -T -r -N -x$ -X$ -S$ -i -E -Z -b -w -B -I$ -a -d -p -F$ \
        --brief --report-identical-files --context=? --unified=? --ed --normal --side-by-side --width=# --left-column --suppress-common-lines \
        --show-c-function --show-function-line=$ --label=$ --expand-tabs --initial-tab --tabsize=# --suppress-blank-empty --recursive \
        --no-dereference --new-file --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case --exclude=$ --exclude-from=$ \
        --starting-file=$ --from-file=$ --to-file=$ --ignore-case --ignore-tab-expansion --ignore-trailing-space --ignore-space-change \
        --ignore-all-space --ignore-blank-lines --ignore-matching-lines=$ --text --strip-trailing-cr --minimal --horizon-lines=# \
        --speed-large-files --color=? --palette=$ --help --version @files @writes",
        ),
        None,
    ),
    (
        "cmp",
        Some(
            "-b -i$ -l -n# -s --print-bytes --ignore-initial=$ --verbose --bytes=# --quiet --silent @files",
        ),
        None,
    ),
    (
        "paste",
        Some("-d$ -s -z --delimiters=$ --serial --zero-terminated @files"),
        None,
    ),
    (
        "join",
        Some(
            "-a# -e$ -i -j# -o$ -t$ -v# -1# -2# --check-order --nocheck-order --header --ignore-case --zero-terminated @files",
        ),
        None,
    ),
    (
        "fold",
        Some("-b -s -w# --bytes --spaces --width=# @files"),
        None,
    ),
    (
        "fmt",
        Some(
            "-c -p$ -s -t -u -w# -g# --crown-margin --prefix=$ --split-only --tagged-paragraph --uniform-spacing --width=# --goal=# @files",
        ),
        None,
    ),
    ("expand", Some("-i -t$ --initial --tabs=$ @files"), None),
    (
        "unexpand",
        Some("-a -t$ --all --first-only --tabs=$ @files"),
        None,
    ),
    ("rev", Some("@files"), None),
    // Encodes or decodes to standard output; it has no output file of its own.
    (
        "base64",
        Some("-d -i -w# --decode --ignore-garbage --wrap=# @files"),
        None,
    ),
    (
        "seq",
        Some("-f$ -s$ -w --format=$ --separator=$ --equal-width @files"),
        None,
    ),
    ("echo", None, None),
    ("printf", None, Some(printf)),
    ("true", None, None),
    ("false", None, None),
    ("test", None, None),
    ("[", None, None),
    ("expr", None, None),
    (
        "sed",
        Some(
            "-n -E -r -s -u -z -l# --quiet --silent --regexp-extended --separate --unbuffered --null-data --line-length=# --posix --debug --sandbox -e$ --expression=$ -f$ --file=$ @files @writes",
        ),
        Some(sed),
    ),
    ("jq", None, Some(jq)),
    // The program is checked against a subset read exactly (super::awk); only `-F`
    // and `-v` options.
    ("awk", Some("-F$ -v$ @files"), Some(super::awk::awk)),
    (
        "xargs",
        Some(
            "-0 -a$ -d$ -E$ -e? -I$ -i? -L# -l? -n# -P# -r -s# -t -x --null --arg-file=$ --delimiter=$ --eof=? --replace=? --max-lines=? --max-args=# --max-procs=# --max-chars=# --no-run-if-empty --verbose --exit @files @stop",
        ),
        Some(xargs),
    ),
    (
        "date",
        Some(
            "-d$ -f$ -r$ -I? -R -u --date=$ --file=$ --iso-8601=? --rfc-email --rfc-3339=$ --utc --universal --reference=$ --debug --help --version @files @writes",
        ),
        Some(date),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ro_4_sed_scripts() {
        for ok in [
            "1,40p",
            "/foo/p",
            "s/a/b/g",
            "s|x|y|2",
            "$d",
            "5q",
            "/^#/d;s/x/y/",
            "y/abc/xyz/",
            "10,20!d",
            "s/a\\/b/c/",
            "=",
            "/start/,/end/{p}",
        ] {
            assert!(sed_script(ok).is_ok(), "{ok}: {:?}", sed_script(ok));
        }
        for bad in [
            "w out.txt",
            "1w /tmp/x",
            ":a w out",
            ":a\tw out",
            ":a e id",
            ":a;N;$!ba;s/\\n/ /g",
            "/x/b end; w f",
            "t x",
            "r /etc/passwd",
            "1R notes.txt",
            "a text",
            "1i\\\nheader",
            "F",
            "v 4.2",
            "s/a/b/w out",
            "s/a/b/e",
            "e touch x",
            "W x",
            "s/x/y/gw f",
            "/x/e",
            "1e id",
        ] {
            assert!(sed_script(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ro_4_jq_filters() {
        for ok in [
            ".key",
            ".a.env",
            ".[] | .name",
            "map(.x) | length",
            "\"env\" as $x | 1",
            ".environment",
        ] {
            let verdict = jq_filter(ok);
            if ok.contains("\"env\"") {
                assert!(
                    verdict.is_err(),
                    "strings are scanned too, fail closed: {ok}"
                );
            } else {
                assert!(verdict.is_ok(), "{ok}: {verdict:?}");
            }
        }
        for bad in [
            "env",
            "$ENV.HOME",
            "$ ENV",
            "$\tENV",
            "$ # c\n ENV",
            "input_filename",
            "$__loc__",
            "include \"x\"; .",
            "import \"a\" as a; .",
            "\"\\(env.X)\"",
            "env|keys",
            "[.[]|env]",
            "modulemeta",
            "get_search_list",
            "debug",
        ] {
            assert!(jq_filter(bad).is_err(), "{bad}");
        }
    }
}
