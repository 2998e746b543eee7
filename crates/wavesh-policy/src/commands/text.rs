//! Text tools that read their inputs and write only to stdout.

use wavesh_parse::Word;

use super::{Entry, positionals};

const GREP: &str = "-E -F -G -P -e$ -f$ -i -y -v -w -x -c -L -l -m# -o -q -s -b -H -h -n -T -Z -z -a -I -r -R -U -A# -B# -C# -d$ -D$ --color=? --colour=? \
    --extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp=$ --file=$ --ignore-case --no-ignore-case --invert-match --word-regexp \
    --line-regexp --count --files-without-match --files-with-matches --max-count=# --only-matching --quiet --silent --no-messages --byte-offset \
    --with-filename --no-filename --label=$ --line-number --initial-tab --null --null-data --text --binary-files=$ --recursive \
    --dereference-recursive --include=$ --exclude=$ --exclude-from=$ --exclude-dir=$ --after-context=# --before-context=# --context=# \
    --directories=$ --devices=$ --line-buffered --binary --help --version @files @num";

/// `uniq IN OUT` and `comm`-like tools write their second operand: at most one.
fn at_most_one_operand(args: &[Word]) -> Result<(), String> {
    let operands = positionals(args);
    if operands.len() > 1 {
        return Err(format!(
            "`{}` would be written as the output file",
            operands[1].raw
        ));
    }
    Ok(())
}

/// `date` with an operand not starting with `+` sets the clock (RO-4).
fn date(args: &[Word]) -> Result<(), String> {
    match positionals(args)
        .into_iter()
        .find(|w| !w.value.starts_with('+'))
    {
        Some(word) => Err(format!("`{}` would set the date", word.raw)),
        None => Ok(()),
    }
}

/// `sed` scripts must not write (`w`, `W`, `s///w`) or execute (`e`, `s///e`) (RO-4).
fn sed(args: &[Word]) -> Result<(), String> {
    let mut scripts = Vec::new();
    let mut explicit = false;
    let mut iter = args.iter();
    while let Some(word) = iter.next() {
        let value = word.value.as_str();
        match value {
            "-e" | "--expression" => {
                explicit = true;
                if let Some(script) = iter.next() {
                    scripts.push(script.value.clone());
                }
            }
            "-f" | "--file" => return Err("`sed -f` runs a script this check cannot read".into()),
            _ if value.starts_with("--expression=") => {
                explicit = true;
                scripts.push(value["--expression=".len()..].to_owned());
            }
            _ if value.starts_with("-e") && value.len() > 2 && !value.starts_with("--") => {
                explicit = true;
                scripts.push(value[2..].to_owned());
            }
            _ if value.starts_with("--file")
                || (value.starts_with('-') && !value.starts_with("--") && value.contains('f')) =>
            {
                return Err("`sed -f` runs a script this check cannot read".into());
            }
            _ => {}
        }
    }
    if !explicit && let Some(first) = positionals(args).first() {
        scripts.push(first.value.clone());
    }
    for script in &scripts {
        sed_script(script)?;
    }
    Ok(())
}

/// Scans a sed script command by command.
pub(crate) fn sed_script(script: &str) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '+' | '~' => i += 1,
            '0'..='9' => i += 1,
            '/' | '\\' => {
                // An address regex: /re/ or \cREc.
                let delimiter = if c == '\\' {
                    i += 1;
                    chars.get(i).copied().unwrap_or('/')
                } else {
                    c
                };
                i = skip_delimited(&chars, i + 1, delimiter);
                // Flags of an address regex: I, M.
                while matches!(chars.get(i), Some('I' | 'M')) {
                    i += 1;
                }
            }
            's' | 'y' => {
                let delimiter = chars.get(i + 1).copied().unwrap_or('/');
                let mut j = skip_delimited(&chars, i + 2, delimiter);
                j = skip_delimited(&chars, j, delimiter);
                if c == 's' {
                    while let Some(&flag) = chars.get(j) {
                        match flag {
                            'w' | 'W' => {
                                return Err(format!(
                                    "the sed script `{script}` writes a file (s///w)"
                                ));
                            }
                            'e' => {
                                return Err(format!(
                                    "the sed script `{script}` executes a command (s///e)"
                                ));
                            }
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => j += 1,
                            _ => break,
                        }
                    }
                }
                i = j;
            }
            'w' | 'W' => return Err(format!("the sed script `{script}` writes a file (`{c}`)")),
            'e' => {
                return Err(format!(
                    "the sed script `{script}` executes a command (`e`)"
                ));
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'b' | 't' | 'T' | ':' | 'l' | 'L' | 'q' | 'Q' | 'v' => {
                // Commands whose argument runs to the end of the line.
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(chars[i] == ';' && matches!(c, 'b' | 't' | 'T' | 'l' | 'q' | 'Q' | 'v'))
                {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => {
                i += 1
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            other => {
                return Err(format!(
                    "the sed script `{script}` has a command (`{other}`) this check does not know"
                ));
            }
        }
    }
    Ok(())
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
        // A newline inside an s command argument is allowed by GNU sed only escaped.
        i += 1;
    }
    i
}

/// `jq` must not read programs or data it was not given on the command line, nor see the
/// environment (RO-4).
fn jq(args: &[Word]) -> Result<(), String> {
    let mut iter = args.iter();
    let mut filter_seen = false;
    while let Some(word) = iter.next() {
        let value = word.value.as_str();
        match value {
            "-f" | "--from-file" | "-L" | "--rawfile" | "--slurpfile" => {
                return Err(format!(
                    "`jq {value}` reads a program or file this check cannot see"
                ));
            }
            "--arg" | "--argjson" => {
                iter.next();
                iter.next();
            }
            "--args" | "--jsonargs" => break,
            "--indent" => {
                iter.next();
            }
            _ if value.starts_with("-L") => return Err("`jq -L` loads modules".into()),
            _ if value.starts_with('-') && value != "-" => {
                // Short clusters such as -r, -c, -n, -e, -s, -j, -a, -S, -C, -M.
                let known = "rcnesjaSCMRx";
                if !value.starts_with("--") && !value[1..].chars().all(|c| known.contains(c)) {
                    return Err(format!("`{value}` is not a known safe jq option"));
                }
                if value.starts_with("--") && !JQ_LONG.contains(&value) {
                    return Err(format!("`{value}` is not a known safe jq option"));
                }
            }
            filter if !filter_seen => {
                filter_seen = true;
                for bad in [
                    "$ENV",
                    "env",
                    "include",
                    "import",
                    "input_filename",
                    "$__loc__",
                    "debug",
                    "stderr",
                ] {
                    if contains_identifier(filter, bad) {
                        return Err(format!("the jq filter uses `{bad}`"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

const JQ_LONG: &[&str] = &[
    "--raw-output",
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
    "--raw-output0",
    "--seq",
    "--stream",
    "--stream-errors",
];

fn contains_identifier(text: &str, name: &str) -> bool {
    let mut start = 0;
    while let Some(found) = text[start..].find(name) {
        let at = start + found;
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let is_ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_ident(before) && !is_ident(after) || name.starts_with('$') && !is_ident(after) {
            return true;
        }
        start = at + name.len();
    }
    false
}

/// `xargs` may only drive commands that are read-only with any argument (RO-4).
fn xargs(args: &[Word]) -> Result<(), String> {
    const DRIVEN: &[&str] = &[
        "echo", "printf", "wc", "grep", "egrep", "fgrep", "head", "tail",
    ];
    let mut iter = args.iter();
    while let Some(word) = iter.next() {
        let value = word.value.as_str();
        match value {
            "-0" | "--null" | "-r" | "--no-run-if-empty" | "-t" | "--verbose" | "-x" | "--exit" => {
            }
            "-n" | "-L" | "-P" | "-s" | "-d" | "-E" | "-I" | "--max-args" | "--max-lines"
            | "--max-procs" | "--delimiter" => {
                iter.next();
            }
            _ if value.starts_with("-n")
                || value.starts_with("-P")
                || value.starts_with("-d")
                || value.starts_with("-I")
                || value.starts_with("-L") => {}
            _ if value.starts_with("--max-args=")
                || value.starts_with("--delimiter=")
                || value.starts_with("--max-procs=") => {}
            _ if value.starts_with('-') => {
                return Err(format!("`{value}` is not a known safe xargs option"));
            }
            command => {
                return if DRIVEN.contains(&command) {
                    let rest: Vec<Word> = iter.cloned().collect();
                    if command == "grep" || command == "egrep" || command == "fgrep" {
                        crate::flags::FlagTable::parse(GREP).check(&rest)
                    } else {
                        Ok(())
                    }
                } else {
                    Err(format!(
                        "xargs would run `{command}`, which is not on its read-only list"
                    ))
                };
            }
        }
    }
    Ok(())
}

const SORT: &str = "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k$ -t$ -S$ --ignore-leading-blanks --dictionary-order --ignore-case \
    --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort \
    --sort=$ --check=? --merge --stable --unique --zero-terminated --key=$ --field-separator=$ --buffer-size=$ \
    --parallel=# --debug --help --version @files";

pub(super) const COMMANDS: &[Entry] = &[
    ("grep", Some(GREP), None),
    ("egrep", Some(GREP), None),
    ("fgrep", Some(GREP), None),
    ("sort", Some(SORT), None),
    (
        "uniq",
        Some(
            "-c -d -D -f# -i -s# -u -w# -z --count --repeated --all-repeated=? --skip-fields=# --ignore-case --skip-chars=# --unique --zero-terminated --check-chars=# --group=? @files",
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
        --speed-large-files --color=? --palette=$ --help --version @files",
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
    (
        "seq",
        Some("-f$ -s$ -w --format=$ --separator=$ --equal-width @files"),
        None,
    ),
    ("echo", None, None),
    ("printf", None, None),
    ("true", None, None),
    ("false", None, None),
    ("test", None, None),
    ("[", None, None),
    ("expr", None, None),
    (
        "sed",
        Some(
            "-n -E -r -s -u -z -l# --quiet --silent --regexp-extended --separate --unbuffered --null-data --line-length=# --posix --debug --sandbox -e$ --expression=$ @files @writes",
        ),
        Some(sed),
    ),
    ("jq", None, Some(jq)),
    ("xargs", None, Some(xargs)),
    (
        "date",
        Some(
            "-d$ -f$ -I? -R -u --date=$ --file=$ --iso-8601=? --rfc-email --rfc-3339=$ --utc --universal --reference=$ --debug --help --version @files",
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
    fn ro_4_jq_identifiers() {
        assert!(contains_identifier("$ENV.HOME", "$ENV"));
        assert!(contains_identifier(".a | env", "env"));
        assert!(!contains_identifier(".environment", "env"));
        assert!(!contains_identifier(".envy", "env"));
    }
}
