//! Telling the model what the sandbox refused (SBX-4). A model that reads a bare
//! "Permission denied" takes the project for broken; this names the path and the
//! operation, or the network, and says how to ask for more.
//!
//! The refusals are found in the failing calls' errors as the command printed them
//! (Landlock's audit log would need the audit socket, which a command's host seldom has):
//! each line with a permission error is searched for a path, and the path is judged
//! against the plan the command ran under.

use std::path::{Path, PathBuf};

use super::{Level, Plan};

/// At most this many refused paths are named (grouped by reason); the rest are counted.
const MAX_NAMED: usize = 8;

/// The note for the model, or `None` when nothing in `output` looks refused by the
/// sandbox. `cwd` (where the command started) and `final_cwd` (where its shell ended,
/// when known) resolve relative paths: a command that changed directory names its paths
/// from either.
pub fn explain_denials(
    output: &str,
    plan: &Plan,
    cwd: &Path,
    final_cwd: Option<&Path>,
) -> Option<String> {
    let mut cwds = vec![cwd];
    if let Some(end) = final_cwd.filter(|end| *end != cwd) {
        cwds.push(end);
    }
    explain(output, plan, &cwds, &host_may_write)
}

/// [`explain_denials`], with whether the command's user may write a path outside the
/// sandbox as `may_write`, and the directories relative paths may be relative to.
fn explain(
    output: &str,
    plan: &Plan,
    cwds: &[&Path],
    may_write: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    if plan.level == Level::Off {
        return None;
    }
    let mut refused: Vec<Refusal> = Vec::new();
    let mut network = false;
    let mut direct = false;
    let mut signal = false;
    // The lines just before a denial: a traceback names the socket call above the error.
    let mut context: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
    for line in output.lines().take(2000) {
        let before = context
            .iter()
            .any(|l| l.contains("socket") || l.contains("connect"));
        context.push_back(line);
        if context.len() > 4 {
            context.pop_front();
        }
        let whole = line;
        let line = strip_shell_prefix(line);
        let denied = DENIAL_WORDS.iter().any(|w| line.contains(w));
        // A connection that found no route (curl says only "Couldn't connect") is the
        // session network's refusal unless it was to the session's own loopback.
        let no_route = plan.session_net.is_some()
            && CONNECT_WORDS.iter().any(|w| line.contains(w))
            && !LOOPBACK_NAMES.iter().any(|w| line.contains(w));
        if no_route || NETWORK_WORDS.iter().any(|w| line.contains(w)) {
            if !plan.network {
                network = true;
                continue;
            }
            // In the session's network namespace only the proxy reaches out: a program
            // that connects by itself (ignoring HTTP_PROXY) finds no route and no
            // resolver (NET-1).
            if plan.session_net.is_some() {
                direct = true;
                continue;
            }
        }
        if !denied {
            continue;
        }
        if line.starts_with("kill:") {
            signal = true;
            continue;
        }
        // Of the paths a line names, a secret's is the one to tell: `ln SECRET name`
        // names both, and the secret is what was refused.
        let write = WRITE_HINTS.iter().any(|w| whole.contains(w));
        let judged: Vec<Refusal> = candidate_paths(line)
            .into_iter()
            .filter_map(|path| judge_named(&path, write, cwds, plan, may_write))
            .collect();
        let what = judged
            .iter()
            .find(|refusal| refusal.is_read())
            .or(judged.first())
            .cloned();
        match what {
            Some(refusal) if !refused.contains(&refusal) => refused.push(refusal),
            Some(_) => {}
            None if !plan.network
                && (line.contains("socket") || line.contains("connect") || before) =>
            {
                network = true;
            }
            None if line.contains("kill") || line.contains("signal") => signal = true,
            None => {}
        }
    }
    let mut parts = group(&refused, plan.level);
    if network {
        parts.push("network access (the network is off in the sandbox)".to_owned());
    }
    if direct {
        parts.push("a direct network connection (only HTTP and HTTPS through the session's proxy, named in HTTP_PROXY and HTTPS_PROXY, reach the network, and only to the allowed hosts)".to_owned());
    }
    if signal {
        parts.push("a signal to a process outside this command".to_owned());
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "The {} sandbox refused: {}. If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it).",
        plan.level,
        parts.join("; ")
    ))
}

/// Why the sandbox refused a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// A credential it hides.
    Secret,
    /// Another wavesh session's private files.
    OtherSession,
    /// A protected path (git hooks and config, `.claude`, wavesh's state).
    ReadOnly,
    /// Outside the writable paths of the level.
    Outside,
}

impl Why {
    fn op(self) -> &'static str {
        match self {
            Why::Secret | Why::OtherSession => "reading",
            Why::ReadOnly | Why::Outside => "writing",
        }
    }

    fn reason(self, many: bool, level: Level) -> String {
        match (self, many) {
            (Why::Secret, false) => "a secret: the sandbox hides the user's credentials".to_owned(),
            (Why::Secret, true) => "secrets: the sandbox hides the user's credentials".to_owned(),
            (Why::OtherSession, _) => {
                "another wavesh session's files: each session's are hidden from the others"
                    .to_owned()
            }
            (Why::ReadOnly, _) => "kept read-only: git hooks and config, .claude and wavesh's state cannot be changed from the sandbox".to_owned(),
            (Why::Outside, _) => format!("outside what the {level} sandbox may write"),
        }
    }
}

/// One thing an error line shows refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// A path, and why.
    Path(Why, PathBuf),
    /// A relative path that names different things from the directories the command
    /// was in, each refused: said as it is.
    Either(String),
}

impl Refusal {
    fn is_read(&self) -> bool {
        matches!(self, Refusal::Path(why, _) if why.op() == "reading")
    }

    /// Said alone.
    fn text(&self, level: Level) -> String {
        match self {
            Refusal::Path(why, path) => {
                format!(
                    "{} {} ({})",
                    why.op(),
                    path.display(),
                    why.reason(false, level)
                )
            }
            Refusal::Either(text) => text.clone(),
        }
    }
}

/// The refusals said in as few words as they allow: the paths refused for the same
/// reason named together, in the order they were first refused, at most [`MAX_NAMED`]
/// paths in all, and how many more there were.
fn group(refused: &[Refusal], level: Level) -> Vec<String> {
    let mut groups: Vec<(Why, Vec<&Path>)> = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    let mut named = 0usize;
    let mut more = 0usize;
    // Where each group stands among the parts.
    let mut at: Vec<usize> = Vec::new();
    for refusal in refused {
        if named == MAX_NAMED {
            more += 1;
            continue;
        }
        named += 1;
        match refusal {
            Refusal::Path(why, path) => match groups.iter().position(|(w, _)| w == why) {
                Some(i) => groups[i].1.push(path),
                None => {
                    groups.push((*why, vec![path.as_path()]));
                    at.push(parts.len());
                    parts.push(String::new());
                }
            },
            Refusal::Either(text) => parts.push(text.clone()),
        }
    }
    for ((why, paths), i) in groups.into_iter().zip(at) {
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        parts[i] = format!(
            "{} {} ({})",
            why.op(),
            list.join(", "),
            why.reason(list.len() > 1, level)
        );
    }
    if more > 0 {
        parts.push(format!(
            "{more} more path{} the output names",
            if more == 1 { "" } else { "s" }
        ));
    }
    parts
}

const DENIAL_WORDS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "Device or resource busy",
    "Invalid cross-device link",
    "EACCES",
    "EPERM",
    "EROFS",
    "PermissionError",
];

/// Errors that only a missing network gives (the resolver's and HTTP clients' words).
const NETWORK_WORDS: &[&str] = &[
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "Network is unreachable",
    "/dev/tcp/",
    "/dev/udp/",
    "getaddrinfo",
];

/// Errors of a connection that found no way out: in the session's network namespace, a
/// program that ignores `HTTP_PROXY` gets these for any address but loopback.
const CONNECT_WORDS: &[&str] = &[
    "Couldn't connect to server",
    "No route to host",
    "Network unreachable",
];

/// Names of the loopback, whose connection errors are the session's own servers', not
/// the network's.
const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.", "::1", "0.0.0.0"];

/// Words of an error line that say it was a write (the shell's own redirection errors
/// included). A permission error on an existing path without any of them was a read,
/// which the sandbox refuses only for secrets.
const WRITE_HINTS: &[&str] = &[
    "cannot touch",
    "cannot create",
    "cannot remove",
    "cannot move",
    "cannot make",
    "cannot overwrite",
    "cannot link",
    "cannot copy",
    "mkdir",
    "mkfifo",
    "mknod",
    "ln:",
    "cp:",
    "mv:",
    "rm:",
    "tee:",
    "truncate",
    "install:",
    "bash:",
    "zsh:",
    "sh:",
    "write",
    "Read-only file system",
    "Errno 13",
    "Errno 1]",
    "EACCES",
    "EPERM",
    "EROFS",
    "unable to",
    "failed to",
    "could not",
];

/// What the sandbox refused at `path` as an error line names it: an absolute path as
/// it is; a relative one from each directory the command was in (`cwds`: where it
/// started, where it ended). Of those, a path that is there (or, for a write, whose
/// directory is there, or a secret) is plausible; when the plausible ones disagree on
/// what was refused, the ones that exist win, and a tie names every reading rather than
/// guess one. Nothing plausible: only a directory the command passed through in between
/// could tell, and the path is left unnamed rather than misnamed.
fn judge_named(
    path: &str,
    write: bool,
    cwds: &[&Path],
    plan: &Plan,
    may_write: &dyn Fn(&Path) -> bool,
) -> Option<Refusal> {
    if Path::new(path).is_absolute() {
        return judge(Path::new(path), plan, may_write);
    }
    // (judgement, whether the path exists)
    let mut readings: Vec<(Refusal, bool)> = Vec::new();
    for cwd in cwds {
        let resolved = absolute(path, cwd);
        let exists = std::fs::symlink_metadata(&resolved).is_ok();
        let made_here = write
            && resolved
                .parent()
                .is_some_and(|dir| std::fs::metadata(dir).is_ok_and(|m| m.is_dir()));
        if !exists && !made_here && !plan.is_secret(&resolved) {
            continue;
        }
        if let Some(refusal) = judge(&resolved, plan, may_write)
            && !readings.iter().any(|(r, _)| *r == refusal)
        {
            readings.push((refusal, exists));
        }
    }
    if readings.iter().any(|(_, exists)| *exists) {
        readings.retain(|(_, exists)| *exists);
    }
    match readings.len() {
        0 => None,
        1 => readings.pop().map(|(refusal, _)| refusal),
        _ => Some(Refusal::Either(format!(
            "either {} (`{path}` is relative to the directory the command was in then)",
            readings
                .into_iter()
                .map(|(refusal, _)| refusal.text(plan.level))
                .collect::<Vec<_>>()
                .join(" or ")
        ))),
    }
}

/// What the sandbox refused at `path`, if it would have.
fn judge(path: &Path, plan: &Plan, may_write: &dyn Fn(&Path) -> bool) -> Option<Refusal> {
    // `/proc/self/…` and `/dev/fd/…` name the command's own descriptors, which the host
    // cannot resolve or look at from here (its own would answer).
    let the_commands_own = [
        "/proc",
        "/dev/fd",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
    ]
    .iter()
    .any(|own| path.starts_with(own));
    // A planted symlink is judged by where it leads.
    let resolved = (!the_commands_own)
        .then(|| std::fs::canonicalize(path).ok())
        .flatten();
    let path = resolved.as_deref().unwrap_or(path);
    // Another session's private directory is hidden as a secret is, but it holds no
    // credential: say what it is.
    if plan
        .readable_dirs
        .iter()
        .filter_map(|own| own.parent())
        .any(|base| path.starts_with(base))
        && !plan.readable_dirs.iter().any(|own| path.starts_with(own))
    {
        return Some(Refusal::Path(Why::OtherSession, path.to_path_buf()));
    }
    if plan.is_secret(path) {
        return Some(Refusal::Path(Why::Secret, path.to_path_buf()));
    }
    if plan.is_read_only(path) {
        return Some(Refusal::Path(Why::ReadOnly, path.to_path_buf()));
    }
    if plan.may_write(path) {
        return None;
    }
    // An existing path outside the writable ones: the sandbox lets it be read, so a
    // refusal there was a write, unless the file's own modes refuse this user as well
    // (the host runs as the command's user): then the sandbox is not why, and turning it
    // off would not help. Reading a file without read permission, running a script
    // without the execute bit, writing a file of another user all land here.
    if !the_commands_own && std::fs::symlink_metadata(path).is_ok() && !may_write(path) {
        return None;
    }
    Some(Refusal::Path(Why::Outside, path.to_path_buf()))
}

/// Whether this process (the command's user, outside the sandbox) may write `path`.
fn host_may_write(path: &Path) -> bool {
    #[cfg(unix)]
    {
        rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
}

/// The line without the shell's own `bash: line 3: ` (or `/bin/bash: `) prefix, which
/// names the shell, not what was refused.
fn strip_shell_prefix(line: &str) -> &str {
    let mut rest = line;
    if let Some((first, after)) = rest.split_once(": ")
        && ["bash", "zsh", "sh"].contains(&first.rsplit('/').next().unwrap_or(first))
    {
        rest = after;
        if let Some(after_line) = rest.strip_prefix("line ")
            && let Some((number, after)) = after_line.split_once(": ")
            && number.chars().all(|c| c.is_ascii_digit())
        {
            rest = after;
        }
    }
    rest
}

/// Path-like words of an error line: quoted ones first, then words with a `/`, then
/// the word before `: Permission denied` or `: Read-only file system`.
fn candidate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['\'', '"', '`', '‘', '’'] {
        let mut parts = line.split(quote);
        parts.next();
        while let Some(inside) = parts.next() {
            if !inside.is_empty() && !inside.contains(' ') || inside.contains('/') {
                out.push(inside.trim_end_matches('\'').to_owned());
            }
            parts.next();
        }
    }
    for word in line.split(|c: char| c.is_whitespace() || c == ':' || c == ',') {
        let word = word.trim_matches(|c: char| "'\"`‘’()[]".contains(c));
        if word.contains('/') && !word.contains("://") {
            out.push(word.to_owned());
        }
    }
    // Landlock says EACCES; the supervisor's read-only mounts say EROFS.
    for error in [": Permission denied", ": Read-only file system"] {
        if let Some((before, _)) = line.split_once(error)
            && let Some(word) = before.rsplit(": ").next()
        {
            out.push(word.trim().to_owned());
        }
    }
    out.retain(|p| !p.is_empty() && !p.starts_with('-'));
    out
}

fn absolute(path: &str, cwd: &Path) -> PathBuf {
    crate::lexical_join(cwd, Path::new(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(level: Level) -> Plan {
        Plan {
            level,
            writable_dirs: vec!["/p/tmp".into(), "/ws".into()],
            readable_dirs: Vec::new(),
            sessions_by_mount: None,
            writable_files: vec!["/dev/null".into()],
            read_only: vec!["/ws/.git/hooks".into()],
            secret_paths: vec!["/home/u/.ssh".into()],
            secret_names: vec![".env".into()],
            scan_dirs: Vec::new(),
            scan_trees: Vec::new(),
            network: false,
            found_secrets: Vec::new(),
            session_net: None,
            views: Default::default(),
        }
    }

    #[test]
    fn sbx_4_names_the_path_and_the_operation() {
        let ws = plan(Level::WorkspaceWrite);
        let cwd = Path::new("/ws/sub");
        assert_eq!(
            explain_denials(
                "touch: cannot touch '/etc/x': Permission denied",
                &ws,
                cwd,
                None
            )
            .unwrap(),
            "The workspace-write sandbox refused: writing /etc/x (outside what the workspace-write sandbox may write). If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it)."
        );
        assert!(
            explain_denials("cat: ../.env: Permission denied", &ws, cwd, None)
                .unwrap()
                .contains("reading /ws/.env (a secret")
        );
        assert!(
            explain_denials(
                "bash: line 1: /ws/.git/hooks/pre-commit: Read-only file system",
                &ws,
                Path::new("/ws"),
                None
            )
            .unwrap()
            .contains("writing /ws/.git/hooks/pre-commit (kept read-only")
        );
        let traceback = "  File \"/usr/lib/python3/socket.py\", line 232, in __init__\n    _socket.socket.__init__(self, family, type, proto, fileno)\nPermissionError: [Errno 1] Operation not permitted";
        assert_eq!(
            explain_denials(traceback, &ws, cwd, None).unwrap(),
            "The workspace-write sandbox refused: network access (the network is off in the sandbox). If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it)."
        );
        assert!(
            explain_denials(
                "curl: (6) Could not resolve host: example.com",
                &ws,
                cwd,
                None
            )
            .unwrap()
            .contains("network access (the network is off in the sandbox)")
        );
    }

    #[test]
    fn sbx_4_signals_and_the_shell_prefix() {
        let ws = plan(Level::ReadOnly);
        assert_eq!(
            explain_denials(
                "/bin/bash: line 26: kill: (29019) - Operation not permitted",
                &ws,
                Path::new("/ws"),
                None
            )
            .unwrap(),
            "The read-only sandbox refused: a signal to a process outside this command. If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it)."
        );
        assert!(
            explain_denials(
                "bash: line 1: /etc/passwd: Permission denied",
                &ws,
                Path::new("/ws"),
                None
            )
            .unwrap()
            .contains("writing /etc/passwd (outside")
        );
    }

    /// SBX-4: a refusal the file's own modes make (a read without read permission, a
    /// script without the execute bit, another user's file) is not the sandbox's, and
    /// no note sends the model to turn it off; another session's hidden files are named
    /// as such, not as credentials.
    #[test]
    fn sbx_4_no_note_for_what_file_modes_refuse() {
        let dir = std::env::temp_dir().join(format!("wavesh-denial-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("locked");
        std::fs::write(&file, "").unwrap();
        let ro = plan(Level::ReadOnly);
        let cwd = Path::new("/ws");
        for line in [
            format!("cat: {}: Permission denied", file.display()),
            format!("bash: line 1: {}: Permission denied", file.display()),
            format!(
                "PermissionError: [Errno 13] Permission denied: '{}'",
                file.display()
            ),
        ] {
            assert_eq!(explain(&line, &ro, &[cwd], &|_| false), None, "{line}");
            assert!(
                explain(&line, &ro, &[cwd], &|_| true)
                    .unwrap()
                    .contains(&format!("writing {}", file.display())),
                "{line}"
            );
        }
        // A path that does not exist was being made: a write, whoever owns the parent.
        assert!(
            explain(
                "touch: cannot touch '/nonexistent-wavesh/x': Permission denied",
                &ro,
                &[cwd],
                &|_| false
            )
            .unwrap()
            .contains("writing /nonexistent-wavesh/x")
        );
        let mut sessions = plan(Level::WorkspaceWrite);
        sessions.secret_paths.push("/tmp/wavesh-root".into());
        sessions.readable_dirs.push("/tmp/wavesh-root/mine".into());
        let note = explain(
            "cat: /tmp/wavesh-root/theirs/out: Permission denied",
            &sessions,
            &[cwd],
            &|_| true,
        )
        .unwrap();
        assert!(note.contains("another wavesh session's files"), "{note}");
        assert!(!note.contains("credentials"), "{note}");
        // The command's own descriptors are not the host's to check.
        assert!(
            explain(
                "bash: line 1: /proc/self/fd/3: Permission denied",
                &ro,
                &[cwd],
                &|_| false
            )
            .unwrap()
            .contains("writing /proc/self/fd/3")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A relative path in an error line printed after a `cd` is judged from the
    /// directory the shell ended in as well as the one it started in: the reading
    /// where the path is (or, for a write, where its directory is) is named, and when
    /// both are plausible and refused, both are, never a guess.
    #[test]
    fn sbx_4_relative_paths_after_cd() {
        let base = std::env::temp_dir().join(format!(
            "wavesh-denial-cd-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(6)
        ));
        let (ws, sub, other, far) = (
            base.join("ws"),
            base.join("ws/sub"),
            base.join("other"),
            base.join("other/far"),
        );
        for dir in [&sub, &far] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(ws.join(".env"), "x").unwrap();
        let mut plan = plan(Level::WorkspaceWrite);
        plan.writable_dirs = vec![ws.clone()];
        let note = |line: &str, start: &Path, end: Option<&Path>| {
            explain(
                line,
                &plan,
                &[Some(start), end].into_iter().flatten().collect::<Vec<_>>(),
                &|_| true,
            )
        };
        // `cd sub && cat ../.env`: there only from where the shell ended.
        let read = note("cat: ../.env: Permission denied", &base, Some(&sub)).unwrap();
        assert!(
            read.contains(&format!("reading {}", ws.join(".env").display())),
            "{read}"
        );
        // Without the final directory a path that is nowhere is not named.
        std::fs::write(sub.join("data"), "x").unwrap();
        assert_eq!(note("cat: ./data: Permission denied", &base, None), None);
        // `cd ../other && touch x`: made in the directory it ended in, outside the
        // workspace; from the start it would have been allowed.
        let write = note(
            "touch: cannot touch 'x': Read-only file system",
            &ws,
            Some(&other),
        )
        .unwrap();
        assert!(
            write.contains(&format!("writing {}", other.join("x").display())),
            "{write}"
        );
        // `touch ../x; cd sub`: refused from the start, allowed from the end.
        let before = note(
            "touch: cannot touch '../x': Read-only file system",
            &ws,
            Some(&sub),
        )
        .unwrap();
        assert!(
            before.contains(&format!("writing {}", base.join("x").display())),
            "{before}"
        );
        // Both readings refused: both are named.
        let both = note(
            "touch: cannot touch 'y': Read-only file system",
            &other,
            Some(&far),
        )
        .unwrap();
        assert!(
            both.contains(&other.join("y").display().to_string())
                && both.contains(&far.join("y").display().to_string())
                && both.contains("either"),
            "{both}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Several refusals make one note: the paths refused for one reason named together,
    /// the reason said once, and what is past the limit counted, not dropped.
    #[test]
    fn sbx_4_refusals_are_grouped_by_reason() {
        let ws = plan(Level::WorkspaceWrite);
        let cwd = Path::new("/ws");
        let output = "cat: /home/u/.ssh/id_rsa: Permission denied\n\
             touch: cannot touch '/etc/x': Read-only file system\n\
             cat: /home/u/.ssh/config: Permission denied\n\
             bash: line 1: /usr/y: Read-only file system\n\
             cat: /home/u/.ssh/id_rsa: Permission denied\n";
        assert_eq!(
            explain_denials(output, &ws, cwd, None).unwrap(),
            "The workspace-write sandbox refused: reading /home/u/.ssh/id_rsa, /home/u/.ssh/config (secrets: the sandbox hides the user's credentials); writing /etc/x, /usr/y (outside what the workspace-write sandbox may write). If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it)."
        );
        let many: String = (0..12)
            .map(|i| format!("touch: cannot touch '/etc/f{i}': Read-only file system\n"))
            .collect();
        let note = explain_denials(&many, &ws, cwd, None).unwrap();
        assert!(note.contains("/etc/f7 (outside"), "{note}");
        assert!(!note.contains("/etc/f8"), "{note}");
        assert!(note.contains("; 4 more paths the output names."), "{note}");
        assert_eq!(note.matches("outside what").count(), 1, "{note}");
    }

    /// NET-1: in the session's network namespace a program that connects by itself
    /// fails with no route or no resolver; the note says why and what works.
    #[test]
    fn net_1_a_direct_connection_is_explained() {
        let mut ws = plan(Level::WorkspaceWrite);
        ws.network = true;
        ws.session_net = Some(crate::net::Scope::Session);
        let cwd = Path::new("/ws");
        for line in [
            "OSError: [Errno 101] Network is unreachable",
            "curl: (7) Failed to connect to 192.0.2.1 port 80 after 0 ms: Couldn't connect to server",
            "nc: connect to 203.0.113.9 port 22 (tcp) failed: No route to host",
            "ssh: Could not resolve hostname example.com: Temporary failure in name resolution",
            "curl: (6) Could not resolve host: example.com",
        ] {
            let note = explain_denials(line, &ws, cwd, None).unwrap_or_default();
            assert!(
                note.contains("a direct network connection") && note.contains("HTTP_PROXY"),
                "{line}: {note}"
            );
        }
        // A server of the session's own that is not up: its loopback, not the sandbox.
        for line in [
            "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server",
            "curl: (7) Failed to connect to 127.0.0.1 port 3000 after 0 ms: Couldn't connect to server",
        ] {
            assert_eq!(explain_denials(line, &ws, cwd, None), None, "{line}");
        }
        // With the host's network (a command approved to use it), nothing was refused.
        ws.session_net = None;
        assert_eq!(
            explain_denials(
                "curl: (6) Could not resolve host: example.com",
                &ws,
                cwd,
                None
            ),
            None
        );
    }

    #[test]
    fn sbx_4_quiet_when_nothing_was_refused() {
        let ws = plan(Level::WorkspaceWrite);
        let cwd = Path::new("/ws");
        assert_eq!(explain_denials("all good\n", &ws, cwd, None), None);
        // A permission error on a path the sandbox allows is the project's own.
        assert_eq!(
            explain_denials("cat: /ws/locked: Permission denied", &ws, cwd, None),
            None
        );
        assert_eq!(
            explain_denials(
                "touch: /etc/x: Permission denied",
                &plan(Level::Off),
                cwd,
                None
            ),
            None
        );
    }
}
