//! Facts about the system, the user and the shell.

use crate::Reason;
use wavesh_parse::Word;

use super::{Entry, Judgement};
use crate::flags::Parsed;

/// ps's UNIX-style options (after one `-`): letters without a value.
const PS_UNIX_FLAGS: &str = "AaedfFlHjLMTxyZcwNPrT";
/// ps's UNIX-style options with a value.
const PS_UNIX_VALUES: &str = "oOpuUgGCtsqk";
/// BSD-style letters (no dash) that do not show environments. `e` and `E` do.
const PS_BSD_LETTERS: &str = "auxwfjlsvrTchnSmMXZH";
const PS_LONG: &[&str] = &[
    "--forest",
    "--headers",
    "--no-headers",
    "--deselect",
    "--help",
    "--version",
    "--info",
    "--cumulative",
];
const PS_LONG_VALUES: &[&str] = &[
    "--sort",
    "--format",
    "--pid",
    "--ppid",
    "--user",
    "--User",
    "--group",
    "--Group",
    "--cols",
    "--columns",
    "--width",
    "--lines",
    "--rows",
    "--tty",
    "--sid",
    "--quick-pid",
];

/// `ps`: any spelling that shows other processes' environments refuses — BSD `e` in a
/// word of letters and digits (`e`, `axe`, `eww`, `aux1e`), `-E`, a format naming the
/// environment (RO-4, RO-9).
fn ps(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    let mut i = 0;
    let env_refusal = |word: &str| {
        Err(crate::refuse!(
            "`ps {word}` shows the environment of processes"
        ))
    };
    while i < args.len() {
        let value = args[i].value.as_str();
        i += 1;
        if let Some(long) = value.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_owned())),
                None => (format!("--{long}"), None),
            };
            if PS_LONG.contains(&name.as_str()) && attached.is_none() {
                continue;
            }
            if PS_LONG_VALUES.contains(&name.as_str()) {
                let format = match attached {
                    Some(v) => v,
                    None => {
                        let Some(next) = args.get(i) else {
                            return Err(crate::refuse!("`ps {name}` needs a value"));
                        };
                        i += 1;
                        next.value.clone()
                    }
                };
                if format.to_ascii_lowercase().contains("env") {
                    return env_refusal(value);
                }
                continue;
            }
            return Err(crate::refuse!("`{name}` is not a known safe ps option"));
        }
        if let Some(cluster) = value.strip_prefix('-') {
            for (offset, c) in cluster.char_indices() {
                if c == 'E' {
                    return env_refusal(value);
                }
                if PS_UNIX_VALUES.contains(c) {
                    let attached = &cluster[offset + 1..];
                    let format = if attached.is_empty() {
                        let Some(next) = args.get(i) else {
                            return Err(crate::refuse!("`ps -{c}` needs a value"));
                        };
                        i += 1;
                        next.value.clone()
                    } else {
                        attached.to_owned()
                    };
                    if format.to_ascii_lowercase().contains("env") {
                        return env_refusal(value);
                    }
                    break;
                }
                if !PS_UNIX_FLAGS.contains(c) {
                    return Err(crate::refuse!(
                        "`-{c}` (in `{value}`) is not a known safe ps option"
                    ));
                }
            }
            continue;
        }
        // BSD style: letters, and digits of a process list.
        for c in value.chars() {
            if c == 'e' || c == 'E' {
                return env_refusal(value);
            }
            if !(c.is_ascii_digit() || c == ',' || PS_BSD_LETTERS.contains(c)) {
                return Err(crate::refuse!(
                    "`{c}` (in `ps {value}`) is not a known safe ps option"
                ));
            }
        }
    }
    Ok(Judgement::default())
}

/// `command` only to look commands up (`-v`, `-V`): with a command it would run it.
fn command(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    match args.first().map(|w| w.value.as_str()) {
        Some("-v" | "-V") => Ok(Judgement::default()),
        _ => Err("`command` without -v or -V runs the command".into()),
    }
}

/// `hostname NAME` sets the host name.
fn hostname(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    match parsed.operands.first() {
        Some(&index) => Err(crate::refuse!(
            "`hostname {}` would set the host name",
            args[index].raw
        )),
        None => Ok(Judgement::default()),
    }
}

/// `pgrep`'s operand is a pattern, not a path.
fn pgrep(_args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    Ok(Judgement {
        not_paths: parsed.operands.clone(),
        ..Judgement::default()
    })
}

/// Variables whose values are not secrets.
const PLAIN_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "TZ",
    "HOSTNAME",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "COLUMNS",
    "LINES",
    "SHLVL",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOOS",
    "GOARCH",
    "JAVA_HOME",
    "NODE_ENV",
    "NVM_DIR",
    "VIRTUAL_ENV",
    "CONDA_DEFAULT_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
    "PYENV_ROOT",
    "MANPATH",
    "CI",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "TERM_PROGRAM",
    "COLORTERM",
    "NO_COLOR",
    "MAIL",
    "WSL_DISTRO_NAME",
    "container",
];

/// `printenv NAME...` for variables that hold no secret; bare `printenv` prints tokens.
fn printenv(args: &[Word], parsed: &Parsed) -> Result<Judgement, Reason> {
    if parsed.operands.is_empty() {
        return Err("`printenv` without a name prints every variable, tokens included".into());
    }
    for &index in &parsed.operands {
        let name = args[index].value.as_str();
        if !(PLAIN_VARIABLES.contains(&name) || name.starts_with("LC_") || name.starts_with("XDG_"))
        {
            return Err(crate::refuse!("`{name}` is not known to hold no secret"));
        }
    }
    Ok(Judgement::default())
}

pub(super) const COMMANDS: &[Entry] = &[
    ("pwd", Some("-L -P"), None),
    ("whoami", Some("--help --version"), None),
    (
        "id",
        Some(
            "-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero @files",
        ),
        None,
    ),
    ("groups", Some("@files"), None),
    (
        "uname",
        Some(
            "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version --machine --processor --hardware-platform --operating-system",
        ),
        None,
    ),
    ("arch", Some(""), None),
    (
        "hostname",
        // The other listing options (-a, -d, -f, -A, -i, -I, -y) resolve names over
        // the network; the behaviour check saw them connect.
        Some("-s --short"),
        Some(hostname),
    ),
    ("uptime", Some("-p -s --pretty --since"), None),
    ("nproc", Some("--all --ignore=#"), None),
    (
        "free",
        Some(
            "-b -k -m -g -h -l -t -w --bytes --kilo --mega --giga --kibi --mebi --gibi --human --si --lohi --total --wide",
        ),
        None,
    ),
    ("ps", None, Some(ps)),
    (
        "which",
        Some("-a --all --skip-alias --skip-functions @files"),
        None,
    ),
    ("type", Some("-a -f -p -P -t @files"), None),
    ("command", None, Some(command)),
    ("tty", Some("-s --silent --quiet"), None),
    (
        "locale",
        // `-m` (charmaps) runs gzip to read compressed charmaps (seen by the behaviour check).
        Some("-a -c -k --all-locales --category-name --keyword-name @files"),
        None,
    ),
    (
        "lsb_release",
        Some("-a -c -d -i -r -s --all --codename --description --id --release --short"),
        None,
    ),
    (
        "sw_vers",
        Some("-productName -productVersion -buildVersion"),
        None,
    ),
    ("getconf", Some("-a @files"), None),
    ("printenv", Some("-0 --null @files"), Some(printenv)),
    // Reads /proc; unlike pkill it signals nothing. Inside the sandbox it sees the
    // command's own PID namespace.
    (
        "pgrep",
        Some(
            "-a -c -f -i -l -n -o -v -w -x -d$ -g$ -G$ -P$ -s$ -t$ -u$ -U$ --list-name --list-full --count --full --ignore-case --newest --oldest --inverse --lightweight --exact --delimiter=$ --pgroup=$ --group=$ --parent=$ --session=$ --terminal=$ --euid=$ --uid=$ --ns=$ --nslist=$ --older=# @files",
        ),
        Some(pgrep),
    ),
];
