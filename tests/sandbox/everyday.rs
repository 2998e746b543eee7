//! Everyday work still works at `workspace-write` (SBX-1), direct and through the
//! supervisor: each step is a test.

use wavesh_exec::sandbox::Level;

use crate::{Fixture, enforced_or_skip, write};

/// Runs `command` at workspace-write both ways; each run must exit 0 and print `expect`.
async fn works(setup: impl Fn(&Fixture), command: &str, expect: &str) {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        setup(&f);
        let session = f.session(Level::WorkspaceWrite, supervised);
        let result = f.run(&session, command).await;
        assert_eq!(
            result.exit_code,
            Some(0),
            "supervised={supervised}: {}",
            result.text
        );
        assert!(
            result.text.contains(expect),
            "supervised={supervised}: expected {expect:?} in {}",
            result.text
        );
        assert!(
            !result.text.contains("sandbox refused"),
            "supervised={supervised}: {}",
            result.text
        );
        session.shutdown().await;
    }
}

#[tokio::test]
async fn sbx_1_a_build_writes_target() {
    // A make build into target/, as cargo and npm builds write target/ and node_modules/.
    works(
        |f| {
            write(
                &f.ws.join("Makefile"),
                "target/app: src/main.txt\n\tmkdir -p target node_modules/dep\n\tcp src/main.txt target/app\n\techo dep > node_modules/dep/index.js\n",
            )
        },
        "make -s && cat target/app node_modules/dep/index.js",
        "code\ndep",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_cargo_build_writes_target() {
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::util::missing_prerequisite("cargo", "the Rust toolchain on PATH");
        return;
    }
    works(
        |f| {
            write(
                &f.ws.join("Cargo.toml"),
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            );
            write(&f.ws.join("src/main.rs"), "fn main() { println!(\"built\"); }\n");
        },
        "cargo run -q --offline",
        "built",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_git_add_and_commit() {
    works(
        |_| {},
        "git add README.md src && git -c user.name=t -c user.email=t@t commit -qm first && git log --oneline | wc -l && git status --short README.md",
        "1",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_here_documents() {
    works(
        |_| {},
        "cat > gen.txt <<'EOF'\nline one\nEOF\ncat <<EOF | wc -l\n$(seq 1 3)\nEOF\ncat gen.txt",
        "3\nline one",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_mktemp() {
    works(
        |_| {},
        "t=$(mktemp) && echo kept > \"$t\" && cat \"$t\" && d=$(mktemp -d) && touch \"$d/x\" && ls \"$d\"",
        "kept\nx",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_sort_larger_than_its_memory() {
    // sort spills to TMPDIR when the input is larger than its buffer (-S).
    works(
        |_| {},
        "seq 400000 -1 1 > big && sort -S 64K -n big | head -1 && sort -S 64K -n -o sorted big && tail -1 sorted",
        "1\n400000",
    )
    .await;
}

#[tokio::test]
async fn sbx_1_python_writes_in_the_workspace() {
    works(
        |_| {},
        "python3 -c \"open('out.txt', 'w').write('from python')\" && cat out.txt",
        "from python",
    )
    .await;
}

/// POSIX semaphores and shared memory (Python's multiprocessing, headless browsers) work
/// in a `/dev/shm` of the command's own, at both levels, and nothing reaches the host's.
/// Through the supervisor only: a shell spawned directly has no namespace of its own to
/// mount one in, and says so (`sbx_2_host_environ_cannot_be_read`).
#[tokio::test]
async fn sbx_1_shared_memory_in_a_dev_shm_of_its_own() {
    if !crate::isolation_or_skip() {
        return;
    }
    let name = format!("wavesh-shm-{}", crate::util::unique());
    let command = format!(
        "python3 -c \"import multiprocessing as m\nwith m.Pool(2) as p: print(p.map(abs, [-1, -2]))\" && echo in-shm > /dev/shm/{name} && cat /dev/shm/{name}"
    );
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        if !enforced_or_skip(level) {
            continue;
        }
        let f = Fixture::new();
        let session = f.session(level, true);
        let result = f.run(&session, &command).await;
        assert_eq!(result.text, "[1, 2]\nin-shm", "{level}");
        session.shutdown().await;
        assert!(
            !std::path::Path::new("/dev/shm").join(&name).exists(),
            "{level}: the host's /dev/shm was written"
        );
    }
}
