//! The committed JSON Schemas under `protocol/schema/` must equal what the code generates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const REGENERATE: &str = "regenerate them with `cargo run -p pi-daemon --bin pid -- schema --out protocol/schema` \
                          and commit the result with the protocol change";

fn committed_files(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        if path.is_dir() {
            committed_files(&path, root, out);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(relative, std::fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn committed_schemas_match_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let mut committed = BTreeMap::new();
    committed_files(&root, &root, &mut committed);
    let generated: BTreeMap<String, String> = pi_protocol::schema::generate()
        .into_iter()
        .map(|file| (file.path, file.contents))
        .collect();

    let missing: Vec<&String> = generated
        .keys()
        .filter(|path| !committed.contains_key(*path))
        .collect();
    let stale: Vec<&String> = committed
        .keys()
        .filter(|path| !generated.contains_key(*path))
        .collect();
    let changed: Vec<&String> = generated
        .iter()
        .filter(|(path, text)| committed.get(*path).is_some_and(|old| old != *text))
        .map(|(p, _)| p)
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty() && changed.is_empty(),
        "protocol schemas drifted (missing: {missing:?}, stale: {stale:?}, changed: {changed:?}); {REGENERATE}"
    );
}

#[test]
fn every_method_has_a_kind_named_as_on_the_wire() {
    for method in pi_protocol::v1::METHODS {
        let kind = pi_protocol::v1::MethodKind::from_name(method.name)
            .unwrap_or_else(|| panic!("no MethodKind for `{}`", method.name));
        assert_eq!(kind.name(), method.name);
    }
    assert_eq!(
        pi_protocol::v1::MethodKind::from_name("session/frobnicate"),
        None
    );
}

#[test]
fn every_method_has_a_schema_file_and_names_are_resource_verb() {
    let files: Vec<String> = pi_protocol::schema::generate()
        .into_iter()
        .map(|file| file.path)
        .collect();
    for method in pi_protocol::v1::METHODS {
        assert!(
            method.name == "initialize" || method.name.split('/').count() == 2,
            "method `{}` is not `resource/verb`",
            method.name
        );
        let expected = format!("v1/methods/{}.json", method.name.replace('/', "."));
        assert!(files.contains(&expected), "no schema file {expected}");
        assert!(
            !method.summary.trim().is_empty(),
            "method `{}` has no doc comment",
            method.name
        );
    }
    for notification in pi_protocol::v1::NOTIFICATIONS {
        assert_eq!(
            notification.name.split('/').count(),
            2,
            "`{}` is not `resource/verb`",
            notification.name
        );
    }
}
