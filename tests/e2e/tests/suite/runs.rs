//! The end of a run as clients see it: a client that hears `agent_end` may send the next
//! prompt at once (pi's RPC clients and scripts do) and finds the session idle, on several
//! sessions at once.

use pi_protocol::v1::SessionPrompt;
use pi_test_support::events::run_events;
use pi_test_support::model_server::Turn;

use super::harness::{World, prompt};

const SESSIONS: usize = 8;
const PROMPTS: usize = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_the_moment_agent_end_arrives_is_accepted() {
    let world = World::start("anthropic-messages").await;
    for _ in 0..SESSIONS * PROMPTS {
        world.server.push(Turn::reply().text("done"));
    }
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        let (client, events) = world.client().await;
        let session = world.attached_session(&client).await;
        sessions.push((client, events, session.id));
    }
    let runs = sessions.into_iter().map(|(client, mut events, id)| {
        tokio::spawn(async move {
            for n in 0..PROMPTS {
                // No wait between the end of a run and the next prompt.
                client
                    .call::<SessionPrompt>(&prompt(&id, &format!("prompt {n}")))
                    .await
                    .map_err(|error| format!("prompt {n} of {id}: {error}"))?;
                let events = run_events(&mut events, &id).await;
                assert!(!events.is_empty());
            }
            Ok::<_, String>(())
        })
    });
    let mut refused = Vec::new();
    for run in runs.collect::<Vec<_>>() {
        if let Err(error) = run.await.unwrap() {
            refused.push(error);
        }
    }
    assert!(refused.is_empty(), "prompts refused: {refused:?}");
}

/// The date in the system prompt is the machine's local date, as pi's: with the daemon in
/// UTC+14 and in UTC-12 (at every instant one of them is on another day than UTC).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_carries_the_local_date() {
    let mut world = World::start("anthropic-messages").await;
    for (zone, offset_hours) in [("XYZ-14", 14), ("XYZ+12", -12)] {
        world.daemon.kill9().await;
        world.daemon.set_launch_env("TZ", zone);
        world.daemon.restart().await;
        let (client, _events) = world.client().await;
        let local = || {
            let offset = chrono::FixedOffset::east_opt(offset_hours * 3600).unwrap();
            chrono::Utc::now()
                .with_timezone(&offset)
                .format("%Y-%m-%d")
                .to_string()
        };
        let before = local();
        let session = world.attached_session(&client).await;
        let got = client
            .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
                session_id: session.id.clone(),
            })
            .await
            .unwrap();
        let after = local();
        let prompt = got.system_prompt.unwrap_or_default();
        assert!(
            prompt.contains(&format!("Current date: {before}"))
                || prompt.contains(&format!("Current date: {after}")),
            "TZ={zone}: expected {before} in {prompt}"
        );
    }
}
