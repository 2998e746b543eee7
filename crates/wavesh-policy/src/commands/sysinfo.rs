//! Facts about the system, the user and the shell.

use wavesh_parse::Word;

use super::{Entry, positionals};

/// `ps` with a BSD-style argument containing `e` shows other processes' environments
/// (RO-4).
fn ps(args: &[Word]) -> Result<(), String> {
    for word in args {
        let value = word.value.as_str();
        if !value.starts_with('-')
            && value.contains('e')
            && value.chars().all(|c| c.is_ascii_alphabetic())
        {
            return Err(format!("`ps {value}` shows the environment of processes"));
        }
    }
    Ok(())
}

/// `command` only to look commands up (`-v`, `-V`): with a command it would run it.
fn command(args: &[Word]) -> Result<(), String> {
    match args.first().map(|w| w.value.as_str()) {
        Some("-v" | "-V") => Ok(()),
        _ => Err("`command` without -v or -V runs the command".into()),
    }
}

/// `hostname NAME` sets the host name.
fn hostname(args: &[Word]) -> Result<(), String> {
    match positionals(args).first() {
        Some(word) => Err(format!("`hostname {}` would set the host name", word.raw)),
        None => Ok(()),
    }
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
        Some(
            "-a -d -f -A -i -I -s -y --alias --domain --fqdn --long --all-fqdns --ip-address --all-ip-addresses --short",
        ),
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
        Some("-a -m -c -k --all-locales --charmaps --category-name --keyword-name @files"),
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
];
