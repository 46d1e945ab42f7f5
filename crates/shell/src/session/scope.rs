//! What a run sets around its command: the working directory it starts in, its `env` set over the
//! session's own values until it ends, and its run tag, exported to every process it starts; and,
//! between runs, what a program started from the session would get ([`ShellEnvironment`]).
//!
//! The tag lives in the global scope too (removed when the run ends), so that the builtins that
//! list variables can set it aside and put it back where it was (see `brush::builtins::run_tag`).

use brush_core::env::EnvironmentScope;

use super::{RunRequest, Session, exported, starting_oldpwd};
use crate::env::is_valid_name;
use crate::error::ShellError;
use crate::output::StartHandler;
use shellwright_proc::RUN_TAG_VARIABLE;

/// A session's working directory and exported variables between runs: where a program it started
/// would start, and the environment that program would get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellEnvironment {
    pub cwd: std::path::PathBuf,
    /// Exported variables that have a value (as brush passes them to a program), by name.
    pub exported: Vec<(String, String)>,
}

impl Session {
    /// The session's [`ShellEnvironment`] now.
    pub(crate) fn environment(&self) -> ShellEnvironment {
        let mut exported: Vec<(String, String)> = self
            .shell
            .env()
            .iter_exported()
            .filter(|(_, variable)| variable.value().is_set())
            .map(|(name, variable)| {
                let value = variable.value().to_cow_str(&self.shell).into_owned();
                (name.clone(), value)
            })
            .collect();
        exported.sort_unstable();
        ShellEnvironment {
            cwd: self.shell.working_dir().to_path_buf(),
            exported,
        }
    }

    /// Sets the run's tag, and the run's `env` over the session's own values, until
    /// [`leave_command_scope`](Self::leave_command_scope).
    ///
    /// The `env` is set in the global scope, not in a scope of its own: a run that unsets one of
    /// its names must see it unset, as `env X=1 bash -c 'unset X; …'` does, not uncover the
    /// session's value beneath.
    pub(super) fn enter_command_scope(
        &mut self,
        env: &[(String, String)],
        tag: &str,
    ) -> Result<(), ShellError> {
        if let Some((name, _)) = env.iter().find(|(name, _)| !is_valid_name(name)) {
            return Err(ShellError::Execution(format!(
                "invalid environment variable name: {name:?}"
            )));
        }
        let failed = |name: &str, e: brush_core::Error| {
            ShellError::Execution(format!("cannot set {name}: {e}"))
        };
        self.shell
            .env_mut()
            .add(
                RUN_TAG_VARIABLE,
                exported(tag.to_string()),
                EnvironmentScope::Global,
            )
            .map_err(|e| failed(RUN_TAG_VARIABLE, e))?;
        self.covered.clear();
        for (name, value) in env {
            if !self.covered.iter().any(|(covered, _)| covered == name) {
                let own = self.shell.env().get(name).map(|(_, var)| var.clone());
                self.covered.push((name.clone(), own));
            }
            let variable = if name == "OLDPWD" {
                starting_oldpwd(Some(value), self.shell.working_dir())
            } else {
                exported(value.clone())
            };
            self.shell
                .env_mut()
                .add(name.as_str(), variable, EnvironmentScope::Global)
                .map_err(|e| failed(name, e))?;
        }
        Ok(())
    }

    /// Removes the run's tag and puts back the session's own values of its `env`.
    pub(super) fn leave_command_scope(&mut self) {
        let env_mut = self.shell.env_mut();
        let _ = env_mut.unset(RUN_TAG_VARIABLE);
        for (name, own) in std::mem::take(&mut self.covered) {
            let _ = match own {
                Some(var) => env_mut.add(name, var, EnvironmentScope::Global),
                None => env_mut.unset(&name).map(drop),
            };
        }
    }

    /// Makes the request's `cwd` current and tells `on_start` where the run starts.
    pub(super) fn enter_cwd(
        &mut self,
        request: &RunRequest,
        on_start: Option<StartHandler>,
    ) -> Result<(), ShellError> {
        if let Some(cwd) = &request.cwd {
            self.shell
                .set_working_dir(cwd)
                .map_err(|e| ShellError::Cwd(format!("{}: {e}", cwd.display())))?;
            if self.one_shot {
                // `executeShell` starts *in* cwd, as `bash -c` does: no previous directory.
                let _ = self
                    .shell
                    .env_mut()
                    .set_global("OLDPWD", starting_oldpwd(None, cwd));
            }
        }
        if let Some(on_start) = on_start {
            on_start(self.shell.working_dir());
        }
        Ok(())
    }
}
