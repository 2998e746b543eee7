//! Prints the verdict for each argument (a quick way to see why a command is refused).
#![expect(clippy::print_stdout, reason = "a probe program")]

fn main() {
    let ctx = wavesh_policy::ClassifyContext {
        home: "/home/dev".into(),
        cwd: "/work/app".into(),
        ..Default::default()
    };
    for command in std::env::args().skip(1) {
        let verdict = wavesh_policy::check(&command, wavesh_policy::Dialect::Bash, &ctx);
        println!("{command:?} => {} {:?}", verdict.read_only, verdict.reasons);
    }
}
