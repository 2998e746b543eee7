//! `rg` on the same engine, for systems without ripgrep (SEARCH-3): ripgrep's common
//! flags and its non-terminal output (`path:line:text` with `-n`, files with no match left
//! out of `-c`). There is no system `rg` to hand over to, so an unsupported flag is an
//! error naming it.

use crate::grep::{Options, PROGRAM, run};
use crate::pattern::Dialect;

/// Prints `rg: MESSAGE` on stderr.
#[expect(clippy::print_stderr, reason = "rg's own error output")]
pub(crate) fn rg_error(message: &str) {
    eprintln!("rg: {message}");
}

/// `rg ARGS`; returns the exit code (0 match, 1 none, 2 error).
pub fn rg_main(args: &[String]) -> i32 {
    let _ = PROGRAM.set("rg");
    match parse(args) {
        Ok(options) => run(&options),
        Err(message) => {
            rg_error(&message);
            2
        }
    }
}

/// Flags that take a value: short form, long form, and the short letter that
/// [`apply_value`] knows them by.
const VALUE_FLAGS: &[(&str, &str, char)] = &[
    ("-e", "--regexp", 'e'),
    ("-f", "--file", 'f'),
    ("-g", "--glob", 'g'),
    ("-t", "--type", 't'),
    ("-T", "--type-not", 'T'),
    ("-m", "--max-count", 'm'),
    ("-A", "--after-context", 'A'),
    ("-B", "--before-context", 'B'),
    ("-C", "--context", 'C'),
];

/// What the arguments ask for, before globs and types are built.
#[derive(Default)]
struct Raw {
    globs: Vec<String>,
    types: Vec<String>,
    types_not: Vec<String>,
    smart_case: bool,
    unrestricted: u8,
    hidden: bool,
    no_ignore: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        dialect: Dialect::Extended,
        recursive: true,
        skip_hidden: true,
        count_nonzero_only: true,
        keep_vcs_dirs: true,
        rg_names: true,
        ..Options::default()
    };
    let mut raw = Raw::default();
    let mut positional = Vec::new();
    let mut pattern_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |flag: &str| -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            let v = args
                .get(i)
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))?;
            i += 1;
            Ok(v)
        };
        // Short flags may be bundled (`-inw`), a value-taking one last (`-C2`, `-gfoo`).
        if !name.starts_with("--") && name.len() > 2 && name.starts_with('-') {
            let flags: Vec<char> = name[1..].chars().collect();
            let mut k = 0;
            while k < flags.len() {
                let flag = flags[k];
                k += 1;
                if VALUE_FLAGS.iter().any(|(_, _, letter)| *letter == flag) {
                    let rest: String = flags[k..].iter().collect();
                    let v = if rest.is_empty() {
                        value(&format!("-{flag}"))?
                    } else {
                        rest
                    };
                    apply_value(&mut o, &mut raw, flag, v, &mut pattern_given)?;
                    break;
                }
                apply_switch(&mut o, &mut raw, &format!("-{flag}"))?;
            }
            continue;
        }
        if let Some((_, _, flag)) = VALUE_FLAGS
            .iter()
            .find(|(short, long, _)| name == *short || name == *long)
        {
            apply_value(&mut o, &mut raw, *flag, value(&name)?, &mut pattern_given)?;
            continue;
        }
        match name.as_str() {
            "--color" | "--colour" => {
                let v = value(&name)?;
                if !matches!(v.as_str(), "never" | "auto") {
                    return Err(format!("--color={v} is not supported by wavesh's rg"));
                }
            }
            _ if name.starts_with('-') && name.len() > 1 => apply_switch(&mut o, &mut raw, &name)?,
            _ => positional.push(arg.clone()),
        }
    }
    if !pattern_given && !o.list_files {
        if positional.is_empty() {
            return Err("no pattern given (rg PATTERN [PATH ...])".into());
        }
        o.patterns.push(positional.remove(0));
    }
    o.files = positional;
    finish(&mut o, &raw)?;
    Ok(o)
}

fn apply_value(
    o: &mut Options,
    raw: &mut Raw,
    flag: char,
    v: String,
    pattern_given: &mut bool,
) -> Result<(), String> {
    let number = |v: &str| {
        v.parse::<usize>()
            .map_err(|_| format!("-{flag}: `{v}` is not a number"))
    };
    match flag {
        'e' => {
            o.patterns.push(v);
            *pattern_given = true;
        }
        'f' => {
            let text = std::fs::read_to_string(&v).map_err(|e| format!("{v}: {e}"))?;
            o.patterns.extend(text.lines().map(str::to_owned));
            *pattern_given = true;
        }
        'g' => raw.globs.push(v),
        't' => raw.types.push(v),
        'T' => raw.types_not.push(v),
        'm' => o.max_count = Some(number(&v)? as u64),
        'A' => {
            o.after = number(&v)?;
            o.context_given = true;
        }
        'B' => {
            o.before = number(&v)?;
            o.context_given = true;
        }
        'C' => {
            o.after = number(&v)?;
            o.before = o.after;
            o.context_given = true;
        }
        _ => unreachable!("value flags are listed in parse"),
    }
    Ok(())
}

fn apply_switch(o: &mut Options, raw: &mut Raw, flag: &str) -> Result<(), String> {
    match flag {
        "-n" | "--line-number" => o.line_number = true,
        "-N" | "--no-line-number" => o.line_number = false,
        "-i" | "--ignore-case" => o.ignore_case = true,
        "-s" | "--case-sensitive" => {
            o.ignore_case = false;
            raw.smart_case = false;
        }
        "-S" | "--smart-case" => raw.smart_case = true,
        "-w" | "--word-regexp" => o.word = true,
        "-x" | "--line-regexp" => o.line = true,
        "-F" | "--fixed-strings" => o.dialect = Dialect::Fixed,
        "-v" | "--invert-match" => o.invert = true,
        "-c" | "--count" => o.count = true,
        "-l" | "--files-with-matches" => o.files_with_matches = true,
        "--files-without-match" => o.files_without_match = true,
        "-o" | "--only-matching" => o.only_matching = true,
        "-q" | "--quiet" => o.quiet = true,
        "-H" | "--with-filename" => o.with_filename = Some(true),
        "-I" | "--no-filename" => o.with_filename = Some(false),
        "-a" | "--text" => o.text = true,
        "-b" | "--byte-offset" => o.byte_offset = true,
        "-." | "--hidden" => raw.hidden = true,
        "--no-ignore" => raw.no_ignore = true,
        "-u" | "--unrestricted" => raw.unrestricted += 1,
        "--files" => o.list_files = true,
        "--no-heading" | "--no-messages" => {}
        other => return Err(format!("{other} is not supported by wavesh's rg")),
    }
    Ok(())
}

/// Builds globs and types, and applies -u and smart case.
fn finish(o: &mut Options, raw: &Raw) -> Result<(), String> {
    o.no_ignore = raw.no_ignore || raw.unrestricted >= 1;
    o.skip_hidden = !(raw.hidden || raw.unrestricted >= 2);
    if raw.unrestricted >= 3 {
        o.text = true;
    }
    // ripgrep counts matches with -c -o.
    o.count_matches = o.count && o.only_matching;
    if raw.smart_case && !o.ignore_case {
        o.ignore_case = !o.patterns.iter().any(|p| p.chars().any(char::is_uppercase));
    }
    if !raw.globs.is_empty() {
        let mut builder = ignore::overrides::OverrideBuilder::new(".");
        for glob in &raw.globs {
            builder.add(glob).map_err(|e| format!("-g {glob}: {e}"))?;
        }
        o.overrides = Some(builder.build().map_err(|e| e.to_string())?);
    }
    if !raw.types.is_empty() || !raw.types_not.is_empty() {
        let mut builder = ignore::types::TypesBuilder::new();
        builder.add_defaults();
        for name in &raw.types {
            builder.select(name);
        }
        for name in &raw.types_not {
            builder.negate(name);
        }
        o.types = Some(builder.build().map_err(|e| e.to_string())?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn search_3_flags_parse_like_ripgrep() {
        let o = parse(&args(&["-n", "-S", "foo", "src"])).unwrap();
        assert_eq!(o.patterns, ["foo"]);
        assert_eq!(o.files, ["src"]);
        assert!(o.line_number && o.ignore_case && o.recursive && o.skip_hidden);
        let o = parse(&args(&["-S", "Foo"])).unwrap();
        assert!(!o.ignore_case, "an upper-case letter turns smart case off");
        let o = parse(&args(&["-uu", "-C2", "-tpy", "-e", "a", "-e", "b"])).unwrap();
        assert_eq!(o.patterns, ["a", "b"]);
        assert!(o.no_ignore && !o.skip_hidden && o.types.is_some());
        assert_eq!((o.before, o.after), (2, 2));
        let o = parse(&args(&["--files", "-g", "*.rs"])).unwrap();
        assert!(o.list_files && o.overrides.is_some());
    }

    #[test]
    fn search_3_unsupported_flags_and_bad_types_are_named() {
        assert_eq!(
            parse(&args(&["--json", "x"])).err().unwrap(),
            "--json is not supported by wavesh's rg"
        );
        assert!(
            parse(&args(&["-t", "nosuchtype", "x"]))
                .err()
                .unwrap()
                .contains("nosuchtype")
        );
        assert!(parse(&args(&[])).err().unwrap().contains("no pattern"));
    }
}
