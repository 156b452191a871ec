//! `pictl send|steer|follow-up|abort ID ...`: drive a live session from the command line.
//!
//! `send` starts a run (`session/prompt`) and returns at once; `steer` and `follow-up` queue a
//! message for the running session; `abort` stops the run and returns once the session is
//! idle. Messages take the same `@file` arguments and piped stdin as `pictl run`. Nothing is
//! printed on success; watch the session with `pictl watch ID`.

use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{
    SessionAbort, SessionFollowUp, SessionIdParams, SessionMessageParams, SessionPrompt,
    SessionSteer,
};

use crate::attachments;
use crate::daemon_client::{self, find_session};
use crate::error::CliError;

/// Which queue a message goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Start a run.
    Prompt,
    /// After the running tools.
    Steer,
    /// When the agent would stop.
    FollowUp,
}

/// Options of `send`, `steer` and `follow-up`.
#[derive(Debug, Args)]
pub struct MessageArgs {
    /// Session id or unique prefix
    pub id: String,
    /// Files to attach (@path) and the message text (several words are joined by spaces)
    #[arg(value_name = "@FILE|TEXT")]
    pub inputs: Vec<String>,
}

/// Sends a message to a session.
pub async fn send(args: MessageArgs, delivery: Delivery) -> Result<ExitCode, CliError> {
    let (attachments, words) = attachments::split_inputs(&args.inputs)?;
    let stdin = attachments::read_piped_stdin()?;
    let text = words.join(" ");
    // Images are fitted per the session's `images.autoResize`: only then is the daemon asked
    // before the message is complete.
    let early = if attachments.has_images() {
        let client = daemon_client::connect().await?.client;
        let session = find_session(&client, &args.id).await?;
        Some((client, session))
    } else {
        None
    };
    let resize = match &early {
        Some((client, session)) => {
            attachments::resize_setting(client, std::path::Path::new(&session.cwd)).await
        }
        None => true,
    };
    let messages = attachments::first_messages(
        stdin,
        attachments.finish(resize),
        &[text]
            .into_iter()
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>(),
    );
    let Some((text, images)) = messages.into_iter().next() else {
        return Err(CliError::usage(
            "nothing to send: give a message, an @file or piped input",
        ));
    };
    let (client, session) = match early {
        Some(early) => early,
        None => {
            let client = daemon_client::connect().await?.client;
            let session = find_session(&client, &args.id).await?;
            (client, session)
        }
    };
    let params = SessionMessageParams {
        session_id: session.id,
        text,
        images,
    };
    match delivery {
        Delivery::Prompt => {
            client.call::<SessionPrompt>(&params).await?;
        }
        Delivery::Steer => {
            client.call::<SessionSteer>(&params).await?;
        }
        Delivery::FollowUp => {
            client.call::<SessionFollowUp>(&params).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Aborts a session's run; returns once it is idle.
pub async fn abort(id: &str) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    let session = find_session(&client, id).await?;
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: session.id,
        })
        .await?;
    Ok(ExitCode::SUCCESS)
}
