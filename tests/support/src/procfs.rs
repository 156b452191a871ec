//! What benches read about a process from `/proc` (Linux): CPU time and `status` fields.

/// User plus system CPU seconds of process `pid` so far (`/proc/PID/stat`, 10 ms ticks).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / 100.0
}

/// CPU seconds process `pid` has run so far, summed over its threads with nanosecond
/// resolution (`/proc/PID/task/*/schedstat`). Threads that ended are not counted, so a
/// measurement must not span thread exits.
pub fn thread_cpu_seconds(pid: u32) -> f64 {
    let mut nanos = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let path = task.unwrap().path().join("schedstat");
        if let Ok(text) = std::fs::read_to_string(path) {
            nanos += text
                .split_whitespace()
                .next()
                .and_then(|field| field.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    nanos as f64 / 1e9
}

/// A numeric field of `/proc/PID/status` (`"VmRSS:"`, `"VmHWM:"`, `"Threads:"`; sizes in
/// KiB).
pub fn status_value(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("/proc/{pid}/status has no numeric {field}"))
}
