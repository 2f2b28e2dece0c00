//! [`App`]: the `gaos` command line over one registry of games.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};
use gaos_games::{GameOrigin, GameRegistry, RegistryError, replacement_notice};
use gaos_kernel::Game;

use crate::cli::{Cli, dispatch};

/// The whole `gaos` command line, serving the games of its registry: the
/// built-in ones plus those added with [`App::game`].
pub struct App {
    registry: GameRegistry,
    /// One line per added game that replaced one of the same id.
    notices: Vec<String>,
    /// Games the registry refused; `run` reports them instead of running.
    refused: Vec<RegistryError>,
}

impl Default for App {
    fn default() -> Self {
        Self::new()
    }
}

impl App {
    /// The command line with the built-in games.
    pub fn new() -> Self {
        Self::with_registry(GameRegistry::builtin())
    }

    /// The command line with exactly the games of `registry`.
    pub fn with_registry(registry: GameRegistry) -> Self {
        App { registry, notices: Vec::new(), refused: Vec::new() }
    }

    /// Add a game from this crate. A game with the id of a registered one
    /// replaces it (`run` says so on stderr); a game whose adapter id another
    /// game uses is refused, and `run` then exits with that error.
    pub fn game(mut self, game: impl Game + 'static) -> Self {
        let id = game.game_ref().id;
        match self.registry.replace(Arc::new(game), GameOrigin::Crate) {
            Ok(Some(replaced)) => self.notices.push(replacement_notice(&id, &GameOrigin::Crate, &replaced.origin)),
            Ok(None) => {}
            Err(e) => self.refused.push(e),
        }
        self
    }

    /// The games this command line serves.
    pub fn registry(&self) -> &GameRegistry {
        &self.registry
    }

    /// The stderr lines `run` prints first: one per added game that replaced
    /// a registered one ("the crate game X replaces the built-in game X").
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Parse the process's arguments and run the subcommand.
    pub fn run(self) -> ExitCode {
        self.run_from(std::env::args_os())
    }

    /// Parse `args` (the first is the program name) and run the subcommand.
    pub fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let parsed = crate::environment::annotate(Cli::command())
            .try_get_matches_from(args)
            .and_then(|matches| Cli::from_arg_matches(&matches));
        let cli = match parsed {
            Ok(cli) => cli,
            Err(e) => {
                let _ = e.print();
                return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
            }
        };
        if !self.refused.is_empty() {
            for e in &self.refused {
                eprintln!("gaos: cannot add a game: {e}");
            }
            return ExitCode::from(2);
        }
        for notice in &self.notices {
            eprintln!("{notice}");
        }
        dispatch(cli.command, &self.registry)
    }
}
