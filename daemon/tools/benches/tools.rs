//! Tool benchmarks:
//!
//! - `grep` against `rg` on one generated source tree (256 MB, 2,048 files) and four queries:
//!   the tool in-process, and the `pi-grep` example as a whole process, each against the `rg`
//!   process, run alternately after a warm-up; medians of wall time;
//! - `read` with an offset deep into a 100 MB file: p50/p95;
//! - `bash` output throughput with truncation and the artifact spill (300 MB through `cat`).
//!
//! Run: `cargo build --release -p pi-tools --example pi-grep && cargo bench -p pi-tools --bench
//! tools`. Set `PI_BENCH_TREE=DIR` to search an
//! existing tree instead (e.g. `~/.cargo/registry/src`). Prints a Markdown table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "bench binary"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_agent::{ProgressSink, ToolInvocation, ToolOutput};
use pi_tools::{Artifacts, PathLocks, ShellConfig, ToolContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A regex with an inner literal, a plain literal, a regex whose prefix is on most lines,
/// and a case-insensitive literal.
const PATTERNS: [&str; 4] = [
    r"fn [a-z_]+_needle\(",
    "session_needle",
    r"let \w+_4 = value",
    "(?i)SESSION_NEEDLE",
];
/// Alternating runs per measure; medians are reported.
const RUNS: usize = 15;

fn main() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().canonicalize().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let context = Arc::new(ToolContext {
        session_id: "bench".to_owned(),
        cwd: root.clone(),
        env: Arc::new(std::env::vars().collect::<BTreeMap<_, _>>()),
        shell: ShellConfig::default(),
        artifacts: Artifacts::new(root.join("artifacts"))
            .session("bench")
            .unwrap(),
        locks: PathLocks::new(),
        uris: None,
        places: None,
        files: None,
        sandbox: None,
        spawner: pi_tools::spawn::Spawner::direct(),
        resize_images: true,
    });
    let call = |name: &str, arguments: Value| -> ToolOutput {
        let tool = pi_tools::create_tool(name, &context).unwrap();
        runtime.block_on(tool.execute(ToolInvocation {
            call_id: "bench".to_owned(),
            arguments,
            cancel: CancellationToken::new(),
            progress: ProgressSink::discard(),
        }))
    };
    let mut rows: Vec<(String, String, String)> = Vec::new();

    // grep vs rg.
    let tree = match std::env::var_os("PI_BENCH_TREE") {
        Some(tree) => PathBuf::from(tree),
        None => {
            let tree = root.join("tree");
            let bytes = generate_tree(&tree);
            println!("generated {} MB in {}", bytes / 1_000_000, tree.display());
            tree
        }
    };
    let tree_arg = tree.display().to_string();
    let pi_grep = example_binary("pi-grep");
    if pi_grep.is_none() {
        println!(
            "pi-grep was not built (cargo build --release -p pi-tools --example pi-grep); skipping the whole-process comparison"
        );
    }
    for pattern in PATTERNS {
        let rg = || {
            let status = Command::new("rg")
                .args([
                    "--hidden",
                    "-g",
                    "!.git",
                    "-n",
                    "--no-heading",
                    "--color=never",
                    pattern,
                ])
                .arg(&tree)
                .stdout(Stdio::null())
                .status()
                .expect("rg is installed");
            assert!(status.success() || status.code() == Some(1));
        };
        let grep_args = json!({"pattern": pattern, "path": tree_arg, "limit": 1_000_000});
        let output = call("grep", grep_args.clone());
        let matches = text(&output)
            .lines()
            .filter(|line| line.contains(':'))
            .count();
        rg();
        let (mut tool_times, mut rg_times) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            tool_times.push(time(|| {
                call("grep", grep_args.clone());
            }));
            rg_times.push(time(rg));
        }
        let (tool_p50, rg_p50) = (median(&mut tool_times), median(&mut rg_times));
        rows.push((
            format!("grep `{pattern}` ({matches} matches): tool in-process vs `rg` process"),
            format!(
                "{} vs {} ({:.2}×)",
                ms(tool_p50),
                ms(rg_p50),
                ratio(tool_p50, rg_p50)
            ),
            "≤ 1.3×".to_owned(),
        ));
        if let Some(pi_grep) = &pi_grep {
            let run = || {
                let status = Command::new(pi_grep)
                    .args([pattern, tree_arg.as_str(), "1000000"])
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(status.success());
            };
            run();
            let (mut tool_times, mut rg_times) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                tool_times.push(time(run));
                rg_times.push(time(rg));
            }
            let (tool_p50, rg_p50) = (median(&mut tool_times), median(&mut rg_times));
            rows.push((
                format!("grep `{pattern}`: `pi-grep` process vs `rg` process"),
                format!(
                    "{} vs {} ({:.2}×)",
                    ms(tool_p50),
                    ms(rg_p50),
                    ratio(tool_p50, rg_p50)
                ),
                "≤ 1.3×".to_owned(),
            ));
        }
    }

    // read deep into a 100 MB file.
    let large = root.join("large.txt");
    let lines = write_large_file(&large);
    let read_args =
        json!({"path": large.display().to_string(), "offset": lines - 1000, "limit": 50});
    assert!(!call("read", read_args.clone()).is_error);
    let mut read_times: Vec<Duration> = (0..20)
        .map(|_| {
            time(|| {
                call("read", read_args.clone());
            })
        })
        .collect();
    read_times.sort();
    rows.push((
        format!(
            "read offset={} limit=50 in a 100 MB file, p50 / p95 of 20",
            lines - 1000
        ),
        format!("{} / {}", ms(read_times[10]), ms(read_times[18])),
        "< 100 ms".to_owned(),
    ));

    // bash throughput with truncation (and the full output spilled to an artifact).
    let path = large.display().to_string();
    let command = format!("cat '{path}' '{path}' '{path}'");
    let total = 3 * std::fs::metadata(&large).unwrap().len();
    let mut bash_times: Vec<Duration> = (0..3)
        .map(|_| {
            time(|| {
                let output = call("bash", json!({"command": command}));
                assert!(!output.is_error && output.details["fullOutputPath"].is_string());
            })
        })
        .collect();
    let bash_p50 = median(&mut bash_times);
    rows.push((
        format!(
            "bash `cat` of {} MB, truncated, full output to an artifact, median of 3",
            total / 1_000_000
        ),
        format!(
            "{:.0} MB/s ({})",
            total as f64 / 1e6 / bash_p50.as_secs_f64(),
            ms(bash_p50)
        ),
        "> 100 MB/s".to_owned(),
    ));

    println!("\n| measure | value | target |\n|---|---|---|");
    for (measure, value, target) in rows {
        println!("| {measure} | {value} | {target} |");
    }
}

fn text(output: &ToolOutput) -> String {
    match output.content.first() {
        Some(pi_llm::UserContent::Text(text)) => text.text.clone(),
        _ => String::new(),
    }
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// `target/<profile>/examples/<name>`, next to this bench's `deps` directory.
fn example_binary(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    let path = profile_dir.join("examples").join(name);
    path.is_file().then_some(path)
}

/// Writes 2,048 source-like files of 128 KB in 32 directories (plus a `.gitignore`d build
/// directory the search must skip); returns the bytes written.
fn generate_tree(root: &Path) -> u64 {
    let words = [
        "value", "parse", "config", "session", "buffer", "index", "render", "token", "state",
        "stream", "handle", "count", "result", "entry", "cursor", "window",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut total = 0;
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    for dir in 0..32 {
        let dir_path = root.join(format!("module_{dir:02}"));
        std::fs::create_dir_all(&dir_path).unwrap();
        for file in 0..64 {
            let mut out = std::io::BufWriter::new(
                std::fs::File::create(dir_path.join(format!("file_{file:02}.rs"))).unwrap(),
            );
            let mut written = 0;
            while written < 128 * 1024 {
                let (a, b, c) = (next(), next(), next());
                let line = match a % 8 {
                    0 => format!(
                        "fn {}_{}(input: &{}) -> Result<{}, Error> {{\n",
                        words[(b % 16) as usize],
                        c % 1000,
                        words[(c % 16) as usize],
                        words[(a % 16) as usize]
                    ),
                    1 => "}\n\n".to_owned(),
                    2 => format!(
                        "    // {} the {} before the {} is ready\n",
                        words[(b % 16) as usize],
                        words[(c % 16) as usize],
                        words[(a / 16 % 16) as usize]
                    ),
                    _ if a % 20_000 == 3 => {
                        format!("fn {}_needle(x: u32) {{}}\n", words[(b % 16) as usize])
                    }
                    _ => format!(
                        "    let {}_{} = {}.{}({}, {});\n",
                        words[(b % 16) as usize],
                        c % 100,
                        words[(c % 16) as usize],
                        words[(a / 32 % 16) as usize],
                        b % 1000,
                        c % 77
                    ),
                };
                out.write_all(line.as_bytes()).unwrap();
                written += line.len();
            }
            out.flush().unwrap();
            total += written as u64;
        }
    }
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(
        root.join("build/generated.rs"),
        "fn ignored_needle() {}\n".repeat(1000),
    )
    .unwrap();
    total
}

/// The 100 MB file of the tests; returns its line count.
fn write_large_file(path: &Path) -> i64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let lines = 1_600_000;
    for n in 1..=lines {
        writeln!(
            out,
            "line {n:08} of the large file, padded with filler text ......"
        )
        .unwrap();
    }
    out.flush().unwrap();
    lines
}
