//! Huge output: the host never holds it. 2 GiB of `yes` in the foreground keeps the
//! host's peak RSS under 64 MiB and ends in a correct `<persisted-output>` envelope.

use wavesh_tool::{BashInput, CallContext};

use crate::util::Workspace;

/// The peak resident set of this test process (`VmHWM`), in bytes. nextest runs each test
/// in its own process, so this is the host's own peak.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap();
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kib * 1024
}

#[tokio::test]
async fn out_1_two_gib_of_yes_keeps_the_host_small() {
    const SIZE: u64 = 2 * 1024 * 1024 * 1024;
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &ws.private);
    let result = session
        .bash(
            BashInput::new(format!("yes | head -c {SIZE}")),
            &CallContext::default(),
        )
        .await
        .unwrap();
    let peak = peak_rss();
    let path = result
        .output_path
        .clone()
        .expect("the output was persisted");
    let size = std::fs::metadata(&path).unwrap().len();
    std::fs::remove_file(&path).unwrap();
    println!(
        "2 GiB of output: host peak RSS {:.1} MiB",
        peak as f64 / 1048576.0
    );
    assert!(peak < 64 * 1024 * 1024, "peak RSS {peak} bytes");
    assert_eq!(size, SIZE);
    assert_eq!(result.exit_code, Some(0));
    let text = &result.text;
    assert!(text.starts_with("<persisted-output>\n"), "{}", &text[..200]);
    assert!(
        text.contains(&format!(
            "Output too large ({SIZE} bytes). Full output saved to: {}",
            path.display()
        )),
        "{}",
        &text[..300]
    );
    assert!(text.contains("Preview (first 2000 characters):\ny\ny\n"));
    assert!(
        text.ends_with("y\ny\n</persisted-output>"),
        "{}",
        &text[text.len() - 100..]
    );
    // A preview of 2000 characters each side, not the output.
    assert!(text.len() < 5000, "{} characters inline", text.len());
}
