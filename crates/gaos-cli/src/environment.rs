//! The environment variables each subcommand reads, in one table, shown at
//! the end of the subcommand's `--help` ("Environment:"), so nobody has to
//! read the source to learn that `gaos serve` takes its operator token from
//! `GAOS_OPERATOR_TOKEN`. A command that reads none says so. Tests keep the
//! table complete: every subcommand has a row, and every variable the
//! binary's crates read appears in one.

/// One environment variable as one subcommand uses it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Variable {
    pub(crate) name: &'static str,
    /// What the command takes from it, in a line.
    pub(crate) use_: &'static str,
}

const fn var(name: &'static str, use_: &'static str) -> Variable {
    Variable { name, use_ }
}

const LOG: Variable = var("RUST_LOG", "log filter for the log lines on stderr (default: info)");
const HOST: Variable =
    var("GAOS_HOST", "the host's base URL when --host is not given (default: http://127.0.0.1:8899)");
const OPERATOR_WITH_HOST: Variable =
    var("GAOS_OPERATOR_TOKEN", "the operator token for --host when --token is not given");
const OPENAI_KEY: Variable = var(
    "OPENAI_API_KEY",
    "the API key of openai drivers (optional; --api-key-env NAME reads the variable NAME instead)",
);

/// Every subcommand (its words after `gaos`) and the variables it reads.
pub(crate) const READS: &[(&str, &[Variable])] = &[
    (
        "serve",
        &[
            var(
                "GAOS_OPERATOR_TOKEN",
                "the operator token; when unset, the one in DATA/operator-token (created on first start)",
            ),
            var(
                "GAOS_STORE",
                "the store when --store is not given: a postgres:// URL makes this host one of a cluster",
            ),
            LOG,
        ],
    ),
    ("games", &[]),
    ("keygen", &[]),
    ("conformance run", &[]),
    ("kernel-bench", &[]),
    ("replay verify", &[]),
    ("replay inspect", &[]),
    ("loadgen", &[var("GAOS_OPERATOR_TOKEN", "the operator token of the host under load (required)")]),
    ("long-bench ticks", &[]),
    ("long-bench restart", &[]),
    ("play", &[OPERATOR_WITH_HOST, OPENAI_KEY]),
    ("bench run", &[OPERATOR_WITH_HOST, OPENAI_KEY]),
    ("bench verify", &[]),
    ("arena run", &[OPERATOR_WITH_HOST, OPENAI_KEY]),
    ("arena verify", &[]),
    (
        "mcp",
        &[
            var(
                "GAOS_SEAT_TOKEN",
                "the seat's token when --token is not given (preferred: arguments are visible to other users)",
            ),
            var("GAOS_LEASE_TOKEN", "a lease token to drive under when --lease-token is not given"),
            HOST,
            var("RUST_LOG", "log filter for the log lines on stderr (default: warn,gaos_mcp=info)"),
        ],
    ),
    (
        "session new",
        &[
            HOST,
            var(
                "GAOS_OPERATOR_TOKEN",
                "the operator token when --operator-token is not given (else the file of --operator-token-file)",
            ),
        ],
    ),
    ("session act", &[HOST]),
    ("session observe", &[HOST]),
    ("session finalize", &[HOST]),
    ("session reset", &[HOST]),
];

/// The variables the subcommand at `path` reads, `None` for a path with no row.
pub(crate) fn reads(path: &str) -> Option<&'static [Variable]> {
    READS.iter().find(|(p, _)| *p == path).map(|(_, vars)| *vars)
}

/// `command` (the whole `gaos` tree) with an "Environment:" section at the
/// end of every subcommand's help; a command with subcommands lists what
/// they read, naming which read each variable.
pub(crate) fn annotate(command: clap::Command) -> clap::Command {
    annotate_at(command, "")
}

fn annotate_at(command: clap::Command, path: &str) -> clap::Command {
    let section =
        if command.has_subcommands() { group_section(path) } else { reads(path).map(leaf_section).unwrap_or_default() };
    let command = command.mut_subcommands(|sub| {
        let name = sub.get_name().to_owned();
        let sub_path = if path.is_empty() { name } else { format!("{path} {name}") };
        annotate_at(sub, &sub_path)
    });
    if section.is_empty() {
        return command;
    }
    let after = match command.get_after_help() {
        Some(existing) => format!("{existing}\n\n{section}"),
        None => section,
    };
    command.after_help(after)
}

fn leaf_section(vars: &[Variable]) -> String {
    if vars.is_empty() {
        return "Environment: this command reads no environment variables.".to_owned();
    }
    let width = vars.iter().map(|v| v.name.len()).max().unwrap_or(0);
    let mut text = "Environment:".to_owned();
    for v in vars {
        text.push_str(&format!("\n  {:<width$}  {}", v.name, v.use_));
    }
    text
}

/// For `gaos` itself and a command with subcommands: each variable their
/// subcommands read, with the subcommands that read it.
fn group_section(path: &str) -> String {
    let prefix = if path.is_empty() { String::new() } else { format!("{path} ") };
    let mut names: Vec<(&str, Vec<&str>)> = Vec::new();
    for (sub, vars) in READS.iter().filter(|(p, _)| path.is_empty() || p.starts_with(&prefix)) {
        for v in *vars {
            match names.iter_mut().find(|(name, _)| *name == v.name) {
                Some((_, users)) => users.push(sub),
                None => names.push((v.name, vec![sub])),
            }
        }
    }
    if names.is_empty() {
        return "Environment: these commands read no environment variables.".to_owned();
    }
    let width = names.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut text = "Environment (each command's --help says how it uses them):".to_owned();
    for (name, users) in names {
        text.push_str(&format!("\n  {name:<width$}  gaos {}", users.join(", gaos ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    fn leaf_paths(command: &clap::Command, path: &str, out: &mut Vec<String>) {
        let mut any = false;
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            any = true;
            let sub_path =
                if path.is_empty() { sub.get_name().to_owned() } else { format!("{path} {}", sub.get_name()) };
            leaf_paths(sub, &sub_path, out);
        }
        if !any {
            out.push(path.to_owned());
        }
    }

    #[test]
    fn every_subcommand_has_a_row_and_every_row_a_subcommand() {
        let mut leaves = Vec::new();
        leaf_paths(&Cli::command(), "", &mut leaves);
        leaves.sort();
        let mut rows: Vec<String> = READS.iter().map(|(path, _)| (*path).to_owned()).collect();
        rows.sort();
        assert_eq!(leaves, rows, "environment::READS names exactly the subcommands");
    }

    #[test]
    fn a_help_ends_with_what_its_command_reads() {
        let mut command = annotate(Cli::command());
        command.build();
        let serve = command.find_subcommand_mut("serve").expect("serve").render_long_help().to_string();
        assert!(serve.contains("Environment:\n  GAOS_OPERATOR_TOKEN  the operator token;"), "{serve}");
        let session = command.find_subcommand_mut("session").expect("session");
        let act = session.find_subcommand_mut("act").expect("act").render_long_help().to_string();
        assert!(act.contains("Exit status:") && act.contains(&leaf_section(&[HOST])), "{act}");
        let top = command.render_long_help().to_string();
        assert!(top.contains("GAOS_HOST            gaos mcp, gaos session new, gaos session act"), "{top}");
    }

    /// Every `"GAOS_…"` name in the source of the crates the binary links,
    /// outside comments.
    fn gaos_variables_in(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                gaos_variables_in(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source");
                for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for (at, _) in line.match_indices("\"GAOS_") {
                        let name: String =
                            line[at + 1..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
                        // `env!("GAOS_…")` is read by the compiler, not the binary.
                        if name.len() > "GAOS_".len() && !line[..at].ends_with("env!(") {
                            out.push(name);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_variable_the_binary_reads_is_in_a_row() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut names = Vec::new();
        for krate in ["gaos-cli", "gaos-host", "gaos-mcp", "gaos-runner", "gaos-client", "gaos-session", "gaos-web"] {
            gaos_variables_in(&crates.join(krate).join("src"), &mut names);
        }
        names.extend(["RUST_LOG".to_owned(), gaos_runner::drivers::openai::DEFAULT_API_KEY_ENV.to_owned()]);
        names.sort();
        names.dedup();
        assert!(names.contains(&"GAOS_OPERATOR_TOKEN".to_owned()), "the scan finds what the binary reads: {names:?}");
        for name in names {
            assert!(
                READS.iter().any(|(_, vars)| vars.iter().any(|v| v.name == name)),
                "{name} is read by the binary but no command's help names it (add it to environment::READS)"
            );
        }
    }
}
