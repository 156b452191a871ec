//! What the benches of `tests/e2e/benches` share: the median of samples, sizes from the
//! environment, and the daemon binary to measure.

use std::path::PathBuf;

/// The median of `values` (the upper one of an even count); sorts them.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The number in environment variable `name`, if it is set to one.
pub fn env_number(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
}

/// The daemon binary: the workspace's `pid`, or `PI_BENCH_PID` (e.g. a script that runs
/// `pid` under valgrind's massif for a heap profile).
pub fn daemon_binary() -> PathBuf {
    std::env::var_os("PI_BENCH_PID")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_binary("pid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_sample() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 3.0);
    }
}
