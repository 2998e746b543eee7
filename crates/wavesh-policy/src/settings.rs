//! Permission settings in Claude Code's format: `permissions.allow`, `.ask`, `.deny` and
//! `additionalDirectories`, from the user, project and local files and files given by the
//! host (RULE-1, RULE-5). Rules of other tools are kept and ignored; a malformed file is an
//! error naming the file and the position, never a silently dropped rule.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::rules::Rule;

/// Where a rule comes from (RULE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `~/.claude/settings.json`.
    User,
    /// `.claude/settings.json` in the workspace.
    Project,
    /// `.claude/settings.local.json` in the workspace ("always allow" writes here).
    Local,
    /// A file the host named (`--settings`).
    Flag,
}

/// One Bash rule and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    /// The parsed rule.
    pub rule: Rule,
    /// The rule as written.
    pub text: String,
    /// Its level.
    pub level: Level,
    /// The file.
    pub source: PathBuf,
}

/// The merged settings of every level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Allow rules.
    pub allow: Vec<RuleEntry>,
    /// Ask rules.
    pub ask: Vec<RuleEntry>,
    /// Deny rules.
    pub deny: Vec<RuleEntry>,
    /// `permissions.additionalDirectories` of every level, each with the file that
    /// names it.
    pub additional_directories: Vec<(PathBuf, PathBuf)>,
    /// Rules of other tools, kept as written.
    pub other_rules: Vec<String>,
}

/// Why settings could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// Not valid JSON.
    #[error("{path}:{line}:{column}: invalid settings JSON: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// Valid JSON of the wrong shape.
    #[error("{path}: {what}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        what: String,
    },
    /// The file exists but cannot be read.
    #[error("{path}: cannot read settings: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        message: String,
    },
}

impl Settings {
    /// Adds the settings in `text` (the content of `path`) at `level`.
    pub fn add_json(&mut self, text: &str, level: Level, path: &Path) -> Result<(), SettingsError> {
        let value: Value = serde_json::from_str(text).map_err(|error| SettingsError::Json {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })?;
        let shape = |what: String| SettingsError::Shape {
            path: path.to_path_buf(),
            what,
        };
        let Some(object) = value.as_object() else {
            return Err(shape("the settings must be a JSON object".into()));
        };
        let Some(permissions) = object.get("permissions") else {
            return Ok(());
        };
        let Some(permissions) = permissions.as_object() else {
            return Err(shape("`permissions` must be an object".into()));
        };
        for (key, list) in [
            ("allow", &mut self.allow),
            ("ask", &mut self.ask),
            ("deny", &mut self.deny),
        ] {
            let Some(value) = permissions.get(key) else {
                continue;
            };
            let Some(items) = value.as_array() else {
                return Err(shape(format!(
                    "`permissions.{key}` must be an array of rule strings"
                )));
            };
            for (index, item) in items.iter().enumerate() {
                let Some(text) = item.as_str() else {
                    return Err(shape(format!(
                        "`permissions.{key}[{index}]` must be a string, got {item}"
                    )));
                };
                match Rule::parse(text) {
                    Some(rule) => list.push(RuleEntry {
                        rule,
                        text: text.to_owned(),
                        level,
                        source: path.to_path_buf(),
                    }),
                    None if text.trim_start().starts_with("Bash(") => {
                        return Err(shape(format!(
                            "`permissions.{key}[{index}]`: `{text}` is not a valid Bash rule"
                        )));
                    }
                    None => self.other_rules.push(text.to_owned()),
                }
            }
        }
        if let Some(dirs) = permissions.get("additionalDirectories") {
            let Some(dirs) = dirs.as_array() else {
                return Err(shape(
                    "`permissions.additionalDirectories` must be an array of paths".into(),
                ));
            };
            for dir in dirs {
                let Some(dir) = dir.as_str() else {
                    return Err(shape(format!(
                        "`permissions.additionalDirectories` holds {dir}, not a path"
                    )));
                };
                self.additional_directories
                    .push((PathBuf::from(dir), path.to_path_buf()));
            }
        }
        Ok(())
    }

    /// Reads a settings file if it exists.
    pub fn add_file(&mut self, path: &Path, level: Level) -> Result<(), SettingsError> {
        match std::fs::read_to_string(path) {
            Ok(text) => self.add_json(&text, level, path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && level != Level::Flag => {
                Ok(())
            }
            Err(error) => Err(SettingsError::Read {
                path: path.to_path_buf(),
                message: error.to_string(),
            }),
        }
    }

    /// Loads every level: `~/.claude/settings.json`, the workspace's
    /// `.claude/settings.json` and `.claude/settings.local.json`, then `files`. A named
    /// file that is missing is an error; a missing default file is not.
    pub fn load(
        workspace: &Path,
        home: Option<&Path>,
        files: &[PathBuf],
    ) -> Result<Settings, SettingsError> {
        let mut settings = Settings::default();
        if let Some(home) = home {
            settings.add_file(&home.join(".claude/settings.json"), Level::User)?;
        }
        settings.add_file(&workspace.join(".claude/settings.json"), Level::Project)?;
        settings.add_file(&workspace.join(".claude/settings.local.json"), Level::Local)?;
        for file in files {
            settings.add_file(file, Level::Flag)?;
        }
        Ok(settings)
    }
}

/// "Always allow" (RULE-5): appends `rules` to `permissions.allow` of the workspace's
/// `.claude/settings.local.json`, keeping everything else in the file; the file and its
/// directory are created when missing. Returns the file.
pub fn write_always_allow(workspace: &Path, rules: &[String]) -> Result<PathBuf, SettingsError> {
    let path = workspace.join(".claude/settings.local.json");
    let error = |message: String| SettingsError::Read {
        path: path.clone(),
        message,
    };
    let mut value: Value = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| SettingsError::Json {
            path: path.clone(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(serde_json::Map::new()),
        Err(e) => return Err(error(e.to_string())),
    };
    let shape = |what: &str| SettingsError::Shape {
        path: path.clone(),
        what: what.to_owned(),
    };
    let object = value
        .as_object_mut()
        .ok_or_else(|| shape("the settings must be a JSON object"))?;
    let permissions = object
        .entry("permissions")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("`permissions` must be an object"))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| shape("`permissions.allow` must be an array"))?;
    for rule in rules {
        if !allow.iter().any(|existing| existing.as_str() == Some(rule)) {
            allow.push(Value::String(rule.clone()));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| error(e.to_string()))?;
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| error(e.to_string()))?;
    std::fs::write(&path, text + "\n").map_err(|e| error(e.to_string()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_1_settings_json() {
        let mut settings = Settings::default();
        let text = r#"{"permissions": {"allow": ["Bash(npm test:*)", "Read(src/**)"], "deny": ["Bash(rm:*)"], "additionalDirectories": ["../lib"]}, "model": "x"}"#;
        settings
            .add_json(text, Level::Project, Path::new(".claude/settings.json"))
            .unwrap();
        assert_eq!(settings.allow.len(), 1);
        assert_eq!(settings.deny[0].text, "Bash(rm:*)");
        assert_eq!(settings.other_rules, vec!["Read(src/**)".to_owned()]);
        assert_eq!(
            settings.additional_directories,
            vec![(
                PathBuf::from("../lib"),
                PathBuf::from(".claude/settings.json")
            )]
        );
    }

    #[test]
    fn rule_5_always_allow_writes_the_local_file() {
        let dir = std::env::temp_dir().join(format!("wavesh-always-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".claude")).unwrap();
        std::fs::write(
            dir.join(".claude/settings.local.json"),
            r#"{"model": "x", "permissions": {"deny": ["Bash(rm:*)"]}}"#,
        )
        .unwrap();
        let path = write_always_allow(&dir, &["Bash(npm test:*)".into()]).unwrap();
        write_always_allow(&dir, &["Bash(npm test:*)".into(), "Bash(make:*)".into()]).unwrap();
        let mut settings = Settings::default();
        settings.add_file(&path, Level::Local).unwrap();
        let allow: Vec<&str> = settings.allow.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(allow, vec!["Bash(npm test:*)", "Bash(make:*)"]);
        assert_eq!(settings.deny.len(), 1);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("\"model\"")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rule_1_malformed_settings_name_file_and_position() {
        let mut settings = Settings::default();
        let error = settings
            .add_json(
                "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\",]}\n}",
                Level::Local,
                Path::new("s.json"),
            )
            .unwrap_err();
        assert!(
            matches!(error, SettingsError::Json { line: 2, .. }),
            "{error}"
        );
        assert!(error.to_string().starts_with("s.json:2:"), "{error}");
        let error = settings
            .add_json(
                r#"{"permissions": {"deny": "Bash(rm:*)"}}"#,
                Level::Local,
                Path::new("s.json"),
            )
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`permissions.deny` must be an array"),
            "{error}"
        );
        let error = settings
            .add_json(
                r#"{"permissions": {"allow": [3]}}"#,
                Level::Local,
                Path::new("s.json"),
            )
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`permissions.allow[0]` must be a string"),
            "{error}"
        );
        let error = settings
            .add_json(
                r#"{"permissions": {"allow": ["Bash(ls"]}}"#,
                Level::Local,
                Path::new("s.json"),
            )
            .unwrap_err();
        assert!(
            error.to_string().contains("not a valid Bash rule"),
            "{error}"
        );
    }
}
