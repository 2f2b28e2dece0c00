//! `gaos keygen`: a seat's Ed25519 key pair for RFC-010 signed play. The
//! key file (`gaos.seat-key.v1`, mode 0600) holds the 32-byte seed; the
//! `.pub` file beside it is the seat's roster entry for a create request's
//! `seatKeys`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use gaos_runner::signing::SeatSigningKey;

/// `gaos keygen` arguments.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where to write the private key file (FILE.pub gets the roster entry).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The seat the key is for (named in FILE.pub's roster entry).
    #[arg(long)]
    seat: String,
    /// `signingTier.N` of the roster entry: an unsigned move must be covered
    /// by a signature of the seat within N ticks (this stack signs every move).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    tier: u64,
    /// Replace FILE when it exists.
    #[arg(long)]
    force: bool,
}

/// Write a fresh key pair.
pub fn run(args: KeygenArgs) -> ExitCode {
    match keygen(&args) {
        Ok(public) => {
            println!("{public}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gaos keygen: {e}");
            ExitCode::from(2)
        }
    }
}

fn keygen(args: &KeygenArgs) -> Result<String, String> {
    if !gaos_kernel::protocol::is_valid_participant_id(&args.seat) {
        return Err(format!("{:?} is not a seat id (^[A-Za-z0-9_.:@-]{{1,128}}$)", args.seat));
    }
    let key = SeatSigningKey::from_seed(rand::random::<[u8; 32]>());
    let public = gaos_json::canonical_json(&key.seat_key(&args.seat, args.tier));
    write_private(&args.out, &(gaos_json::canonical_json(&key.to_file_value()) + "\n"), args.force)?;
    let mut pub_path = args.out.clone().into_os_string();
    pub_path.push(".pub");
    std::fs::write(&pub_path, format!("{public}\n"))
        .map_err(|e| format!("cannot write {}: {e}", Path::new(&pub_path).display()))?;
    Ok(public)
}

/// Create `path` with mode 0600 (refusing to overwrite unless `force`).
fn write_private(path: &Path, text: &str, force: bool) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    file.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
