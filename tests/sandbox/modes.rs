//! SBX-5 in every kind of user's machine: in each mode `scripts/test` runs this suite in
//! (root; an ordinary user; an ordinary user refused user namespaces), the guarantees
//! `wavesh doctor` reports missing, those a command's result names, and those
//! `docs/sandbox.md` lists for the mode are the same.

use std::collections::BTreeSet;

use wavesh_exec::sandbox::{Level, support};

use crate::Fixture;

/// The missing guarantees `docs/sandbox.md` lists for `mode` and `level`.
pub fn documented_missing(mode: wavesh_testkit::Mode, level: Level) -> BTreeSet<String> {
    wavesh_testkit::documented_missing(mode, level.name())
}

fn set_of(list: &str) -> BTreeSet<String> {
    wavesh_testkit::guarantee_set(list)
}

/// What `wavesh doctor` prints for `level`: "LEVEL: every guarantee holds" or
/// "LEVEL: missing A; B".
fn doctor_missing(level: Level) -> BTreeSet<String> {
    let output = std::process::Command::new(crate::util::WAVESH)
        .arg("doctor")
        .output()
        .unwrap();
    assert!(output.status.success(), "wavesh doctor failed: {output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let prefix = format!("{level}: ");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("wavesh doctor says nothing of {level}:\n{text}"));
    if line == "every guarantee holds" {
        return BTreeSet::new();
    }
    set_of(
        line.strip_prefix("missing ")
            .unwrap_or_else(|| panic!("wavesh doctor, {level}: {line}")),
    )
}

/// The note a supervised command's result carries (SBX-5), as a set.
async fn note_missing(f: &Fixture, level: Level) -> BTreeSet<String> {
    let session = f.session(level, true);
    let result = f.run_raw(&session, "echo ran").await;
    session.shutdown().await;
    let prefix = format!("Sandbox ({level}) is incomplete on this machine; missing: ");
    let note = result.text.lines().find_map(|line| {
        line.strip_prefix(&prefix)
            .map(|rest| rest.trim_end_matches('.').to_owned())
    });
    assert!(
        result.text.lines().any(|line| line == "ran"),
        "{level}: the command did not run: {}",
        result.text
    );
    note.map_or_else(BTreeSet::new, |list| set_of(&list))
}

#[tokio::test]
async fn sbx_5_degraded_modes_are_reported_as_documented() {
    let mode = wavesh_testkit::mode();
    let f = Fixture::new();
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        let documented = documented_missing(mode, level);
        let probed: BTreeSet<String> = support()
            .missing(level)
            .into_iter()
            .map(|g| g.describe().to_owned())
            .collect();
        let doctor = doctor_missing(level);
        let note = note_missing(&f, level).await;
        assert_eq!(
            doctor,
            documented,
            "mode {}, {level}: wavesh doctor (left) and docs/sandbox.md (right) disagree",
            mode.name()
        );
        assert_eq!(
            note,
            documented,
            "mode {}, {level}: the result note (left) and docs/sandbox.md (right) disagree",
            mode.name()
        );
        assert_eq!(
            probed,
            documented,
            "mode {}, {level}: the probe",
            mode.name()
        );
    }
}

/// SBX-5 for SBX-7's mechanism: what `wavesh doctor` says hides other sessions' private
/// directories is what a command sees. With a mount (process isolation), the directory
/// of every session's holds this session's alone; with Landlock only (no user
/// namespaces for this user), the other session's name is listed but nothing in it
/// can be read.
#[tokio::test]
async fn sbx_5_doctor_says_how_other_sessions_are_hidden() {
    if !crate::enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let output = std::process::Command::new(crate::util::WAVESH)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "wavesh doctor failed: {output:?}");
    let doctor: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let said = doctor["other_sessions_hidden_by"]
        .as_str()
        .unwrap()
        .to_owned();
    let f = Fixture::new();
    let mine = f.session(Level::ReadOnly, true);
    let other = f.session(Level::ReadOnly, true);
    f.run(&other, "echo other").await;
    let base = mine.private_dir().parent().unwrap().to_path_buf();
    let name = |s: &wavesh_tool::Session| {
        s.private_dir()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let listed = f
        .run(
            &mine,
            &format!(
                "ls -A {}; cat {}/* 2>/dev/null | head -c 100; true",
                base.display(),
                other.private_dir().display()
            ),
        )
        .await;
    let names: BTreeSet<&str> = listed.text.split_whitespace().collect();
    match said.as_str() {
        "mount" => assert_eq!(
            names,
            BTreeSet::from([name(&mine).as_str()]),
            "doctor says a mount hides them: {}",
            listed.text
        ),
        "landlock" => {
            assert!(
                names.contains(name(&other).as_str()),
                "doctor says Landlock (names stay listed): {}",
                listed.text
            );
            assert!(!listed.text.contains("other"), "{}", listed.text);
        }
        _ => panic!("wavesh doctor: other sessions hidden by {said} on Linux with Landlock"),
    }
    mine.shutdown().await;
    other.shutdown().await;
}
