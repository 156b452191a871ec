//! `docs/tools.md` shows each tool exactly as the model sees it (name, description, JSON
//! Schema). The generated section must equal what the tools report; run with
//! `PI_UPDATE_DOCS=1` to rewrite it.

use super::Session;

const BEGIN: &str = "<!-- generated: tool definitions (daemon/tools/tests/suite/docs.rs) -->\n";
const END: &str = "<!-- end of generated tool definitions -->\n";

#[test]
fn tools_md_matches_the_tools() {
    let session = Session::new();
    let mut generated = String::new();
    for name in pi_tools::ALL_TOOLS {
        let tool = pi_tools::create_tool(name, &session.context).unwrap();
        let default = if pi_tools::DEFAULT_TOOLS.contains(&name) {
            "default"
        } else {
            "by name"
        };
        generated.push_str(&format!(
            "### `{}` — {} ({default})\n\n{}\n\n```json\n{}\n```\n\n",
            tool.name(),
            tool.label(),
            tool.description(),
            serde_json::to_string_pretty(tool.parameters()).unwrap()
        ));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find(BEGIN)
        .expect("docs/tools.md has the generated-section marker")
        + BEGIN.len();
    let end = doc.find(END).expect("docs/tools.md has the end marker");
    if std::env::var_os("PI_UPDATE_DOCS").is_some() {
        std::fs::write(
            &path,
            format!("{}{generated}{}", &doc[..start], &doc[end..]),
        )
        .unwrap();
        return;
    }
    assert!(
        doc[start..end] == generated,
        "docs/tools.md is out of date; rerun with PI_UPDATE_DOCS=1. Expected:\n{generated}"
    );
}
