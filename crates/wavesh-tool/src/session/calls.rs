//! The tool calls of one agent, written once: a [`Session`] and each [`Subagent`] hold
//! an [`AgentHandle`] (the session's shared state and that agent's own tasks) and reach
//! these calls through it.

use super::*;

/// What a [`Session`] and each of its [`Subagent`]s share, the calls of one agent: the
/// session's state and that agent's own tasks. Both dereference to it, so
/// `session.bash(...)` and `subagent.bash(...)` are the same code.
pub struct AgentHandle {
    pub(crate) shared: Arc<Shared>,
    pub(crate) owner: Owner,
}

impl AgentHandle {
    fn agent(&self) -> Agent<'_> {
        Agent::new(&self.shared, &self.owner)
    }

    /// Validates a raw JSON input and runs it.
    pub async fn bash_json(
        &self,
        input: &serde_json::Value,
        ctx: &CallContext,
    ) -> Result<BashResult, ToolError> {
        let input = parse_bash_input(input)?;
        self.bash(input, ctx).await
    }

    /// Runs a `Bash` call.
    pub async fn bash(&self, input: BashInput, ctx: &CallContext) -> Result<BashResult, ToolError> {
        self.agent().bash(input, ctx, None).await
    }

    /// Runs a `Bash` call with the analysis and decision made for it beforehand
    /// ([`Session::prepare`]); they are made again only if the command, the sandbox
    /// flag or the working directory changed since.
    pub async fn bash_prepared(
        &self,
        input: BashInput,
        prepared: Prepared,
        ctx: &CallContext,
    ) -> Result<BashResult, ToolError> {
        self.agent().bash(input, ctx, Some(prepared)).await
    }

    /// Validates a raw TaskOutput input and runs it.
    pub async fn task_output_json(
        &self,
        input: &serde_json::Value,
        ctx: &CallContext,
    ) -> Result<TaskOutputResult, ToolError> {
        let input = parse_task_output_input(input)?;
        self.task_output(input, ctx).await
    }

    /// TaskOutput (TASK-1..3).
    pub async fn task_output(
        &self,
        input: TaskOutputInput,
        ctx: &CallContext,
    ) -> Result<TaskOutputResult, ToolError> {
        self.agent().task_output(input, ctx).await
    }

    /// Validates a raw TaskInput input and runs it.
    pub async fn task_input_json(
        &self,
        input: &serde_json::Value,
        ctx: &CallContext,
    ) -> Result<crate::TaskInputResult, ToolError> {
        let input = crate::tty::parse_task_input_input(input)?;
        self.task_input(input, ctx).await
    }

    /// TaskInput (PTY-3): types into a tty task's terminal.
    pub async fn task_input(
        &self,
        input: crate::TaskInputInput,
        ctx: &CallContext,
    ) -> Result<crate::TaskInputResult, ToolError> {
        self.agent().task_input(input, ctx).await
    }

    /// PTY-4: what the user must see before text is typed into `task_id`, or `None`
    /// when no approval is needed (see [`crate::tty::InputApproval`]).
    pub fn task_input_approval(&self, task_id: &str) -> Option<crate::tty::InputApproval> {
        self.agent().input_approval(task_id)
    }

    /// PTY-4: the user allowed any input to `task_id` for the rest of the session.
    pub fn allow_task_input(&self, task_id: &str) {
        self.agent().allow_input(task_id);
    }

    /// Validates a raw TaskStop input and runs it.
    pub async fn task_stop_json(
        &self,
        input: &serde_json::Value,
    ) -> Result<TaskStopResult, ToolError> {
        let input = parse_task_stop_input(input)?;
        self.task_stop(input).await
    }

    /// TaskStop (TASK-4): the model stops a task.
    pub async fn task_stop(&self, input: TaskStopInput) -> Result<TaskStopResult, ToolError> {
        self.agent()
            .stop(&input.task_id, wavesh_exec::StopCause::Model)
            .await
    }

    /// The user stops a task from the host's UI; its notification says so (BG-7).
    pub async fn stop_task_by_user(&self, task_id: &str) -> Result<TaskStopResult, ToolError> {
        self.agent()
            .stop(task_id, wavesh_exec::StopCause::User)
            .await
    }

    /// Tasks that ended since the last call, each returned once (BG-7, TASK-3).
    pub fn take_notifications(&self) -> Vec<TaskNotification> {
        self.agent().take_notifications()
    }

    /// This agent's tasks, oldest first (TASK-5).
    pub fn list_tasks(&self) -> Vec<TaskInfo> {
        self.agent().list_tasks()
    }

    /// The last 8192 bytes of a task's output, for the host's UI (TASK-5).
    pub fn task_tail(&self, task_id: &str) -> Result<String, ToolError> {
        self.agent().task_tail(task_id)
    }

    /// Changes whenever a task of this agent is registered or ends: look at
    /// [`Self::take_notifications`] then.
    pub fn subscribe_tasks(&self) -> watch::Receiver<u64> {
        self.owner.tasks.subscribe()
    }

    /// Runs any of the tools by name (aliases included) on a raw JSON input: the one
    /// entry point for hosts and the MCP server.
    pub async fn call_tool(
        &self,
        name: &str,
        input: &serde_json::Value,
        ctx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        self.call_tool_prepared(name, input, ctx, None).await
    }

    /// [`Self::call_tool`], with the Bash call's analysis and decision made
    /// beforehand (an MCP gate's): not made again unless the call changed.
    pub async fn call_tool_prepared(
        &self,
        name: &str,
        input: &serde_json::Value,
        ctx: &CallContext,
        prepared: Option<Prepared>,
    ) -> Result<ToolOutput, ToolError> {
        if name == crate::BASH_TOOL_NAME {
            let input = parse_bash_input(input)?;
            let result = self.agent().bash(input, ctx, prepared).await?;
            let mut output = ToolOutput::of(&result, result.is_error, &result.text);
            output.image = result.image;
            return Ok(output);
        }
        if crate::task_tools::is_task_output(name) {
            let result = self.task_output_json(input, ctx).await?;
            return Ok(ToolOutput::of(&result, false, &result.text));
        }
        if crate::tty::is_task_input(name) {
            let result = self.task_input_json(input, ctx).await?;
            return Ok(ToolOutput::of(&result, false, &result.text));
        }
        if crate::task_tools::is_task_stop(name) {
            let result = self.task_stop_json(input).await?;
            return Ok(ToolOutput::of(&result, false, &result.text));
        }
        if crate::task_tools::is_task_list(name) {
            crate::task_tools::parse_task_list_input(input)?;
            let tasks = self.list_tasks();
            let text = crate::task_tools::task_list_text(&tasks);
            let result = serde_json::json!({"text": text, "tasks": tasks});
            return Ok(ToolOutput::of(&result, false, &text));
        }
        Err(ToolError::UnknownTool(name.to_owned()))
    }

    /// The raw task manager of this agent.
    pub fn tasks(&self) -> &TaskManager {
        &self.owner.tasks
    }
}
