//! N-API bindings for Shellwright: the only crate that knows Node.
use napi_derive::napi;

/// Temporary smoke export.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
