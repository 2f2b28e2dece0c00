//! `gaos session ...`: the host's session routes from a shell, without
//! writing request bodies by hand. Each command is one HTTP exchange through
//! gaos-client (so a submission carries exactly the fields the reference
//! clients send), and prints what a shell script needs next:
//!
//! - `new` creates a session (operator token) and prints `export NAME=value`
//!   lines for the session id and every seat's token, ready for `eval`;
//! - `act` builds the full `CommandSubmission` (protocol, tickId, revision,
//!   submissionId, ...) at the seat's current window and sends the command;
//! - `observe` and `finalize` print the seat's envelope and the result.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use gaos_client::{ClientError, FinalizeRequest, SessionClient, SubmitOptions, TickResult};
use gaos_json::{Value, canonical_json};

/// The host the README's walkthrough runs (`gaos serve`'s default).
const DEFAULT_HOST: &str = "http://127.0.0.1:8899";

/// `gaos session ...`.
#[derive(Subcommand)]
pub enum SessionCommand {
    /// Create a session; print `export SESSION=… <SEAT>=…` lines for `eval`.
    #[command(after_help = "Example:\n  eval \"$(gaos session new --game conformance/hilo)\"\n  \
        echo \"$SESSION\" \"$ALICE\" \"$BOB\"\n\n\
        Each seat's token is exported under the seat's name in capitals (non-alphanumerics become _;\n\
        SEAT_ in front when it starts with a digit or is SESSION or SPECTATOR); the spectator token as SPECTATOR.")]
    New(NewArgs),
    /// Submit one command for a seat at its current window; print the answer's envelope.
    #[command(
        after_help = "Example:\n  gaos session act --session \"$SESSION\" --seat alice --token \"$ALICE\" '{\"card\":0}'\n\n\
        Exit status: 0 accepted (resolved or waiting for other seats), 1 refused (illegal command, \
        not your turn, ...), 2 usage error."
    )]
    Act(ActArgs),
    /// Print a seat's current envelope (its view, legal actions, whose turn).
    Observe(SeatArgs),
    /// Fix the result once the game is over; print it.
    Finalize(SeatArgs),
    /// Start the next level of a run created with "advanceOn": "reset", once
    /// the level being played ended; print the new level's envelope.
    #[command(after_help = "Exit status: 0 the next level started, 1 refused (the level is still \
        being played, the run is over, the session plays one episode), 2 usage error.")]
    Reset(SeatArgs),
}

/// Where the host is.
#[derive(Args)]
pub struct HostArg {
    /// The host's base URL [default: $GAOS_HOST, else http://127.0.0.1:8899].
    #[arg(long = "host")]
    url: Option<String>,
}

impl HostArg {
    fn url(&self) -> String {
        self.url
            .clone()
            .or_else(|| std::env::var("GAOS_HOST").ok())
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_HOST.to_owned())
    }
}

/// `gaos session new`.
#[derive(Args)]
pub struct NewArgs {
    #[command(flatten)]
    host: HostArg,
    /// The game id (e.g. conformance/hilo).
    #[arg(long)]
    game: String,
    /// A level the game ships (default: its first).
    #[arg(long)]
    level_id: Option<String>,
    /// Session seed (default: the host picks).
    #[arg(long)]
    seed: Option<u32>,
    /// The operator token (default: $GAOS_OPERATOR_TOKEN, else the file of --operator-token-file).
    #[arg(long)]
    operator_token: Option<String>,
    /// Where `gaos serve` wrote the operator token.
    #[arg(long, default_value = "gaos-data/operator-token")]
    operator_token_file: PathBuf,
}

/// A seat's credentials.
#[derive(Args)]
pub struct SeatArgs {
    #[command(flatten)]
    host: HostArg,
    /// The session id.
    #[arg(long)]
    session: String,
    /// The seat's token (from `gaos session new`).
    #[arg(long)]
    token: String,
}

/// `gaos session act`.
#[derive(Args)]
pub struct ActArgs {
    #[command(flatten)]
    seat_args: SeatArgs,
    /// The seat that acts (the token's seat).
    #[arg(long)]
    seat: String,
    /// The game's command as JSON, e.g. '{"card":0}' (one of the listed legal actions).
    command: String,
}

/// Run a `gaos session` subcommand.
pub fn run(command: SessionCommand) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(2, format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(async {
        match command {
            SessionCommand::New(args) => new(args).await,
            SessionCommand::Act(args) => act(args).await,
            SessionCommand::Observe(args) => observe(args).await,
            SessionCommand::Finalize(args) => finalize(args).await,
            SessionCommand::Reset(args) => reset(args).await,
        }
    })
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("gaos session: {message}");
    ExitCode::from(code)
}

/// A host refusal exits 1 with the host's words; a connection failure says
/// which host was tried (the usual cause: `gaos serve` is not running).
fn client_failure(host: &str, error: &ClientError) -> ExitCode {
    match error {
        ClientError::Transport { .. } | ClientError::Timeout { .. } => {
            fail(1, format!("{error}\n(is `gaos serve` running at {host}? set --host or GAOS_HOST)"))
        }
        _ => fail(1, error),
    }
}

/// `alice` → `ALICE`, `seat-2` → `SEAT_2`: a shell variable name.
fn variable_name(seat: &str) -> String {
    let name: String =
        seat.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    // A leading digit is no shell name; SESSION and SPECTATOR are taken.
    if name.starts_with(|c: char| c.is_ascii_digit()) || name == "SESSION" || name == "SPECTATOR" {
        format!("SEAT_{name}")
    } else {
        name
    }
}

/// Single-quote a value for a POSIX shell.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

async fn new(args: NewArgs) -> ExitCode {
    let host = args.host.url();
    let token = args.operator_token.or_else(|| std::env::var("GAOS_OPERATOR_TOKEN").ok());
    let token = match token.filter(|t| !t.trim().is_empty()) {
        Some(token) => token,
        None => match std::fs::read_to_string(&args.operator_token_file) {
            Ok(text) => text.trim().to_owned(),
            Err(e) => {
                return fail(
                    2,
                    format!(
                        "no operator token: {} is unreadable ({e}); run this where `gaos serve` keeps its data, \
                         or pass --operator-token-file, --operator-token or GAOS_OPERATOR_TOKEN",
                        args.operator_token_file.display()
                    ),
                );
            }
        },
    };
    let operator = match SessionClient::new(&host, token) {
        Ok(client) => client,
        Err(e) => return fail(2, e),
    };
    let mut request = gaos_json::Map::new();
    request.insert("game".into(), args.game.clone().into());
    if let Some(level) = args.level_id {
        request.insert("levelId".into(), level.into());
    }
    if let Some(seed) = args.seed {
        request.insert("seed".into(), seed.into());
    }
    let created = match operator.create_session(&Value::Object(request)).await {
        Ok(created) => created,
        Err(e) => return client_failure(&host, &e),
    };
    let Some(credentials) = created.credentials else {
        return fail(1, "the host created the session but handed out no seat tokens");
    };
    println!("export SESSION={}", shell_quote(&created.session_id));
    for (seat, token) in &credentials.seats {
        println!("export {}={}", variable_name(seat), shell_quote(token));
    }
    if let Some(spectator) = &credentials.spectator {
        println!("export SPECTATOR={}", shell_quote(spectator));
    }
    let seats: Vec<&str> = credentials.seats.keys().map(String::as_str).collect();
    eprintln!("created {} session {} (seats: {})", args.game, created.session_id, seats.join(", "));
    ExitCode::SUCCESS
}

fn seat_client(args: &SeatArgs, seat: Option<&str>) -> Result<SessionClient, ExitCode> {
    let mut builder = SessionClient::builder(args.host.url()).token(&args.token);
    if let Some(seat) = seat {
        builder = builder.participant_id(seat);
    }
    builder.build().map_err(|e| fail(2, e))
}

/// Print an envelope (one canonical JSON line) and a one-line summary on stderr.
fn print_envelope(answer: &TickResult) {
    println!("{}", canonical_json(&answer.envelope.to_value()));
    let done = answer.envelope.tick.get("done").and_then(Value::as_bool).unwrap_or(false);
    let summary = if answer.is_pending() {
        let awaiting = answer.envelope.awaiting_participants.clone().unwrap_or_default();
        format!(
            "accepted; waiting for {}",
            if awaiting.is_empty() { "other seats".into() } else { awaiting.join(", ") }
        )
    } else if done {
        "the game is over; finalize it with `gaos session finalize`".into()
    } else {
        format!("revision {}", answer.envelope.revision)
    };
    eprintln!("{summary}");
}

async fn act(args: ActArgs) -> ExitCode {
    let command = match gaos_json::parse(&args.command) {
        Ok(command) => command,
        Err(e) => return fail(2, format!("the command {:?} is not JSON ({e}); e.g. '{{\"card\":0}}'", args.command)),
    };
    let client = match seat_client(&args.seat_args, Some(&args.seat)) {
        Ok(client) => client,
        Err(code) => return code,
    };
    // No remembered binding: the client reads the seat's current window
    // first, so the submission targets the window the seat is in now.
    match client.submit_command(&args.seat_args.session, &args.seat, command, SubmitOptions::default()).await {
        Ok(answer) => {
            print_envelope(&answer);
            ExitCode::SUCCESS
        }
        Err(e) => client_failure(&args.seat_args.host.url(), &e),
    }
}

async fn observe(args: SeatArgs) -> ExitCode {
    let client = match seat_client(&args, None) {
        Ok(client) => client,
        Err(code) => return code,
    };
    match client.observe(&args.session).await {
        Ok(answer) => {
            print_envelope(&answer);
            ExitCode::SUCCESS
        }
        Err(e) => client_failure(&args.host.url(), &e),
    }
}

async fn reset(args: SeatArgs) -> ExitCode {
    let client = match seat_client(&args, None) {
        Ok(client) => client,
        Err(code) => return code,
    };
    // Reset at the revision the seat sees now: a resend after a lost
    // answer is then answered without starting a second level.
    let seen = match client.observe(&args.session).await {
        Ok(seen) => seen,
        Err(e) => return client_failure(&args.host.url(), &e),
    };
    match client.reset(&args.session, None, Some(seen.envelope.revision as u64)).await {
        Ok(answer) => {
            print_envelope(&answer);
            ExitCode::SUCCESS
        }
        Err(e) => client_failure(&args.host.url(), &e),
    }
}

async fn finalize(args: SeatArgs) -> ExitCode {
    let client = match seat_client(&args, None) {
        Ok(client) => client,
        Err(code) => return code,
    };
    match client.finalize(&args.session, &FinalizeRequest::default()).await {
        Ok(result) => {
            // The replay is long JSONL text; it has its own route.
            let mut value = result.to_value();
            if let Some(map) = value.as_object_mut() {
                map.remove("replay");
            }
            println!("{}", canonical_json(&value));
            eprintln!("finalized; the replay: GET /v1/sessions/{}/replay (any seat's token)", args.session);
            ExitCode::SUCCESS
        }
        Err(e) => client_failure(&args.host.url(), &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seat_names_become_shell_variables() {
        assert_eq!(variable_name("alice"), "ALICE");
        assert_eq!(variable_name("seat-2"), "SEAT_2");
        assert_eq!(variable_name("2p"), "SEAT_2P");
        assert_eq!(variable_name("session"), "SEAT_SESSION");
    }

    #[test]
    fn values_are_single_quoted() {
        assert_eq!(shell_quote("gaos_seat_x"), "'gaos_seat_x'");
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    }
}
