//! `pictl web`: a one-time login link to the web UI the daemon serves (`web/login`), opened
//! in the desktop's browser or printed. With `--remote` the far daemon's listener is forwarded
//! to a loopback port here through ssh (`ssh -N -L`), and the link points there; the command
//! then keeps the forward open until Ctrl+C.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use pi_protocol::v1::{WebLogin, WebLoginParams, WebLoginResponse};

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
    let login: WebLoginResponse = client.call::<WebLogin>(&WebLoginParams {}).await?;
    let Some(remote) = remote else {
        announce(&args, &login.url, login.expires_at, None);
        return Ok(ExitCode::SUCCESS);
    };
    // The far daemon's listener, forwarded to a port of this machine's loopback.
    let local = match args.port {
        Some(port) => port,
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
        super::login::open_browser(url);
    }
}

/// A port of the loopback that is free now.
fn free_port() -> Result<u16, CliError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| CliError::failed(format!("cannot find a free local port: {error}")))
}
