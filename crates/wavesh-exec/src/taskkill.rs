//! Ending a process tree on Windows (KILL-3/4/5): `taskkill /PID <pid> /T /F`. There is no
//! polite first step — console processes have no window to receive WM_CLOSE, so both
//! steps of the sequence are the same hard kill, and the second reports "not found".
//! The pure parts (exit codes, decoding the console code page) are tested everywhere.

/// What a taskkill run means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskkillOutcome {
    /// The tree was ended.
    Done,
    /// No such process (exit code 128): not an error (KILL-4).
    Gone,
    /// Anything else: logged with the output, then the direct child is killed (KILL-5).
    Failed,
}

/// Interprets taskkill's exit code (`None` when it could not run at all).
pub fn taskkill_outcome(exit_code: Option<i32>) -> TaskkillOutcome {
    match exit_code {
        Some(0) => TaskkillOutcome::Done,
        Some(128) => TaskkillOutcome::Gone,
        _ => TaskkillOutcome::Failed,
    }
}

/// Decodes console output written in the OEM code page `code_page` (GBK on Chinese
/// Windows, Shift_JIS on Japanese, ...). Unknown code pages fall back to lossy UTF-8.
pub fn decode_console_output(bytes: &[u8], code_page: u32) -> String {
    let encoding = match code_page {
        65001 => Some(encoding_rs::UTF_8),
        936 => Some(encoding_rs::GBK),
        54936 => Some(encoding_rs::GB18030),
        950 => Some(encoding_rs::BIG5),
        932 => Some(encoding_rs::SHIFT_JIS),
        949 => Some(encoding_rs::EUC_KR),
        866 => Some(encoding_rs::IBM866),
        874 => Some(encoding_rs::WINDOWS_874),
        1250 => Some(encoding_rs::WINDOWS_1250),
        1251 => Some(encoding_rs::WINDOWS_1251),
        1252 => Some(encoding_rs::WINDOWS_1252),
        1253 => Some(encoding_rs::WINDOWS_1253),
        1254 => Some(encoding_rs::WINDOWS_1254),
        1255 => Some(encoding_rs::WINDOWS_1255),
        1256 => Some(encoding_rs::WINDOWS_1256),
        1257 => Some(encoding_rs::WINDOWS_1257),
        1258 => Some(encoding_rs::WINDOWS_1258),
        20866 => Some(encoding_rs::KOI8_R),
        _ => None,
    };
    match encoding {
        Some(encoding) => encoding.decode(bytes).0.into_owned(),
        None => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The taskkill-based signaller (Windows only).
#[cfg(windows)]
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskkillSignaller;

#[cfg(windows)]
impl TaskkillSignaller {
    fn console_code_page() -> u32 {
        // SAFETY: GetOEMCP takes no arguments and only reads a process-wide setting.
        #[expect(
            unsafe_code,
            reason = "the one Win32 call that tells the console code page"
        )]
        unsafe {
            windows_sys::Win32::Globalization::GetOEMCP()
        }
    }

    fn run(args: &[String]) -> Result<(), crate::kill::SignalError> {
        let output = std::process::Command::new("taskkill").args(args).output();
        let output = match output {
            Ok(output) => output,
            Err(error) => return Err(crate::kill::SignalError::Failed(error)),
        };
        match taskkill_outcome(output.status.code()) {
            TaskkillOutcome::Done => Ok(()),
            TaskkillOutcome::Gone => Err(crate::kill::SignalError::Gone),
            TaskkillOutcome::Failed => {
                let mut text = decode_console_output(&output.stdout, Self::console_code_page());
                text.push_str(&decode_console_output(
                    &output.stderr,
                    Self::console_code_page(),
                ));
                Err(crate::kill::SignalError::Failed(std::io::Error::other(
                    format!(
                        "taskkill {} failed ({}): {}",
                        args.join(" "),
                        output.status,
                        text.trim()
                    ),
                )))
            }
        }
    }
}

#[cfg(windows)]
impl crate::kill::Signaller for TaskkillSignaller {
    fn signal_group(
        &self,
        pgid: i32,
        _signal: crate::kill::KillSignal,
    ) -> Result<(), crate::kill::SignalError> {
        Self::run(&["/PID".into(), pgid.to_string(), "/T".into(), "/F".into()])
    }

    fn signal_process(
        &self,
        pid: i32,
        _signal: crate::kill::KillSignal,
    ) -> Result<(), crate::kill::SignalError> {
        Self::run(&["/PID".into(), pid.to_string(), "/F".into()])
    }

    fn group_exists(&self, pgid: i32) -> bool {
        std::process::Command::new("tasklist")
            .args(["/FI", &format!("PID eq {pgid}"), "/NH"])
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains(&pgid.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_3_exit_codes() {
        assert_eq!(taskkill_outcome(Some(0)), TaskkillOutcome::Done);
        assert_eq!(taskkill_outcome(Some(128)), TaskkillOutcome::Gone);
        assert_eq!(taskkill_outcome(Some(1)), TaskkillOutcome::Failed);
        assert_eq!(taskkill_outcome(None), TaskkillOutcome::Failed);
    }

    #[test]
    fn kill_5_console_output_in_the_system_code_page() {
        // "错误: 没有找到进程 "1234"。" as Chinese Windows prints it, in GBK.
        let (gbk, _, _) = encoding_rs::GBK.encode("错误: 没有找到进程 \"1234\"。");
        assert_eq!(
            decode_console_output(&gbk, 936),
            "错误: 没有找到进程 \"1234\"。"
        );
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("エラー: プロセスが見つかりません");
        assert_eq!(
            decode_console_output(&sjis, 932),
            "エラー: プロセスが見つかりません"
        );
        let (cp1251, _, _) = encoding_rs::WINDOWS_1251.encode("Ошибка: процесс не найден");
        assert_eq!(
            decode_console_output(&cp1251, 1251),
            "Ошибка: процесс не найден"
        );
        assert_eq!(
            decode_console_output("ERROR: ok".as_bytes(), 437),
            "ERROR: ok"
        );
        assert_eq!(decode_console_output("naïve".as_bytes(), 65001), "naïve");
    }
}
