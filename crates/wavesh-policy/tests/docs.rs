//! docs/readonly.md lists exactly the commands the classifier knows (RO-2: the lists are
//! documented), and the secret list it describes is the one shipped (RO-9).

use std::collections::BTreeSet;
use std::path::PathBuf;

#[test]
fn ro_2_the_documented_lists_are_the_command_lists() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/readonly.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let lists = text.split("## The lists").nth(1).unwrap();
    let mut documented = BTreeSet::new();
    for line in lists.lines().take_while(|l| !l.starts_with("## ")) {
        if let Some(rest) = line.strip_prefix("- **") {
            if rest.starts_with("git**") {
                continue;
            }
            for name in rest.split('`').skip(1).step_by(2) {
                documented.insert(name.to_owned());
            }
        }
    }
    let known: BTreeSet<String> = wavesh_policy::commands::names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        documented, known,
        "docs/readonly.md and the command lists differ"
    );
}

#[test]
fn ro_9_the_documented_secret_list_is_the_shipped_file() {
    let list = wavesh_policy::secrets::secret_patterns();
    assert!(list.len() >= 100, "{} patterns", list.len());
    for needle in [
        ".npmrc",
        ".pypirc",
        ".vault-token",
        "*.tfstate",
        ".envrc",
        ".dev.vars",
        "*.ppk",
    ] {
        assert!(
            list.iter().any(|p| p.pattern.ends_with(needle)),
            "{needle} is not on the list"
        );
    }
}
