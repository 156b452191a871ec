//! `pictl web`: a one-time login link to the web UI the daemon serves (`web/login`), opened
//! in the desktop's browser or printed. The browser is given a page in the runtime directory
//! (0600) that loads the link, so the code is never on a command line another local user can
//! read. With `--remote` the far daemon's listener is forwarded to a loopback port here
//! through ssh (`ssh -N -L`), and the link points there; the command then keeps the forward
//! open until Ctrl+C. `--revoke` logs every browser out (`web/revoke`).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use pi_protocol::v1::{WebLogin, WebLoginParams, WebLoginResponse, WebRevoke, WebRevokeParams};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{eprint_line, print_json, print_text};

/// Options of `pictl web`.
#[derive(Debug, Args)]
pub struct WebArgs {
    /// Print the link without opening a browser
    #[arg(long)]
    pub no_open: bool,
    /// With --remote: the loopback port here that forwards to the far daemon (default: a free
    /// one)
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Print the link as JSON ({url, expiresAt})
    #[arg(long)]
    pub json: bool,
    /// Log every browser out of the web UI (their logins stop working at once)
    #[arg(long, conflicts_with_all = ["no_open", "port"])]
    pub revoke: bool,
}

/// Runs `pictl web`.
pub async fn run(args: WebArgs) -> Result<ExitCode, CliError> {
    let remote =
        pi_client::remote::Remote::current().map_err(|error| CliError::usage(error.to_string()))?;
    if args.port.is_some() && remote.is_none() {
        return Err(CliError::usage(
            "--port is the local end of a forward: it goes with --remote (the daemon's own port is `websocket.port` in config.toml)",
        ));
    }
    let client = daemon_client::connect().await?.client;
    if args.revoke {
        client.call::<WebRevoke>(&WebRevokeParams {}).await?;
        if args.json {
            print_json(&serde_json::json!({ "revoked": true }));
        } else {
            print_text("Logged every browser out of the web UI; `pictl web` logs one in again.\n");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let login: WebLoginResponse = client.call::<WebLogin>(&WebLoginParams {}).await?;
    let Some(remote) = remote else {
        announce(&args, &login.url, login.expires_at, None);
        return Ok(ExitCode::SUCCESS);
    };
    // The far daemon's listener, forwarded to a port of this machine's loopback.
    let local = match args.port {
        Some(port) => {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Err(CliError::usage(format!(
                    "127.0.0.1:{port} is taken here; give --port a free port, or leave it out for any free one"
                )));
            }
            port
        }
        None => free_port()?,
    };
    let (program, forward_args) = remote.forward_command(local, login.port);
    let mut ssh = tokio::process::Command::new(&program)
        .args(&forward_args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .map_err(|error| CliError::failed(format!("cannot run {program}: {error}")))?;
    // Ready once the local end accepts connections; ssh failing first says why.
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", local))
            .await
            .is_ok()
        {
            break;
        }
        if let Some(status) = ssh
            .try_wait()
            .map_err(|error| CliError::failed(format!("cannot wait for {program}: {error}")))?
        {
            let mut said = String::new();
            if let Some(mut stderr) = ssh.stderr.take() {
                use tokio::io::AsyncReadExt as _;
                let _ = stderr.read_to_string(&mut said).await;
            }
            return Err(CliError::failed(format!(
                "cannot forward 127.0.0.1:{local} to the daemon on {} ({status}): {}",
                remote.label(),
                said.trim()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(client);
    let url = format!("http://127.0.0.1:{local}{}", login.path);
    announce(&args, &url, login.expires_at, Some(&remote.label()));
    tokio::select! {
        status = ssh.wait() => {
            let status = status
                .map_err(|error| CliError::failed(format!("cannot wait for {program}: {error}")))?;
            Err(CliError::failed(format!(
                "the forward to {} ended ({status})",
                remote.label()
            )))
        }
        _ = tokio::signal::ctrl_c() => {
            let _ = ssh.start_kill();
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints (and opens) the link.
fn announce(args: &WebArgs, url: &str, expires_at: i64, remote: Option<&str>) {
    if args.json {
        print_json(&serde_json::json!({ "url": url, "expiresAt": expires_at }));
    } else {
        print_text(&format!("{url}\n"));
        eprint_line(
            "The link logs one browser in, once, within two minutes; run `pictl web` again for another.",
        );
        if let Some(remote) = remote {
            eprint_line(&format!(
                "Forwarding the web UI of the daemon on {remote} through ssh; Ctrl+C stops."
            ));
        }
    }
    if !args.no_open {
        match opener_page(url) {
            Ok(page) => open(&format!("file://{}", page.display())),
            Err(error) => eprint_line(&format!(
                "cannot write the page that opens the link ({}); open the link above yourself",
                error.message()
            )),
        }
    }
}

/// Opens `target` in the desktop's browser when there is a desktop (macOS, or `DISPLAY` or
/// `WAYLAND_DISPLAY` set), waiting for the opener (it hands the page to the browser and
/// ends) so it runs before `pictl` exits.
fn open(target: &str) {
    let Some(opener) = pi_tui::browser_opener() else {
        return;
    };
    let _ = std::process::Command::new(opener)
        .arg(target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// A page (0600, in this user's runtime directory) that loads `url`: the browser is given
/// its path, never the code.
fn opener_page(url: &str) -> Result<std::path::PathBuf, CliError> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let paths = daemon_client::paths()?;
    let page = paths.web_open_path();
    let failed = |error: std::io::Error| CliError::failed(format!("{}: {error}", page.display()));
    if let Some(dir) = page.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(failed)?;
    }
    match std::fs::remove_file(&page) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(failed(error)),
    }
    // The link is ASCII without quotes or markup (a host, a port, hex).
    let html = format!(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\
         <meta http-equiv=\"refresh\" content=\"0;url={url}\"><title>pi daemon</title>\
         <p><a href=\"{url}\">Open the pi daemon's web UI</a></p>\n"
    );
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&page)
        .map_err(failed)?;
    file.write_all(html.as_bytes()).map_err(failed)?;
    Ok(page)
}

/// A port of the loopback that is free now.
fn free_port() -> Result<u16, CliError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| CliError::failed(format!("cannot find a free local port: {error}")))
}
