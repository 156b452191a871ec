//! Conventions: generated completions and man pages match `packaging/`, help text, exit codes
//! for usage errors and an unreachable daemon.

use super::Home;

/// The committed completions and man pages are what the CLI generates. Regenerate with
/// `cargo run -p pictl -- generate-assets --out packaging`.
#[test]
fn packaging_assets_match_the_cli() {
    let home = Home::new();
    let out = home.path().join("assets");
    let output = home.pictl(&["generate-assets", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let packaging = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging");
    let mut compared = 0;
    for dir in ["completions", "man"] {
        let mut generated: Vec<_> = std::fs::read_dir(out.join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        generated.sort();
        // `pid.1` is `pid`'s own (pi-daemon's tests hold it to `pid man`).
        let mut committed: Vec<_> = std::fs::read_dir(packaging.join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .filter(|name| name != "pid.1")
            .collect();
        committed.sort();
        assert_eq!(
            generated, committed,
            "packaging/{dir} is stale; run `cargo run -p pictl -- generate-assets --out packaging`"
        );
        for name in generated {
            let fresh = std::fs::read(out.join(dir).join(&name)).unwrap();
            let kept = std::fs::read(packaging.join(dir).join(&name)).unwrap();
            assert!(
                fresh == kept,
                "packaging/{dir}/{} is stale; run `cargo run -p pictl -- generate-assets --out packaging`",
                name.to_string_lossy()
            );
            compared += 1;
        }
    }
    assert!(compared > 20);
}

#[test]
fn help_lists_every_command_imperatively() {
    let home = Home::new();
    let output = home.pictl(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    insta::assert_snapshot!("help", help);
    let completions = home.pictl(&["completions", "bash"]);
    assert!(completions.status.success());
    assert!(String::from_utf8_lossy(&completions.stdout).contains("pictl"));
}

#[test]
fn usage_errors_exit_2_and_an_unreachable_daemon_exits_3() {
    let home = Home::new();
    // `--mode` is pi's output mode; the approval modes it used to take name their new flag,
    // and nothing starts.
    let output = home.pictl(&["run", "--mode", "yolo", "hi"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--mode is pi's output mode now (text, json or rpc); the approval mode moved to \
             --approval-mode (use --approval-mode yolo)"
        ),
        "{stderr}"
    );
    let output = home.pictl(&["--mode", "yaml", "hi"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("unknown output mode \"yaml\": use text, json or rpc"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !home.path().join("run/pid.sock").exists(),
        "no daemon is started for a bad command line"
    );
    let output = home.pictl(&["rpc", "@file.txt"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "rpc takes no @file or message"
    );

    // A daemon that cannot start (bad configuration): exit 3, with what to do.
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(home.path().join("config/config.toml"), "bogus = true\n").unwrap();
    let output = home.pictl(&["sessions"]);
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("pictl: error: the daemon exited during startup"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            "hint: start the daemon with `pictl daemon start` (or its service: `systemctl --user \
             start pid`); `pictl daemon status` shows whether one runs\n"
        ),
        "{stderr}"
    );
}

/// `packaging/bin/pi` is pictl under pi's name: pi's bare version, pi's exit code 1 for a
/// bad command line.
#[test]
fn the_pi_wrapper_answers_as_pi() {
    let wrapper = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/bin/pi");
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_pictl"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = Home::new();
    let run = |args: &[&str]| {
        std::process::Command::new(&wrapper)
            .args(args)
            .env("PATH", &path)
            .env("PI_HOME", home.path())
            .output()
            .unwrap()
    };
    let version = run(&["-v"]);
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        env!("CARGO_PKG_VERSION")
    );
    let bad = run(&["--mode", "yaml"]);
    assert_eq!(
        bad.status.code(),
        Some(1),
        "pi's exit code for a bad command line"
    );
}
