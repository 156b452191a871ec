//! The peer programs `tests/install-peers` installs from the package registries, for tests
//! that drive real third-party servers. A missing peer fails the test loudly, saying how to
//! install it.

use std::path::PathBuf;

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
