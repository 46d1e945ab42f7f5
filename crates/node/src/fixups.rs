//! `applyBashFixups` over `shellwright-minimize`: plain string rewriting, so it is exported on
//! every platform, including those without the shell.

use napi::bindgen_prelude::{Env, Result, Unknown};
use napi_derive::napi;

use crate::options::string_arg;

/// The result of `applyBashFixups`.
#[napi(object, object_from_js = false)]
pub struct BashFixups {
    pub command: String,
    pub stripped: Vec<String>,
}

/// Removes output-limiting noise that agents append to commands (`| head -n 5`, a redundant
/// `2>&1`) without ever changing what the command does.
#[napi(catch_unwind, ts_args_type = "command: string")]
pub fn apply_bash_fixups(env: Env, command: Unknown) -> Result<BashFixups> {
    let command = string_arg(&env, command, "command")?;
    let fixed = shellwright_minimize::apply_bash_fixups(&command);
    Ok(BashFixups {
        command: fixed.command,
        stripped: fixed.stripped,
    })
}
