//! `pictl attach` and interactive `pictl` refuse to run without a terminal (the TUI itself is
//! driven in tmux by `tests/e2e`).

use super::Home;

#[test]
fn the_tui_needs_a_terminal_and_says_so_with_exit_2() {
    let home = Home::new();
    // pi's command line without a terminal and with nothing to send does nothing, as pi.
    for args in [&[][..], &["-c"], &["--model", "x"]] {
        let output = home.pictl(args);
        assert_eq!(output.status.code(), Some(0), "pictl {args:?}");
        assert!(output.stdout.is_empty(), "pictl {args:?}");
        assert!(output.stderr.is_empty(), "pictl {args:?}");
    }
    for args in [&["attach"][..], &["attach", "some-id"]] {
        let output = home.pictl(args);
        assert_eq!(output.status.code(), Some(2), "pictl {args:?}");
        assert!(output.stdout.is_empty(), "pictl {args:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "pictl: error: the TUI needs a terminal; use a subcommand for scripts (see `pictl --help`)\n",
            "pictl {args:?}"
        );
    }
    assert!(
        !home.path().join("run/pid.sock").exists(),
        "no daemon is started for a refused TUI"
    );
}
