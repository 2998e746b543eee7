//! The `Bash` tool's description and input schema (SCHEMA-3, SCHEMA-5, SCHEMA-7).
//!
//! The maximum timeout appears in the description and in the `timeout` parameter, both
//! from [`ToolConfig::max_timeout_ms`]; the default is stated separately. Host tools are
//! named only when the host says it has them.

use serde_json::Value;

use crate::config::ToolConfig;
use crate::render::seconds;
use crate::sandbox_text::SandboxFacts;

/// The tool's name.
pub const BASH_TOOL_NAME: &str = "Bash";

/// SCHEMA-5, verbatim.
pub const CWD_SENTENCE: &str = "Working directory persists between calls, but prefer absolute paths — cd in a compound command can trigger a permission prompt.";

/// SCHEMA-5, verbatim.
pub const BACKGROUND_SENTENCE: &str = "run_in_background runs the command detached: it keeps running across turns and re-invokes you when it exits. No & needed.";

/// When to use `tty` and when not (PTY-1).
pub const TTY_PARAGRAPH: &str = "tty: true runs the command in a terminal (120x40, TERM=xterm-256color) as a task: the call returns when the program ends, when it waits for terminal input (read from the kernel, never guessed from the text), or at the timeout, with the screen, the task ID and waitingForInput. Answer with TaskInput (\\n is Enter, \\u0003 Ctrl-C, \\u0004 Ctrl-D); read the screen with TaskOutput; stop it with TaskStop. Use it only for what has no non-interactive form: a prompt you must answer, a REPL, a debugger, a TUI. Do not use it for anything that can run non-interactively (flags such as --yes, a file or here-doc as input, CI=1, git without -i, PAGER=cat): that is faster and leaves no task behind.\n\n";

fn minutes(ms: u64) -> String {
    let minutes = ms as f64 / 60_000.0;
    if minutes.fract() == 0.0 {
        format!("{minutes:.0} minutes")
    } else {
        format!("{}s", seconds(ms))
    }
}

/// "600000 ms (10 minutes)".
fn amount(ms: u64) -> String {
    format!("{ms} ms ({})", minutes(ms))
}

/// The host tools that replace a shell habit, in the order they are recommended.
const REPLACEMENTS: &[(&str, &str)] = &[
    ("Read", "read files with Read, not cat, head or tail"),
    ("Edit", "edit files with Edit, not sed or awk"),
    (
        "Write",
        "create files with Write, not echo or cat with a here-doc",
    ),
    ("Glob", "find files by name with Glob"),
    ("Grep", "search file contents with Grep"),
];

/// The description of the `Bash` tool, its sandbox paragraph from `config` alone (a
/// session states its actual policy: [`crate::Session::tool_definitions`]).
pub fn bash_description(config: &ToolConfig) -> String {
    bash_description_with(config, &SandboxFacts::from_settings(&config.sandbox))
}

/// The description of the `Bash` tool, stating the sandbox of `sandbox`.
pub fn bash_description_with(config: &ToolConfig, sandbox: &SandboxFacts) -> String {
    let mut text = String::from(
        "Runs a shell command in a fresh bash or zsh process and returns its output (stdout and stderr together) and exit code once it ends.\n\n",
    );
    text.push_str(CWD_SENTENCE);
    text.push_str(
        " Nothing else carries over: environment variables, aliases and functions set in one call are gone in the next.\n\n",
    );
    text.push_str(
        "Standard input is /dev/null: a command that waits for input (cat or grep without a file, read, pagers, editors, prompts) gets end-of-file at once. Pass files as arguments and use non-interactive flags.\n\n",
    );
    text.push_str(TTY_PARAGRAPH);
    text.push_str(&format!(
        "Timeout: `timeout` is in milliseconds; the default is {}, the maximum {}. A command still running at its timeout is moved to the background and keeps running: you get its task ID and output file. A command that starts with sleep is stopped at its timeout instead.\n\n",
        amount(config.default_timeout_ms),
        amount(config.max_timeout_ms),
    ));
    if let Some(budget) = config.client_budget_ms {
        // MCP-5: the client gives up on a call past its own wait limit.
        text.truncate(text.trim_end().len());
        text.push_str(&format!(
            " The answer comes within {}s whatever the timeout: a command still running then is moved to the background (one that starts with sleep too) and keeps running.\n\n",
            seconds(budget)
        ));
    }
    text.push_str(BACKGROUND_SENTENCE);
    text.push_str(" Use it for servers, watchers and long builds or test suites.\n\n");
    text.push_str(&format!(
        "Output over {} characters is saved to a file: you get its path, its size and its first and last 2000 characters.\n\n",
        config.max_output_chars
    ));
    let read_advice = config
        .read_tool()
        .filter(|read| *read != "Read")
        .map(|read| format!("read files with {read}, not cat, head or tail"));
    let replacements: Vec<&str> = REPLACEMENTS
        .iter()
        .filter(|(tool, _)| {
            config.host_tools.iter().any(|have| have == tool)
                || (*tool == "Read" && config.read_tool() == Some("Read"))
        })
        // With shadowing on, searching inside Bash is recommended instead (SCHEMA-5).
        .filter(|(tool, _)| !(config.search_shadowing && matches!(*tool, "Grep" | "Glob")))
        .map(|(_, advice)| *advice)
        .chain(read_advice.as_deref())
        .collect();
    if !replacements.is_empty() {
        text.push_str(&format!(
            "Prefer the dedicated tools to shell commands for file work: {}.\n\n",
            replacements.join("; ")
        ));
    }
    if config.search_shadowing {
        text.push_str(
            "Search with grep and find inside commands: grep skips files listed in .gitignore, VCS directories and binary files, and prints paths without ./ (grep -rn PATTERN DIR, find DIR -name GLOB).\n\n",
        );
    }
    text.push_str(
        "Commands: quote paths that contain spaces; chain dependent steps with &&, independent ones with ;.\n\n\
         Git:\n\
         - Never use interactive flags such as git rebase -i or git add -i: there is no terminal to answer them.\n\
         - Use gh for everything on GitHub: issues, pull requests, checks, releases.\n\
         - Commit or push only when the user asks you to.\n\
         - On the default branch, create a branch before committing.",
    );
    text.push_str("\n\n");
    text.push_str(&crate::sandbox_text::sandbox_paragraph(sandbox));
    text
}

// The `Bash` input as a Rust type: its schema is derived from this (the parser in
// `input.rs` checks the same fields by hand, to name every mistake). Optional fields use
// `serde(default)` so the schema says "not required" without allowing `null`.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a schema source, never constructed")]
struct BashParams {
    /// The command to run
    command: String,
    /// Optional timeout in milliseconds (the description is set from the configuration)
    #[serde(default)]
    timeout: f64,
    /// What the command does, in 5-10 words, in the active voice ("Lists files in src")
    #[serde(default)]
    description: String,
    /// Run the command as a background task and return at once with its ID and output file
    #[serde(default)]
    run_in_background: bool,
    /// Run outside the sandbox; such a call always needs approval
    #[serde(rename = "dangerouslyDisableSandbox", default)]
    dangerously_disable_sandbox: bool,
    /// Run in a terminal as a task, for prompts, REPLs and TUIs only; answer with TaskInput
    #[serde(default)]
    tty: bool,
}

/// The input schema of a Rust type, as an MCP client wants it: no `$schema`, no title.
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> Value {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        for key in ["$schema", "title", "description"] {
            object.remove(key);
        }
        // `format: double` and defaults say nothing a model needs.
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            for property in properties.values_mut() {
                if let Some(property) = property.as_object_mut() {
                    property.remove("format");
                    property.remove("default");
                }
            }
        }
    }
    value
}

/// The JSON schema of the `Bash` input, derived from `BashParams`. Booleans are typed
/// as booleans; the strings of SCHEMA-2 are accepted anyway. `timeout` has no `maximum`
/// keyword: values above the advertised maximum run as given (SCHEMA-4). Its description
/// states the configured default and maximum (SCHEMA-3).
pub fn bash_input_schema(config: &ToolConfig) -> Value {
    let mut schema = schema_of::<BashParams>();
    schema["properties"]["timeout"]["description"] = Value::String(format!(
        "Optional timeout in milliseconds: default {}, maximum {}. 0 does not mean no timeout: it moves the command to the background at once",
        amount(config.default_timeout_ms),
        amount(config.max_timeout_ms)
    ));
    schema
}

/// A tool as a host or MCP client lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: &'static str,
    /// A human-readable title.
    pub title: &'static str,
    /// Its description.
    pub description: String,
    /// Its JSON input schema.
    pub input_schema: Value,
}

/// The tools wavesh offers: `Bash`, `TaskOutput`, `TaskStop` and `TaskList` (aliases are
/// accepted by [`crate::Session::call_tool`](crate::AgentHandle::call_tool) but not listed).
pub fn tool_definitions(config: &ToolConfig) -> Vec<ToolDefinition> {
    tool_definitions_with(config, &SandboxFacts::from_settings(&config.sandbox))
}

/// The tools, the Bash description stating the sandbox of `sandbox`.
pub fn tool_definitions_with(config: &ToolConfig, sandbox: &SandboxFacts) -> Vec<ToolDefinition> {
    use crate::task_tools as tasks;
    vec![
        ToolDefinition {
            name: BASH_TOOL_NAME,
            title: "Bash",
            description: bash_description_with(config, sandbox),
            input_schema: bash_input_schema(config),
        },
        ToolDefinition {
            name: tasks::TASK_OUTPUT_TOOL_NAME,
            title: "Task output",
            description: tasks::task_output_description(config.read_tool()),
            input_schema: tasks::task_output_schema(),
        },
        ToolDefinition {
            name: crate::tty::TASK_INPUT_TOOL_NAME,
            title: "Type into a task",
            description: crate::tty::task_input_description(),
            input_schema: crate::tty::task_input_schema(),
        },
        ToolDefinition {
            name: tasks::TASK_STOP_TOOL_NAME,
            title: "Stop task",
            description: tasks::task_stop_description(),
            input_schema: tasks::task_stop_schema(),
        },
        ToolDefinition {
            name: tasks::TASK_LIST_TOOL_NAME,
            title: "List tasks",
            description: tasks::task_list_description(),
            input_schema: tasks::task_list_schema(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn timeout_description(config: &ToolConfig) -> String {
        bash_input_schema(config)["properties"]["timeout"]["description"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn schema_3_same_maximum_in_both_places_and_default_separate() {
        let config = ToolConfig::default();
        let description = bash_description(&config);
        let timeout = timeout_description(&config);
        for text in [&description, &timeout] {
            assert!(text.contains("maximum 600000 ms (10 minutes)"), "{text}");
            assert!(
                text.contains("default 120000 ms (2 minutes)")
                    || text.contains("default is 120000 ms (2 minutes)"),
                "{text}"
            );
            assert!(!text.contains("maximum 120000"), "{text}");
        }
    }

    #[test]
    fn schema_6_max_from_env_changes_both_places() {
        let config = ToolConfig::default()
            .with_env(|key| (key == "BASH_MAX_TIMEOUT_MS").then(|| "900000".into()));
        assert!(bash_description(&config).contains("maximum 900000 ms (15 minutes)"));
        assert!(timeout_description(&config).contains("maximum 900000 ms (15 minutes)"));
    }

    #[test]
    fn schema_5_verbatim_sentences_and_git_section() {
        let text = bash_description(&ToolConfig::default());
        assert!(text.contains(CWD_SENTENCE));
        assert!(text.contains(BACKGROUND_SENTENCE));
        for needle in [
            "git rebase -i",
            "git add -i",
            "gh ",
            "only when the user asks",
            "create a branch",
        ] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(!text.contains("\n\n\n"));
    }

    #[test]
    fn schema_7_names_only_tools_the_host_has() {
        let text = bash_description(&ToolConfig::default());
        for tool in [
            "Read",
            "Edit",
            "Write",
            "Glob",
            "Grep",
            "ScheduleWakeup",
            "/tasks",
        ] {
            assert!(
                !text.contains(&format!(" {tool} ")) && !text.contains(&format!("with {tool}")),
                "{tool}"
            );
        }
        let config = ToolConfig {
            host_tools: vec!["Read".into()],
            ..ToolConfig::default()
        };
        let text = bash_description(&config);
        assert!(text.contains("read files with Read, not cat, head or tail"));
        assert!(!text.contains("with Edit"));
        // MCP-4: a host read tool by another name is named by that name, and only then.
        let config = ToolConfig {
            read_tool: Some("read_file".into()),
            ..ToolConfig::default()
        };
        let text = bash_description(&config);
        assert!(
            text.contains("read files with read_file, not cat"),
            "{text}"
        );
        assert!(!text.contains(" Read"), "{text}");
    }

    #[test]
    fn schema_5_search_shadowing_recommends_grep_inside_bash() {
        let mut config = ToolConfig {
            host_tools: vec!["Read".into(), "Grep".into(), "Glob".into()],
            ..ToolConfig::default()
        };
        let off = bash_description(&config);
        assert!(off.contains("search file contents with Grep"), "{off}");
        assert!(!off.contains("Search with grep"), "{off}");
        config.search_shadowing = true;
        let on = bash_description(&config);
        assert!(
            on.contains("Search with grep and find inside commands"),
            "{on}"
        );
        assert!(
            !on.contains("with Grep") && !on.contains("with Glob"),
            "{on}"
        );
        assert!(on.contains("read files with Read"), "{on}");
    }

    #[test]
    fn schema_1_schema_is_strict() {
        let schema = bash_input_schema(&ToolConfig::default());
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["command"]));
        assert!(schema["properties"]["timeout"].get("maximum").is_none());
    }
}
