//! Images (OUT-4), the gh rate-limit reminder (OUT-5) and the read-file state (READ)
//! through real commands.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

mod common;

use std::io::Cursor;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use common::Fixture;
use wavesh_tool::read_state::{MemoryReadState, ReadFileState};
use wavesh_tool::{BashInput, CallContext, Session, ToolConfig};

/// A session of a host with a Read tool (READ-2's text names it).
fn session_with_reads(fx: &Fixture) -> (Session, Arc<MemoryReadState>) {
    let state = Arc::new(MemoryReadState::default());
    let mut builder = Session::builder(&fx.root);
    builder
        .private_base(fx.base.join("private"))
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .config(ToolConfig {
            read_tool: Some("Read".into()),
            ..ToolConfig::default()
        })
        .no_login_env()
        .read_state(state.clone());
    (builder.build().unwrap(), state)
}

async fn run(session: &Session, command: &str) -> wavesh_tool::BashResult {
    session
        .bash(BashInput::new(command), &CallContext::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn out_4_a_large_png_data_url_becomes_a_scaled_image() {
    let fx = Fixture::new();
    let image = image::RgbImage::from_fn(4000, 3000, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, 7])
    });
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    std::fs::write(fx.root.join("big.png"), &png).unwrap();
    let result = fx
        .bash("printf 'data:image/png;base64,%s' \"$(base64 -w0 big.png)\"")
        .await;
    let block = result.image.expect("an image block");
    assert_eq!((block.width, block.height), (2000, 1500));
    assert!(block.width.max(block.height) <= 2000);
    assert_eq!(result.text, "", "no text besides the image");

    let corrupt = fx
        .bash("printf 'data:image/png;base64,%s' 'iVBORw0KGgoAAAANSUhEUgAAB'")
        .await;
    assert!(corrupt.image.is_none());
    assert!(corrupt.text.starts_with("data:image/png;base64,"));
}

fn fake_gh(dir: &Path) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\necho 'HTTP 403: API rate limit exceeded for user ID 1.' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn out_5_gh_rate_limit_reminder_once_a_minute() {
    let fx = Fixture::new();
    fake_gh(&fx.root);
    let reminder = wavesh_tool::gh_limit::GH_RATE_LIMIT_REMINDER;
    let first = fx.bash("PATH=\"$PWD/bin:$PATH\" gh pr list").await;
    assert!(first.text.ends_with(reminder), "{}", first.text);
    let second = fx.bash("PATH=\"$PWD/bin:$PATH\" gh pr list").await;
    assert!(!second.text.contains("system-reminder"), "{}", second.text);
    let auth = fx.bash("PATH=\"$PWD/bin:$PATH\" gh auth status").await;
    assert!(!auth.text.contains("system-reminder"));
}

#[tokio::test]
async fn read_1_bash_reads_are_recorded_with_their_ranges() {
    let fx = Fixture::new();
    let (session, state) = session_with_reads(&fx);
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"] {
        std::fs::write(fx.root.join(name), &lines).unwrap();
    }
    run(&session, "cat a.txt").await;
    run(&session, "head -n 5 b.txt").await;
    run(&session, "sed -n '3,9p' c.txt").await;
    run(&session, "grep 'line 7' d.txt").await;
    run(&session, "tail -n 4 f.txt").await;
    let lookup = |name: &str| state.lookup(&fx.root.join(name));
    assert_eq!(lookup("a.txt").unwrap().lines, None);
    assert_eq!(lookup("b.txt").unwrap().lines, Some((1, 5)));
    assert_eq!(lookup("c.txt").unwrap().lines, Some((3, 9)));
    assert_eq!(lookup("d.txt").unwrap().lines, None);
    assert_eq!(lookup("f.txt").unwrap().lines, Some((27, 30)));
    assert!(!lookup("a.txt").unwrap().partial);

    // A pipe, a grep without a match: nothing.
    let (session, state) = session_with_reads(&fx);
    run(&session, "cat e.txt | head").await;
    run(&session, "grep nomatch e.txt").await;
    assert!(state.list().is_empty(), "{:?}", state.list());
}

#[tokio::test]
async fn read_2_a_formatter_that_rewrites_read_files_lists_them() {
    let fx = Fixture::new();
    let (session, _state) = session_with_reads(&fx);
    std::fs::write(fx.root.join("one.js"), "a\n").unwrap();
    std::fs::write(fx.root.join("two.js"), "b\n").unwrap();
    std::fs::write(fx.root.join("untouched.js"), "c\n").unwrap();
    let bin = fx.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("prettier"),
        "#!/bin/sh\nfor f in one.js two.js; do printf 'formatted\\n' > \"$f\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("prettier"), std::fs::Permissions::from_mode(0o755)).unwrap();
    run(&session, "cat one.js").await;
    run(&session, "cat two.js").await;
    run(&session, "cat untouched.js").await;
    let result = run(&session, "./bin/prettier --write .").await;
    let one = fx.root.join("one.js");
    let two = fx.root.join("two.js");
    assert_eq!(
        result.text,
        format!(
            "[This command modified 2 files you've previously read: {}, {}. Call Read before editing.]",
            one.display(),
            two.display()
        )
    );
    // READ-3: a background command records and checks nothing.
    let mut input = BashInput::new("./bin/prettier --write .");
    input.run_in_background = true;
    let background = session.bash(input, &CallContext::default()).await.unwrap();
    assert!(!background.text.contains("previously read"));
}
