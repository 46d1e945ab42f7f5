//! The environment model: which host variables a session inherits.
//!
//! brush inherits nothing by itself (`do_not_inherit_env`); the host environment is rebuilt
//! here, minus the variables that describe the *host's* shell rather than the user's world
//! (prompts, `PWD`, `SHLVL`, exported functions, option strings…). Inheriting those would make a
//! fresh session behave like a copy of whatever shell launched Node.

/// Variables a session never inherits from the host (nor accepts through `sessionEnv`).
pub const SKIPPED_VARIABLES: &[&str] = &[
    "BASH",
    "BASHOPTS",
    "BASHPID",
    "BASH_ARGV0",
    "BASH_COMMAND",
    "BASH_ENV",
    "BASH_EXECUTION_STRING",
    "BASH_SUBSHELL",
    "BASH_VERSINFO",
    "BASH_VERSION",
    "ENV",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "FUNCNAME",
    "GROUPS",
    "HISTCMD",
    "HISTFILE",
    "IFS",
    "LINENO",
    "OLDPWD",
    "PPID",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PWD",
    "RANDOM",
    "SECONDS",
    "SHELLOPTS",
    "SHLVL",
    "SRANDOM",
    "UID",
    shellwright_proc::RUN_TAG_VARIABLE,
];

/// Agents trained on PowerShell write `$env:NAME`. In bash `$env` is unset, so the text would
/// silently become `:NAME`; a session therefore starts with a (non-exported) variable `env` whose
/// value is the literal `$env`, so `$env:NAME` survives expansion — unless the user (or the host
/// environment) defines `env`, which then wins.
pub const POWERSHELL_ENV_GUARD: (&str, &str) = ("env", "$env");

/// Whether a variable named `name` is left out of a session's environment.
pub fn is_skipped(name: &str) -> bool {
    SKIPPED_VARIABLES.contains(&name) || is_exported_function(name) || !is_valid_name(name)
}

/// `BASH_FUNC_name%%`: how bash exports functions through the environment.
fn is_exported_function(name: &str) -> bool {
    name.starts_with("BASH_FUNC_") && name.ends_with("%%")
}

/// A shell identifier: `[A-Za-z_][A-Za-z0-9_]*`. Anything else cannot be a shell variable.
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The variables a new session starts with: the host environment, then `session_env` over it,
/// both filtered through [`is_skipped`]. Later entries win.
pub fn initial_environment(
    host: impl IntoIterator<Item = (String, String)>,
    session_env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let entries = host.into_iter().chain(session_env.iter().cloned());
    for (name, value) in entries.filter(|(name, _)| !is_skipped(name)) {
        match vars.iter_mut().find(|(existing, _)| *existing == name) {
            Some(slot) => slot.1 = value,
            None => vars.push((name, value)),
        }
    }
    vars
}

/// The host process's environment, skipping entries that are not valid UTF-8.
pub fn host_environment() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// Makes a Windows environment fit for a bash session. Windows names are case-insensitive, and
/// the search path usually comes as `Path`: every spelling of a name becomes one variable, the
/// later value winning under its own spelling, except the search path, which is always `PATH`
/// (what scripts expand) and merges the entries of every spelling, the later ones first, each
/// directory once. Git for Windows' `usr\bin` (its `grep`, `sed`, `ls`…) is added at the end
/// when it is installed under `ProgramFiles`, `ProgramW6432` or `LOCALAPPDATA\Programs`.
/// `is_dir` is asked about those directories.
pub fn for_windows(
    vars: Vec<(String, String)>,
    is_dir: &dyn Fn(&std::path::Path) -> bool,
) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = Vec::with_capacity(vars.len());
    let mut path_spellings: Vec<String> = Vec::new();
    for (name, value) in vars {
        if name.eq_ignore_ascii_case("PATH") {
            path_spellings.push(value);
            continue;
        }
        match merged
            .iter_mut()
            .find(|(existing, _)| existing.eq_ignore_ascii_case(&name))
        {
            Some(slot) => *slot = (name, value),
            None => merged.push((name, value)),
        }
    }
    let mut entries: Vec<&str> = Vec::new();
    for value in path_spellings.iter().rev() {
        for entry in value.split(';').filter(|entry| !entry.is_empty()) {
            if !entries.iter().any(|seen| same_directory(seen, entry)) {
                entries.push(entry);
            }
        }
    }
    let git = git_usr_bin(&merged, is_dir);
    if let Some(git) = &git
        && !entries.iter().any(|seen| same_directory(seen, git))
    {
        entries.push(git);
    }
    if !entries.is_empty() {
        merged.push(("PATH".to_string(), entries.join(";")));
    }
    merged
}

/// Whether two `PATH` entries name the same directory, as Windows compares them.
fn same_directory(a: &str, b: &str) -> bool {
    a.trim_end_matches(['\\', '/'])
        .eq_ignore_ascii_case(b.trim_end_matches(['\\', '/']))
}

/// Git for Windows' `usr\bin`, where it is installed.
fn git_usr_bin(
    vars: &[(String, String)],
    is_dir: &dyn Fn(&std::path::Path) -> bool,
) -> Option<String> {
    let value = |name: &str| {
        vars.iter()
            .find(|(existing, _)| existing.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim_end_matches('\\'))
    };
    let installs = [
        value("ProgramFiles").map(|base| format!("{base}\\Git")),
        value("ProgramW6432").map(|base| format!("{base}\\Git")),
        value("LOCALAPPDATA").map(|base| format!("{base}\\Programs\\Git")),
    ];
    installs
        .into_iter()
        .flatten()
        .map(|git| format!("{git}\\usr\\bin"))
        .find(|usr_bin| is_dir(std::path::Path::new(usr_bin)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn skips_shell_internal_variables() {
        for name in [
            "PS1",
            "PWD",
            "OLDPWD",
            "SHLVL",
            "BASH_ENV",
            "ENV",
            "BASHOPTS",
            "SHELLOPTS",
            "IFS",
            "PPID",
            "RANDOM",
            "SECONDS",
            "BASH_FUNC_ll%%",
        ] {
            assert!(is_skipped(name), "{name} must be skipped");
        }
        for name in ["PATH", "HOME", "LANG", "BASH_FUNC_x", "MY_VAR", "_"] {
            assert!(!is_skipped(name), "{name} must be kept");
        }
    }

    #[test]
    fn rejects_names_that_are_not_identifiers() {
        for name in ["", "1A", "A-B", "A B", "A=B", "é"] {
            assert!(!is_valid_name(name), "{name:?}");
        }
        assert!(is_valid_name("_a1"));
    }

    #[test]
    fn session_env_overrides_host_and_is_filtered_too() {
        let host = pairs(&[
            ("PATH", "/bin"),
            ("PS1", "$ "),
            ("HOME", "/root"),
            ("BASH_FUNC_f%%", "() { :; }"),
        ]);
        let session = pairs(&[("HOME", "/home/agent"), ("SHLVL", "9"), ("EXTRA", "1")]);
        assert_eq!(
            initial_environment(host, &session),
            pairs(&[("PATH", "/bin"), ("HOME", "/home/agent"), ("EXTRA", "1")])
        );
    }

    #[test]
    fn windows_names_merge_case_insensitively_and_path_keeps_every_entry() {
        let vars = pairs(&[
            ("Path", r"C:\Windows\system32;C:\Windows"),
            ("TEMP", r"C:\Temp"),
            ("temp", r"D:\Temp"),
            ("PATH", r"C:\Tools;c:\windows\System32\"),
        ]);
        assert_eq!(
            for_windows(vars, &|_| false),
            pairs(&[
                ("temp", r"D:\Temp"),
                ("PATH", r"C:\Tools;c:\windows\System32\;C:\Windows"),
            ])
        );
    }

    #[test]
    fn git_for_windows_usr_bin_is_added_where_it_is_installed() {
        let vars = pairs(&[
            ("ProgramFiles", r"C:\Program Files"),
            ("LOCALAPPDATA", r"C:\Users\a\AppData\Local"),
            ("Path", r"C:\Windows"),
        ]);
        let installed = |path: &std::path::Path| {
            path.to_str() == Some(r"C:\Users\a\AppData\Local\Programs\Git\usr\bin")
        };
        let path = for_windows(vars.clone(), &installed).pop();
        assert_eq!(
            path,
            Some((
                "PATH".to_string(),
                r"C:\Windows;C:\Users\a\AppData\Local\Programs\Git\usr\bin".to_string()
            ))
        );
        let path = for_windows(vars, &|_| false).pop();
        assert_eq!(path, Some(("PATH".to_string(), r"C:\Windows".to_string())));
    }
}
