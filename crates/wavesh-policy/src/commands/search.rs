//! Search tools: ripgrep and find.

use crate::Reason;
use wavesh_parse::Word;

use super::{Entry, Judgement};
use crate::flags::Parsed;

const RG: &str = "-A# -B# -C# -a -b -c -E$ -e$ -f$ -F -g$ -H -h -i -I -j# -L -l -M# -m# -N -n -o -p -P -q -r$ -s -S -t$ -T$ -u -U -v -V -w -x -0 \
    --after-context=# --before-context=# --context=# --text --byte-offset --count --count-matches --encoding=$ --regexp=$ --file=$ \
    --fixed-strings --glob=$ --iglob=$ --with-filename --no-filename --ignore-case --no-ignore --no-ignore-vcs --no-ignore-parent \
    --no-ignore-dot --no-ignore-global --no-ignore-exclude --no-ignore-files --ignore-file=$ --threads=# --follow --max-columns=# \
    --max-columns-preview --max-count=# --max-depth=# --max-filesize=$ --no-line-number --line-number --only-matching --pretty --pcre2 \
    --quiet --replace=$ --case-sensitive --smart-case --sort=$ --sortr=$ --type=$ --type-not=$ --type-list --unrestricted --multiline \
    --multiline-dotall --invert-match --word-regexp --line-regexp --null --null-data --hidden --no-hidden --files --files-with-matches \
    --files-without-match --json --no-messages --column --no-column --heading --no-heading --color=$ --colors=$ --vimgrep --trim \
    --stats --passthru --line-buffered --block-buffered --binary --no-binary --crlf --no-config --debug --trace --field-match-separator=$ \
    --field-context-separator=$ --context-separator=$ --no-context-separator --path-separator=$ --one-file-system --no-require-git \
    --engine=$ --auto-hybrid-regex --dfa-size-limit=$ --regex-size-limit=$ --mmap --no-mmap --unicode --no-unicode --help --version \
    --include-zero --max-depth=# --glob-case-insensitive --ignore-file-case-insensitive --no-pcre2-unicode --generate=$ \
    @files @writes";

/// find's tests and actions without a value that neither write nor run anything.
pub const NO_VALUE: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-depth",
    "-follow",
    "-mount",
    "-xdev",
    "-noleaf",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-empty",
    "-true",
    "-false",
    "-nouser",
    "-nogroup",
    "-prune",
    "-quit",
    "-readable",
    "-writable",
    "-executable",
    "-a",
    "-and",
    "-o",
    "-or",
    "-not",
    "!",
    "(",
    ")",
    ",",
    "-H",
    "-L",
    "-P",
    "-d",
];
/// find's tests and options with one value.
pub const ONE_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-printf",
    "-lname",
    "-ilname",
    "-fstype",
    "-used",
    "-context",
    "-D",
    "-O",
];

/// find's expression: only tests and actions that neither write nor run anything but a
/// read-only command (`-exec grep -l x {} +`, judged by the classifier like any other),
/// with the starting points as its paths (RO-2, RO-9).
fn find(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    let mut judgement = Judgement {
        only_listed_paths: true,
        ..Judgement::default()
    };
    let mut i = 0;
    let mut in_expression = false;
    while i < args.len() {
        let value = args[i].value.as_str();
        let index = i;
        i += 1;
        let is_expression = value.starts_with('-') || matches!(value, "(" | ")" | "!" | ",");
        if !is_expression {
            if in_expression {
                return Err(crate::refuse!("`find {value}` is not a test or action"));
            }
            judgement.path_words.push(index);
            continue;
        }
        // Global options before the starting points stay options, not an expression.
        if !(matches!(value, "-H" | "-L" | "-P" | "-D" | "-O") && judgement.path_words.is_empty()) {
            in_expression = true;
        }
        if matches!(value, "-exec" | "-execdir") {
            let start = i;
            let mut end = None;
            while i < args.len() {
                let word = args[i].value.as_str();
                if word == ";" || word == "+" && i > start && args[i - 1].value == "{}" {
                    end = Some(i);
                    break;
                }
                i += 1;
            }
            let Some(end) = end else {
                return Err(crate::refuse!(
                    "`find {value}` has no `;` or `{{}} +` ending it"
                ));
            };
            if end == start {
                return Err(crate::refuse!("`find {value}` runs nothing"));
            }
            judgement.runs.push(start..end);
            i = end + 1;
            continue;
        }
        if NO_VALUE.contains(&value) {
            continue;
        }
        if ONE_VALUE.contains(&value) || (value.starts_with("-newer") && value.len() == 8) {
            if i >= args.len() {
                return Err(crate::refuse!("`find {value}` needs a value"));
            }
            judgement.not_paths.push(i);
            i += 1;
            continue;
        }
        return Err(crate::refuse!(
            "`find {value}` is not a known read-only test or action"
        ));
    }
    Ok(judgement)
}

pub(super) const COMMANDS: &[Entry] = &[("rg", Some(RG), None), ("find", None, Some(find))];
