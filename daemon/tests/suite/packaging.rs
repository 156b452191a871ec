//! `packaging/`: the committed manual page of `pid` is what `pid man` prints, and the systemd
//! unit's `Documentation=` names pages and files that exist.

use super::pid_binary;

fn repository() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn the_committed_pid_manual_page_is_the_binarys() {
    let out = std::process::Command::new(pid_binary())
        .arg("man")
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    for section in [
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        assert!(
            page.contains(&format!(".SH {section}"))
                || page.contains(&format!(".SH \"{section}\"")),
            "{section}"
        );
    }
    let committed = repository().join("packaging/man/pid.1");
    assert_eq!(
        std::fs::read_to_string(&committed).unwrap_or_default(),
        page,
        "{} is stale; run `cargo run -p pi-daemon --bin pid -- man > packaging/man/pid.1`",
        committed.display()
    );
}

#[test]
fn the_systemd_units_documentation_exists() {
    let unit = std::fs::read_to_string(repository().join("packaging/systemd/pid.service")).unwrap();
    let line = unit
        .lines()
        .find(|line| line.starts_with("Documentation="))
        .expect("the unit names its documentation");
    for target in line["Documentation=".len()..].split_whitespace() {
        match target.strip_prefix("man:") {
            Some(page) => {
                let name = page.replace('(', ".").replace(')', "");
                assert!(
                    repository().join("packaging/man").join(&name).is_file(),
                    "{target}: packaging/man/{name}"
                );
            }
            None => {
                let path = target
                    .strip_prefix("https://github.com/pi-daemon/pi-daemon/blob/main/")
                    .unwrap_or_else(|| panic!("{target}: not a page of this repository"));
                assert!(repository().join(path).is_file(), "{target}");
            }
        }
    }
}
