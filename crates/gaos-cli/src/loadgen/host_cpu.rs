//! Host CPU time from `/proc/PID/stat` (Linux): user plus system time of
//! the host processes `--host-pid` names, read at the start and the end of
//! the measured window, so the report can say how much host CPU one
//! acknowledged action cost.

/// Clock ticks per second of `/proc` times (`getconf CLK_TCK`; 100 on
/// every Linux this runs on).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds (user + system) the process `pid` has used so far.
pub(super) fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start after ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line: 12 and 13 after ')'.
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / TICKS_PER_SECOND)
}

/// The summed CPU seconds of `pids` (those still running).
pub(super) fn total(pids: &[u32]) -> f64 {
    pids.iter().filter_map(|pid| cpu_seconds(*pid)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_some_cpu() {
        let spin = std::time::Instant::now();
        while spin.elapsed().as_millis() < 30 {}
        let used = cpu_seconds(std::process::id()).expect("a /proc reading");
        assert!(used > 0.0, "{used}");
        assert_eq!(cpu_seconds(u32::MAX), None);
    }
}
