//! `--seat-key SEAT=FILE` of `gaos play` and `gaos bench run`: the seat keys
//! (`gaos keygen` files) given on the command line, by seat.

use std::collections::BTreeMap;
use std::path::Path;

use gaos_runner::signing::SeatSigningKey;

/// Read every `SEAT=FILE`: each names one of `seats`, at most once.
pub(crate) fn read_seat_keys(specs: &[String], seats: &[String]) -> Result<BTreeMap<String, SeatSigningKey>, String> {
    let mut given = BTreeMap::new();
    for spec in specs {
        let (seat, file) = spec.split_once('=').ok_or_else(|| format!("--seat-key {spec}: expected SEAT=FILE"))?;
        if !seats.iter().any(|s| s == seat) {
            return Err(format!("--seat-key {spec}: no seat {seat:?} (seats: {})", seats.join(", ")));
        }
        let key = SeatSigningKey::read_file(Path::new(file)).map_err(|e| format!("--seat-key {e}"))?;
        if given.insert(seat.to_owned(), key).is_some() {
            return Err(format!("--seat-key: seat {seat} has two keys"));
        }
    }
    Ok(given)
}
