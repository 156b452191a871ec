//! The embedded catalog (`src/catalog/pi-models.json`) is exactly what `scripts/gen-catalog.mjs`
//! makes from the pinned pi packages that `tests/install-peers` installs.

use std::path::Path;
use std::process::Command;

#[test]
fn the_catalog_is_generated_from_the_pinned_pi() {
    let peers = pi_test_support::peers::dir();
    assert!(
        peers
            .join("node_modules/@mariozechner/pi-ai/package.json")
            .is_file(),
        "the test peer @mariozechner/pi-ai is not installed under {}; run tests/install-peers \
         (the README's test command does)",
        peers.display()
    );
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = crate_dir.join("../../scripts/gen-catalog.mjs");
    let output = Command::new("node")
        .arg(&script)
        .arg(&peers)
        .output()
        .unwrap_or_else(|error| panic!("could not run node {}: {error}", script.display()));
    assert!(
        output.status.success(),
        "node {} failed ({}): {}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let committed_path = crate_dir.join("src/catalog/pi-models.json");
    let committed = std::fs::read(&committed_path).unwrap();
    assert!(
        output.stdout == committed,
        "{} differs from what scripts/gen-catalog.mjs makes from {}; regenerate it with \
         `node scripts/gen-catalog.mjs > daemon/llm/src/catalog/pi-models.json` (from the \
         repository root) and review the diff",
        committed_path.display(),
        peers.display()
    );
}
