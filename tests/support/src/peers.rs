//! The peer programs `tests/install-peers` installs from the package registries, for tests
//! that drive real third-party servers. A missing peer fails the test loudly, saying how to
//! install it. Also [`fault_server`], this checkout's own misbehaving MCP server, which runs on
//! the pip peers' [`python`].

use std::path::{Path, PathBuf};

/// Where `tests/install-peers` puts npm and pip peers: `PI_PEERS_DIR`, else
/// `~/.cache/pi-daemon-peers`.
pub fn dir() -> PathBuf {
    match std::env::var_os("PI_PEERS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
            PathBuf::from(home).join(".cache/pi-daemon-peers")
        }
    }
}

/// The installed executable `name` of an npm peer (`node_modules/.bin/NAME`).
pub fn npm_bin(name: &str) -> PathBuf {
    let path = dir().join("node_modules/.bin").join(name);
    assert!(
        path.is_file(),
        "the test peer {name} is not installed at {}; run tests/install-peers (the README's \
         test command does)",
        path.display()
    );
    path
}

/// The example extensions of the pinned pi package (`examples/extensions/` of
/// `@mariozechner/pi-coding-agent` 0.73.1), which the daemon's extension host also runs on.
pub fn pi_examples() -> PathBuf {
    let path = dir().join("node_modules/@mariozechner/pi-coding-agent/examples/extensions");
    assert!(
        path.join("hello.ts").is_file(),
        "the test peer @mariozechner/pi-coding-agent is not installed at {}; run \
         tests/install-peers (the README's test command does)",
        path.display()
    );
    path
}

/// The `node_modules` of pi's `custom-provider-anthropic` example, installed from its own
/// lock file (the Anthropic SDK it pins), for a copy of the example to use.
pub fn custom_provider_modules() -> PathBuf {
    let path = dir().join("custom-provider-anthropic/node_modules");
    assert!(
        path.join("@anthropic-ai/sdk/package.json").is_file(),
        "the dependencies of pi's custom-provider-anthropic example are not installed at {}; \
         run tests/install-peers (the README's test command does)",
        path.display()
    );
    path
}

/// The console script `name` of a Python MCP server from PyPI (`mcp-server-git`,
/// `mcp-server-time`), in the venv of its own `tests/install-peers` makes.
pub fn pypi_server(name: &str) -> PathBuf {
    let path = dir().join("servers-venv/bin").join(name);
    assert!(
        path.is_file(),
        "the test peer {name} is not installed at {}; run tests/install-peers (the README's \
         test command does)",
        path.display()
    );
    path
}

/// The interpreter of the Python venv that holds the pip peers (the `mcp` SDK).
pub fn python() -> PathBuf {
    let path = dir().join("venv/bin/python");
    assert!(
        path.is_file(),
        "the test peers' Python venv is not installed at {}; run tests/install-peers (the \
         README's test command does)",
        path.display()
    );
    path
}

/// The venv (a directory) that has `ipykernel`, for the `python` tool's kernels.
pub fn kernel_venv() -> PathBuf {
    let path = dir().join("kernel-venv");
    assert!(
        path.join("bin/python").is_file(),
        "the test peers' ipykernel venv is not installed at {}; run tests/install-peers (the \
         README's test command does)",
        path.display()
    );
    path
}

/// The venv (a directory) of the pip peers, which has no `ipykernel`.
pub fn venv_without_ipykernel() -> PathBuf {
    python()
        .parent()
        .and_then(std::path::Path::parent)
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

/// `tests/peers/fault_server.py`, an MCP server that crashes, hangs and returns big results on
/// request; run it with [`python`].
pub fn fault_server() -> PathBuf {
    // This crate is tests/support; the script is tests/peers/fault_server.py.
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/support has a parent");
    let path = tests.join("peers/fault_server.py");
    assert!(
        path.is_file(),
        "the fault server is missing at {}",
        path.display()
    );
    path
}
