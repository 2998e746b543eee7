//! Fuzzes `analyze` and the classifier: no input may panic, and whatever is approved as
//! read-only must be permission safe and seen the same way by both parsers (RO-10).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wavesh_parse::{Dialect, analyze, second_opinion};
use wavesh_policy::{ClassifyContext, classify};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let ctx = ClassifyContext {
        home: "/home/dev".into(),
        cwd: "/work/app".into(),
        // The text alone: fuzz inputs must not walk the machine's file system.
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    };
    for dialect in [Dialect::Bash, Dialect::Zsh] {
        let analysis = analyze(source, dialect);
        let verdict = classify(source, &analysis, &ctx);
        if verdict.read_only {
            assert!(analysis.is_permission_safe(), "approved but not permission safe: {source:?}");
            assert_eq!(second_opinion(source, &analysis), Ok(()), "approved but the parsers disagree: {source:?}");
            assert!(verdict.reasons.is_empty());
        } else {
            assert!(!verdict.reasons.is_empty(), "refused without a reason: {source:?}");
        }
    }
});
