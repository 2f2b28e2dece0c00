//! `duel`: the whole `gaos` command line, serving the built-in games and
//! `example/duel`.

use std::process::ExitCode;

fn main() -> ExitCode {
    gaos_cli::App::new().game(gaos_example_duel::DuelGame).run()
}
