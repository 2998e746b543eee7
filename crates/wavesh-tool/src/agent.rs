//! The tool calls of one agent (the session or a subagent): `Bash`, TaskOutput,
//! TaskStop, notifications and the host's task listing. Both [`crate::Session`] and
//! [`crate::Subagent`] delegate here.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use wavesh_exec::{
    BackgroundReason, Backgrounded, Ending, Finished, Job, Mode, OnTimeout, Outcome, OutputFile,
    Request, StopCause, StopError, StopOutcome,
};

use crate::config::{ASSISTANT_BUDGET_MS, HostMode};
use crate::input::BashInput;
use crate::permissions::{Prepared, Verdict};
use crate::render::{self, ExitMeaning, ModelOutput};
use crate::results::{
    BashResult, CallContext, TaskInfo, TaskNotification, TaskOutputResult, TaskSnapshot,
    TaskStopResult, ToolError, on_timeout, rfc3339,
};
use crate::shell_state::ShellSelection;
use crate::state::{Owner, Shared};
use crate::task_tools::{
    self, FINISHED_TAIL_BYTES, HOST_TAIL_BYTES, NOTIFICATION_TAIL_CHARS, RUNNING_HEAD_BYTES,
    Retrieval, TASK_STOP_TIMEOUT_MS, TaskOutputInput,
};

/// What the model is shown of a sandboxed command's output, by one path whether the
/// command ended in the foreground or is read back as a task (TaskOutput, its
/// notification, the host's tail): scrubbed values masked (SBX-2), what the sandbox
/// refused (SBX-4) and the guarantees this machine lacks (SBX-5). The output files the
/// model is told to read are masked on disk once the command has ended.
#[derive(Clone, Copy)]
pub(crate) struct ModelView<'a>(Option<&'a wavesh_exec::SandboxOutcome>);

impl<'a> ModelView<'a> {
    pub(crate) fn of_job(job: &'a Job) -> ModelView<'a> {
        ModelView(job.sandbox().map(Arc::as_ref))
    }

    /// `text` with the scrubbed values masked.
    pub(crate) fn mask(self, text: &str) -> String {
        match self.0 {
            Some(sandbox) => wavesh_exec::sandbox::mask_scrubbed(text, &sandbox.scrubbed),
            None => text.to_owned(),
        }
    }

    /// Masks the scrubbed values in the output file at `path`, which the command no
    /// longer writes; a failure is logged (what is read of it is masked anyway).
    fn mask_file(self, path: &Path) {
        let Some(sandbox) = self.0 else {
            return;
        };
        if let Err(error) = wavesh_exec::sandbox::mask_file(path, &sandbox.scrubbed) {
            tracing::warn!(path = %path.display(), %error, "cannot mask the scrubbed values in an output file");
        }
    }

    /// How many bytes to read beyond a cut of a file the command is still writing, so
    /// that a value across the cut is masked whole.
    fn margin(self) -> u64 {
        self.0
            .map_or(0, |sandbox| sandbox.scrubbed.longest() as u64)
    }

    /// What the sandbox refused in `output` and the guarantees that are missing.
    fn notes(self, output: &str) -> Vec<String> {
        self.denial_note(output)
            .into_iter()
            .chain(self.network_note(output))
            .chain(self.missing_note())
            .collect()
    }

    /// What the sandbox refused in `output`, if anything.
    fn denial_note(self, output: &str) -> Option<String> {
        let sandbox = self.0?;
        let final_cwd = sandbox
            .final_cwd
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        wavesh_exec::sandbox::explain_denials(
            output,
            &sandbox.plan,
            &sandbox.cwd,
            final_cwd.as_deref(),
        )
    }

    /// The hosts the session's proxy refused while the command ran (SBX-4, NET-2).
    fn network_note(self, output: &str) -> Option<String> {
        self.0?.network.as_ref()?.note(output)
    }

    pub(crate) fn missing_note(self) -> Option<String> {
        let sandbox = self.0?;
        let notes: Vec<String> =
            wavesh_exec::sandbox::missing_note(sandbox.plan.level, &sandbox.missing)
                .into_iter()
                // SBX-5: a cache left read-only is named (SBX-8).
                .chain(wavesh_exec::sandbox::read_only_caches_note(
                    &sandbox.plan.views,
                ))
                // SBX-9: what became of its git config changes.
                .chain(
                    sandbox
                        .after_exit
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .iter()
                        .cloned(),
                )
                .collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    /// A page of a file the command may still be writing, its ends moved so that no
    /// scrubbed value is cut: an end inside one moves before it, a start inside one
    /// moves back to its first byte (the page then shows it masked whole).
    fn page(
        self,
        path: &Path,
        page: task_tools::OutputPage,
        max: u64,
    ) -> std::io::Result<task_tools::PageRead> {
        let read = task_tools::read_page(path, page, max)?;
        let Some(sandbox) = self.0.filter(|s| !s.scrubbed.is_empty()) else {
            return Ok(read);
        };
        let crossing = |at: u64| -> std::io::Result<Option<(u64, u64)>> {
            let reach = sandbox.scrubbed.longest() as u64;
            let from = at.saturating_sub(reach);
            let mut file = std::fs::File::open(path)?;
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(from))?;
            let mut window = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(file, reach * 2), &mut window)?;
            Ok(sandbox.scrubbed.values.iter().find_map(|(_, value)| {
                let value = value.as_bytes();
                window
                    .windows(value.len())
                    .enumerate()
                    .map(|(i, w)| (from + i as u64, w))
                    .find(|(start, w)| {
                        *w == value && *start < at && start + value.len() as u64 > at
                    })
                    .map(|(start, _)| (start, start + value.len() as u64))
            }))
        };
        let mut start = read.start;
        let mut end = read.end;
        if start > 0
            && let Some((value_start, _)) = crossing(start)?
        {
            start = value_start;
        }
        if end < read.total
            && let Some((value_start, value_end)) = crossing(end)?
        {
            // Before the value, unless the page would be empty: then past it.
            end = if value_start > start {
                value_start
            } else {
                value_end
            };
        }
        if (start, end) == (read.start, read.end) {
            return Ok(read);
        }
        task_tools::read_page(
            path,
            task_tools::OutputPage {
                offset: start,
                limit: end - start,
            },
            u64::MAX,
        )
    }
}

/// When and where a command started, for the read-file effects (READ).
struct RunStart {
    cwd: std::path::PathBuf,
    /// The read files and their modification times before a command that may rewrite
    /// them (READ-2).
    read_files: Vec<(
        std::path::PathBuf,
        Option<std::time::SystemTime>,
        crate::read_state::ReadRecord,
    )>,
}

pub(crate) struct Agent<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) owner: &'a Owner,
}

impl<'a> Agent<'a> {
    pub(crate) fn new(shared: &'a Shared, owner: &'a Owner) -> Agent<'a> {
        Agent { shared, owner }
    }

    pub(crate) async fn bash(
        &self,
        input: BashInput,
        ctx: &CallContext,
        prepared: Option<Prepared>,
    ) -> Result<BashResult, ToolError> {
        // MCP-5: the client's wait started when the call arrived.
        let call_started = std::time::Instant::now();
        let config = &self.shared.config;
        match &self.shared.selection {
            ShellSelection::Stale { was } => return Err(ToolError::StaleShell(was.clone())),
            ShellSelection::Missing { why } => return Err(ToolError::NoShell(why.clone())),
            _ => {}
        }
        if input.run_in_background && config.mode == HostMode::IdleTurn {
            return Err(ToolError::BackgroundRefused);
        }
        if input.tty && config.mode == HostMode::IdleTurn {
            return Err(ToolError::TtyRefused);
        }
        let mut notes = Vec::new();
        let cwd = self.shared.start_dir(self.owner.subagent, &mut notes);
        let prepared = match prepared {
            Some(prepared)
                if prepared.matches(&input.command, &cwd, input.dangerously_disable_sandbox) =>
            {
                prepared
            }
            _ => self
                .shared
                .prepare(&input.command, input.dangerously_disable_sandbox, &cwd),
        };
        let (sandbox, network) = match prepared.verdict_for(ctx.approved) {
            Verdict::Run { level, network } => (*level, *network),
            Verdict::Ask(decision) => return Err(ToolError::NeedsApproval(decision.clone())),
            Verdict::Deny(message) => return Err(ToolError::Denied(message.clone())),
        };
        let timeout_ms = input.timeout_ms.unwrap_or(config.default_timeout_ms);
        let (deadline_ms, reason) = match config.mode {
            HostMode::Assistant if timeout_ms > ASSISTANT_BUDGET_MS => {
                (ASSISTANT_BUDGET_MS, BackgroundReason::AssistantBudget)
            }
            _ => (timeout_ms, BackgroundReason::Timeout),
        };
        // MCP-5: the client gives up at its own budget, counted from the call's arrival
        // (a first call waits for the login environment); the answer must come first.
        let env = self.shared.login_env().await;
        let (deadline_ms, reason, budget_ms) = match config.client_budget_ms {
            Some(budget) if budget < deadline_ms && config.mode != HostMode::IdleTurn => {
                let spent = u64::try_from(call_started.elapsed().as_millis()).unwrap_or(budget);
                (
                    budget.saturating_sub(spent),
                    BackgroundReason::ClientBudget,
                    budget,
                )
            }
            _ => (deadline_ms, reason, deadline_ms),
        };
        let mode = if input.run_in_background {
            Mode::Background
        } else {
            let on_timeout = match (config.mode, reason) {
                (HostMode::IdleTurn, _) => OnTimeout::Kill,
                // Stopping a `sleep` at the client's budget would end a command whose
                // own timeout has not come: it moves like any other (MCP-5).
                (_, BackgroundReason::ClientBudget) => OnTimeout::MoveToBackground(reason),
                _ => on_timeout(&prepared.analysis, &input.command, reason),
            };
            Mode::Foreground {
                timeout: Duration::from_millis(deadline_ms),
                on_timeout,
            }
        };
        // PTY-1: a tty command is a task from the start; the call waits on its terminal.
        let tty = input.tty.then(wavesh_exec::TtySize::default);
        let mode = if tty.is_some() {
            Mode::Background
        } else {
            mode
        };
        let started = RunStart {
            cwd: cwd.clone(),
            read_files: match &self.shared.read_state {
                Some(state)
                    if !input.run_in_background
                        && crate::read_state::may_rewrite(&input.command) =>
                {
                    crate::read_state::snapshot(state.as_ref())
                }
                _ => Vec::new(),
            },
        };
        let request = Request {
            command: input.command.clone(),
            cwd,
            mode,
            env,
            sandbox,
            network,
            roots: self.shared.roots(),
            tty,
        };
        let outcome = self
            .shared
            .executor
            .run(request, &ctx.controls(), &self.owner.tasks)
            .await?;
        let mut result = match outcome {
            Outcome::Backgrounded(backgrounded) => {
                self.shared
                    .remember_description(backgrounded.job.id(), input.description.as_deref());
                if tty.is_some() {
                    let wait = if input.run_in_background {
                        0
                    } else {
                        deadline_ms
                    };
                    let base = self.backgrounded(&backgrounded, budget_ms, notes);
                    self.tty_started(&backgrounded.job, wait, ctx, base).await?
                } else {
                    self.backgrounded(&backgrounded, budget_ms, notes)
                }
            }
            Outcome::Finished(finished) => {
                self.finished(&prepared.analysis, finished, budget_ms, &started, notes)?
            }
        };
        if let Some(note) = self.shared.take_note() {
            result.text = format!("{note}\n{}", result.text);
        }
        tracing::debug!(target: "wavesh_stage", stage = "rendered");
        Ok(result)
    }

    pub(crate) fn backgrounded(
        &self,
        backgrounded: &Backgrounded,
        deadline_ms: u64,
        notes: Vec<String>,
    ) -> BashResult {
        let job = &backgrounded.job;
        let path = job.output_path().to_path_buf();
        let mut text = match backgrounded.reason {
            BackgroundReason::Requested => render::background_explicit(job.id(), &path),
            BackgroundReason::Timeout => render::background_timeout(deadline_ms, job.id(), &path),
            BackgroundReason::AssistantBudget => {
                render::background_assistant(deadline_ms, job.id(), &path)
            }
            BackgroundReason::ClientBudget => {
                render::background_client_budget(deadline_ms, job.id(), &path)
            }
            BackgroundReason::User => render::background_user(job.id(), &path),
        };
        for note in notes
            .into_iter()
            .chain(ModelView::of_job(job).missing_note())
        {
            text.push('\n');
            text.push_str(&note);
        }
        let by_user = backgrounded.reason == BackgroundReason::User;
        BashResult {
            text,
            is_error: false,
            success: true,
            exit_code: None,
            interrupted: false,
            status: "backgrounded",
            background_task_id: Some(job.id().to_owned()),
            assistant_auto_backgrounded: matches!(
                backgrounded.reason,
                BackgroundReason::Timeout
                    | BackgroundReason::AssistantBudget
                    | BackgroundReason::ClientBudget
            ),
            backgrounded_by_user: by_user,
            stops_agent_loop: by_user,
            output_path: Some(path.clone()),
            task: Some(TaskSnapshot {
                task_id: job.id().to_owned(),
                status: "running",
                started_at: rfc3339(job.started_at()),
                pid: job.pid(),
                pgid: job.pgid(),
                output_path: path,
            }),
            return_code_interpretation: None,
            cwd: self.shared.cwd(),
            image: None,
            waiting_for_input: None,
        }
    }

    fn finished(
        &self,
        analysis: &wavesh_parse::Analysis,
        finished: Finished,
        deadline_ms: u64,
        started: &RunStart,
        mut notes: Vec<String>,
    ) -> Result<BashResult, ToolError> {
        let code = finished.status.code();
        let succeeded = finished.ending == Ending::Exited && code == 0;
        // OUT-4: a stdout that is one image data URL is shown as the image.
        let image = if finished.ending == Ending::Exited {
            crate::image_output::image_from_output(&finished.output)
        } else {
            None
        };
        if let Some(image) = image {
            if !self.owner.subagent
                && let Some(dir) = &finished.cwd_after
            {
                notes.extend(self.shared.adopt_cwd(dir));
            }
            let mut result = self.completed_result(
                notes.join("\n"),
                code != 0,
                code,
                finished.ending,
                None,
                None,
            );
            result.image = Some(image);
            return Ok(result);
        }
        let meaning = match finished.ending {
            Ending::Exited => render::exit_meaning(analysis, code),
            // A command ended by us has no exit-code meaning of its own.
            _ => ExitMeaning::Expected(""),
        };
        let view = ModelView(finished.sandbox.as_deref());
        // The file is masked before anything is read from it: a preview cut, or the
        // file itself when its path is shown, never holds part of a value.
        view.mask_file(finished.output.path());
        let output = render::read_output(&finished.output, self.shared.config.max_output_chars)
            .map_err(|source| ToolError::Output {
                path: finished.output.path().to_path_buf(),
                source,
            })?;
        let mut lines: Vec<String> = Vec::new();
        let is_error = match (&meaning, finished.ending) {
            (ExitMeaning::Error { .. }, Ending::Exited) => {
                lines.push(format!("Exit code {code}"));
                true
            }
            (_, Ending::Aborted | Ending::OutputCap) => true,
            _ => false,
        };
        // PROC-1: say which limit ended it, not only the signal.
        let is_error = match &finished.limit {
            Some(limit) => {
                lines.push(format!("Note: {limit}."));
                true
            }
            None => is_error,
        };
        let gh_note;
        let printed;
        let output_path = match output {
            ModelOutput::Inline(text) => {
                gh_note = crate::gh_limit::reminder(analysis, &text);
                let text = text.trim_end_matches(['\n', '\r']);
                printed = !text.is_empty();
                if printed {
                    lines.push(text.to_owned());
                }
                if succeeded && let Some(state) = &self.shared.read_state {
                    crate::read_state::record_reads(analysis, &started.cwd, state.as_ref());
                }
                None
            }
            ModelOutput::Persisted { envelope, .. } => {
                printed = true;
                gh_note = crate::gh_limit::reminder(analysis, &envelope);
                lines.push(envelope);
                Some(finished.output.keep())
            }
        };
        if succeeded
            && let Some(stale) = crate::read_state::stale_message(
                &started.read_files,
                self.shared.config.read_tool(),
            )
        {
            notes.push(stale);
        }
        if let Some(reminder) = gh_note {
            notes.push(reminder.to_owned());
        }
        let mut interpretation = None;
        match meaning {
            ExitMeaning::Expected(message) if code != 0 && !message.is_empty() => {
                // The meaning (OUT-3) stands in for an output the command did not print;
                // after one it would read as the command's own last line (`grep -c x`
                // prints `0` and exits 1: GNU's output is `0` alone).
                if !printed {
                    lines.push(message.to_owned());
                }
                interpretation = Some(message.to_owned());
            }
            ExitMeaning::Error { hint: Some(hint) } => lines.push(hint.to_owned()),
            _ => {}
        }
        match finished.ending {
            Ending::Exited => {}
            Ending::KilledAtTimeout => lines.push(render::timeout_killed(deadline_ms)),
            Ending::Aborted => lines.push(render::ABORTED.to_owned()),
            Ending::OutputCap => lines.push(render::output_cap_stopped(
                self.shared.config.output_cap_bytes.unwrap_or_default(),
            )),
        }
        if !self.owner.subagent
            && let Some(dir) = &finished.cwd_after
        {
            notes.extend(self.shared.adopt_cwd(dir));
        }
        notes.extend(view.notes(&lines.join("\n")));
        lines.extend(notes);
        let text = if lines.is_empty() {
            "(no output)".to_owned()
        } else {
            lines.join("\n")
        };
        // SBX-2: a credential the command found elsewhere is not shown to the model.
        let text = view.mask(&text);
        Ok(self.completed_result(
            text,
            is_error,
            code,
            finished.ending,
            output_path,
            interpretation,
        ))
    }

    fn completed_result(
        &self,
        text: String,
        is_error: bool,
        code: i32,
        ending: Ending,
        output_path: Option<std::path::PathBuf>,
        interpretation: Option<String>,
    ) -> BashResult {
        BashResult {
            text,
            is_error,
            success: !is_error,
            exit_code: Some(code),
            interrupted: ending != Ending::Exited,
            status: "completed",
            background_task_id: None,
            assistant_auto_backgrounded: false,
            backgrounded_by_user: false,
            stops_agent_loop: false,
            output_path,
            task: None,
            return_code_interpretation: interpretation,
            cwd: self.shared.cwd(),
            image: None,
            waiting_for_input: None,
        }
    }

    /// The task with this id, or the error that names it (unknown or expired).
    pub(crate) fn find(&self, id: &str) -> Result<Arc<Job>, ToolError> {
        match self.owner.tasks.get(id) {
            Some(job) => Ok(job),
            None if self.shared.is_expired(id) => Err(ToolError::ExpiredTask(id.to_owned())),
            None => Err(ToolError::UnknownTask(id.to_owned())),
        }
    }

    /// TASK-1..3. The order at the end matters: project the output, check the abort
    /// signal, then mark the task notified — a completion read here is never notified
    /// again, and one that was not fully read is never swallowed.
    pub(crate) async fn task_output(
        &self,
        input: TaskOutputInput,
        ctx: &CallContext,
    ) -> Result<TaskOutputResult, ToolError> {
        let job = self.find(&input.task_id)?;
        let retrieval = if job.status().is_terminal() {
            Retrieval::Success
        } else if !input.block {
            Retrieval::NotReady
        } else if let Some(terminal) = job.terminal() {
            // PTY-3: a tty task also answers when it waits for input.
            let wait = Duration::from_millis(input.timeout_ms);
            match terminal.wait(&job, wait, &ctx.abort).await.0 {
                wavesh_exec::TtyStop::Aborted => return Err(ToolError::Aborted),
                _ if job.status().is_terminal() => Retrieval::Success,
                _ => Retrieval::Timeout,
            }
        } else {
            // Waits for the exit itself rather than polling: the same answers, sooner.
            tokio::select! {
                _ = job.wait() => Retrieval::Success,
                () = tokio::time::sleep(Duration::from_millis(input.timeout_ms)) => {
                    if job.status().is_terminal() { Retrieval::Success } else { Retrieval::Timeout }
                }
                () = ctx.abort.cancelled() => return Err(ToolError::Aborted),
            }
        };
        let view = ModelView::of_job(&job);
        let ended = retrieval == Retrieval::Success;
        if ended {
            // The command no longer writes it: the file named in the answer is masked
            // too, and so is every page read of it from now on.
            view.mask_file(job.output_path());
        }
        let (output, page) = match input.page {
            // MCP-4: exactly the part asked for, at most the text limit.
            Some(page) => {
                let max = self.shared.config.task_max_output_chars as u64;
                let read = if ended {
                    task_tools::read_page(job.output_path(), page, max)
                } else {
                    view.page(job.output_path(), page, max)
                }
                .map_err(|source| ToolError::Output {
                    path: job.output_path().to_path_buf(),
                    source,
                })?;
                (read.text.clone(), Some(read))
            }
            // PTY-3: the screen as a terminal shows it; the raw bytes stay in the file.
            None => match job.terminal() {
                Some(terminal) => {
                    let waiting = terminal.waiting_settled().await;
                    let text =
                        crate::tty::screen_text(&job, terminal, view, &self.shared.config, waiting);
                    (text, None)
                }
                None => (self.project_output(&job, ended, view)?, None),
            },
        };
        if ctx.abort.is_cancelled() {
            return Err(ToolError::Aborted);
        }
        if retrieval == Retrieval::Success {
            job.mark_notified();
        }
        let status = job.status();
        let mut text = view.mask(&task_tools::task_output_text(
            &job,
            retrieval,
            &output,
            page.as_ref(),
        ));
        for note in view.notes(&output) {
            text.push('\n');
            text.push_str(&note);
        }
        Ok(TaskOutputResult {
            text,
            retrieval_status: retrieval.word(),
            task_id: job.id().to_owned(),
            status: status.word(),
            exit_code: job.exit().map(|exit| exit.status.code()),
            output_path: job.output_path().to_path_buf(),
        })
    }

    /// TASK-2: the first 30000 bytes while running, the last 8 MiB after, at most
    /// `task_max_output_chars` characters of it (the tail), with the path when cut. A
    /// head is read with [`ModelView::margin`] more and masked before it is cut; an
    /// ended task's file is masked already.
    fn project_output(
        &self,
        job: &Job,
        ended: bool,
        view: ModelView<'_>,
    ) -> Result<String, ToolError> {
        let path = job.output_path();
        let error = |source| ToolError::Output {
            path: path.to_path_buf(),
            source,
        };
        let total = std::fs::metadata(path).map_err(error)?.len();
        let text = if ended {
            String::from_utf8_lossy(&read_tail(path, FINISHED_TAIL_BYTES).map_err(error)?)
                .into_owned()
        } else {
            let bytes = read_head(path, RUNNING_HEAD_BYTES + view.margin()).map_err(error)?;
            let masked = view.mask(&String::from_utf8_lossy(&bytes));
            let mut cut = masked.len().min(RUNNING_HEAD_BYTES as usize);
            while !masked.is_char_boundary(cut) {
                cut -= 1;
            }
            masked[..cut].to_owned()
        };
        Ok(task_tools::keep_tail(
            &text,
            self.shared.config.task_max_output_chars,
            total,
            path,
        ))
    }

    pub(crate) async fn stop(
        &self,
        id: &str,
        cause: StopCause,
    ) -> Result<TaskStopResult, ToolError> {
        if self.owner.tasks.get(id).is_none() {
            // Unknown or expired: the same words as TaskOutput's.
            self.find(id)?;
        }
        let stop = self.owner.tasks.stop(id, cause);
        let outcome = tokio::time::timeout(Duration::from_millis(TASK_STOP_TIMEOUT_MS), stop)
            .await
            .map_err(|_| ToolError::StopTimedOut(id.to_owned()))?
            .map_err(|StopError::Unknown(id)| ToolError::UnknownTask(id))?;
        let (job, already_finished, leftovers) = match outcome {
            StopOutcome::Stopped(job) => (job, false, None),
            StopOutcome::AlreadyEnded(job) => (job, true, None),
            StopOutcome::LeftoversEnded(job, count) => (job, true, Some(count)),
        };
        let status = job.status();
        let exit_code = job.exit().map(|exit| exit.status.code());
        let text = if already_finished {
            let code = exit_code.map_or_else(String::new, |code| format!(", exit code {code}"));
            let rest = match leftovers {
                None => "nothing to stop.".to_owned(),
                Some(Some(1)) => "1 process it started was still running and was ended.".to_owned(),
                Some(Some(n)) => {
                    format!("{n} processes it started were still running and were ended.")
                }
                Some(None) => "processes it started were still running and were ended.".to_owned(),
            };
            format!(
                "Task {} had already finished ({}{code}); {rest}",
                job.id(),
                task_tools::status_phrase(status)
            )
        } else {
            format!(
                "Stopped task {} and every process it started. Command: {}",
                job.id(),
                job.command()
            )
        };
        Ok(TaskStopResult {
            text,
            task_id: job.id().to_owned(),
            command: job.command().to_owned(),
            already_finished,
            status: status.word(),
            exit_code,
        })
    }

    pub(crate) fn take_notifications(&self) -> Vec<TaskNotification> {
        self.owner
            .tasks
            .take_finished()
            .into_iter()
            .map(|job| {
                let view = ModelView::of_job(&job);
                // The task has ended: its file is masked before its tail is read.
                view.mask_file(job.output_path());
                let tail = read_tail(job.output_path(), (NOTIFICATION_TAIL_CHARS * 4) as u64)
                    .map(|bytes| {
                        last_chars(&String::from_utf8_lossy(&bytes), NOTIFICATION_TAIL_CHARS)
                    })
                    .unwrap_or_default();
                let description = self.shared.description(job.id());
                let mut text = view.mask(&task_tools::notification_text(
                    &job,
                    description.as_deref(),
                    &tail,
                ));
                // Inside the notification, before its end. The missing guarantees are
                // told in the command's own result and its TaskOutput, not here again.
                if let Some(note) = view.denial_note(&tail)
                    && let Some(body) = text.strip_suffix("</task-notification>")
                {
                    text = format!("{body}{note}\n</task-notification>");
                }
                TaskNotification {
                    stopped_by_model: job.stopped() == Some(StopCause::Model),
                    task_id: job.id().to_owned(),
                    status: job.status().word(),
                    exit_code: job.exit().map(|exit| exit.status.code()),
                    output_path: job.output_path().to_path_buf(),
                    text,
                }
            })
            .collect()
    }

    pub(crate) fn list_tasks(&self) -> Vec<TaskInfo> {
        self.owner
            .tasks
            .list()
            .into_iter()
            .map(|job| {
                let status = job.status();
                let exit = job.exit();
                TaskInfo {
                    task_id: job.id().to_owned(),
                    command: job.command().to_owned(),
                    description: self.shared.description(job.id()),
                    status: status.word(),
                    status_detail: task_tools::status_phrase(status),
                    exit_code: exit.as_ref().map(|e| e.status.code()),
                    started_at: rfc3339(job.started_at()),
                    ended_at: exit.map(|e| rfc3339(e.ended_at)),
                    pid: job.pid(),
                    pgid: job.pgid(),
                    output_path: job.output_path().to_path_buf(),
                }
            })
            .collect()
    }

    pub(crate) fn task_tail(&self, id: &str) -> Result<String, ToolError> {
        let job = self.find(id)?;
        let view = ModelView::of_job(&job);
        if job.status().is_terminal() {
            view.mask_file(job.output_path());
        }
        let bytes =
            read_tail(job.output_path(), HOST_TAIL_BYTES + view.margin()).map_err(|source| {
                ToolError::Output {
                    path: job.output_path().to_path_buf(),
                    source,
                }
            })?;
        // Masked before the margin is cut off again, so a value across the cut is whole.
        let masked = view.mask(&String::from_utf8_lossy(&bytes));
        let mut cut = masked.len().saturating_sub(HOST_TAIL_BYTES as usize);
        while !masked.is_char_boundary(cut) {
            cut += 1;
        }
        Ok(masked[cut..].to_owned())
    }
}

fn read_head(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    OutputFile::read_head_of(path, max)
}

fn read_tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    OutputFile::read_tail_of(path, max)
}

fn last_chars(text: &str, n: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_exec::sandbox::{Level, Plan, Scrubbed};

    #[test]
    fn sbx_2_a_page_of_a_running_task_never_cuts_a_scrubbed_value() {
        let outcome = wavesh_exec::SandboxOutcome {
            plan: Plan {
                level: Level::ReadOnly,
                writable_dirs: Vec::new(),
                readable_dirs: Vec::new(),
                sessions_by_mount: None,
                writable_files: Vec::new(),
                read_only: Vec::new(),
                secret_paths: Vec::new(),
                secret_names: Vec::new(),
                scan_dirs: Vec::new(),
                scan_trees: Vec::new(),
                network: false,
                found_secrets: Vec::new(),
                session_net: None,
                views: Default::default(),
            },
            after_exit: Default::default(),
            final_cwd: Default::default(),
            missing: Vec::new(),
            scrubbed: Scrubbed {
                names: Vec::new(),
                values: vec![("T".into(), "secretvalue123".into())],
            },
            cwd: "/".into(),
            network: None,
        };
        let view = ModelView(Some(&outcome));
        let path = std::env::temp_dir().join(format!("wavesh-page-{}", std::process::id()));
        std::fs::write(&path, "aaaa secretvalue123 bbbb").unwrap();
        let page = |offset, limit| {
            let read = view
                .page(&path, task_tools::OutputPage { offset, limit }, 1000)
                .unwrap();
            (view.mask(&read.text), read.start, read.end)
        };
        // An end inside the value moves before it; the next page starts there.
        assert_eq!(page(0, 10), ("aaaa ".to_owned(), 0, 5));
        assert_eq!(page(5, 100), ("[scrubbed $T] bbbb".to_owned(), 5, 24));
        // A start inside it moves back to its first byte.
        assert_eq!(page(10, 100), ("[scrubbed $T] bbbb".to_owned(), 5, 24));
        // A page smaller than the value that starts with it takes it whole.
        assert_eq!(page(5, 3), ("[scrubbed $T]".to_owned(), 5, 19));
        std::fs::remove_file(&path).unwrap();
    }
}
