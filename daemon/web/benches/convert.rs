//! HTML to Markdown on a generated page of about 1 MB shaped like documentation (a head
//! with scripts and styles, navigation, sections of paragraphs with links and inline code,
//! lists, code blocks, tables). Target: under 50 ms of CPU per page in release. Both the
//! thread's CPU time and the wall time are printed: on a busy machine the wall time grows
//! with the other work, the CPU time much less.
//!
//! Run: `cargo bench -p pi-web --bench convert` (`PI_BENCH_RUNS` sets the runs, default 20).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use url::Url;

fn page(target_bytes: usize) -> String {
    let mut html = String::with_capacity(target_bytes + 4096);
    html.push_str(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Generated documentation</title>\
         <style>body { font-family: sans-serif } .x { color: red }</style>\
         <script>window.analytics = function () { return 42; };</script></head><body>\
         <nav><ul><li><a href=\"/\">Home</a></li><li><a href=\"/docs\">Docs</a></li></ul></nav><main>",
    );
    let mut section = 0;
    while html.len() < target_bytes {
        section += 1;
        write!(
            html,
            "<section><h2 id=\"s{section}\">Section {section}: configuring the widget</h2>\
             <p>The <strong>widget</strong> reads its settings from <code>widget.toml</code>; see \
             <a href=\"/docs/widget#s{section}\">the widget reference</a> and \
             <a href=\"https://example.com/other/{section}\">another page</a> for the <em>details</em>. \
             Every option has a default, and options set on the command line win over the file.</p>\
             <ul><li>First item with <a href=\"item/{section}\">a link</a></li><li>Second item, \
             <code>inline()</code></li><li>Third item<ul><li>nested</li></ul></li></ul>\
             <pre><code class=\"language-rust\">fn main() {{\n    let x = {section};\n    println!(\"{{x}}\");\n}}\n</code></pre>\
             <table><thead><tr><th>Name</th><th>Default</th></tr></thead><tbody>\
             <tr><td>size</td><td>{section}</td></tr><tr><td>mode</td><td>fast</td></tr></tbody></table>\
             <svg width=\"10\" height=\"10\"><circle cx=\"5\" cy=\"5\" r=\"4\"/></svg>\
             <script>track({section});</script></section>"
        )
        .unwrap();
    }
    html.push_str("</main><footer><p>Footer text.</p></footer></body></html>");
    html
}

/// This thread's CPU time, in milliseconds.
fn thread_cpu_ms() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    now.tv_sec as f64 * 1000.0 + now.tv_nsec as f64 / 1e6
}

fn main() {
    let runs = std::env::var("PI_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse::<usize>().ok())
        .unwrap_or(20)
        .max(1);
    let html = page(1024 * 1024);
    let base = Url::parse("https://example.com/docs/widget").unwrap();
    // One run to warm caches and check the output is sane.
    let markdown = pi_web::html_to_markdown(&html, Some(&base));
    assert!(markdown.starts_with("# Generated documentation"));
    assert!(!markdown.contains("track("));
    let mut cpu = Vec::with_capacity(runs);
    let mut wall = Vec::with_capacity(runs);
    for _ in 0..runs {
        let cpu_start = thread_cpu_ms();
        let start = Instant::now();
        let markdown = pi_web::html_to_markdown(black_box(&html), Some(&base));
        wall.push(start.elapsed().as_secs_f64() * 1000.0);
        cpu.push(thread_cpu_ms() - cpu_start);
        black_box(markdown);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "html_to_markdown: {:.2} MB of HTML -> {:.2} MB of Markdown over {runs} runs: \
         CPU median {:.1} ms (best {:.1}), wall median {:.1} ms (target < 50 ms of CPU)",
        html.len() as f64 / 1e6,
        markdown.len() as f64 / 1e6,
        cpu[runs / 2],
        cpu[0],
        wall[runs / 2],
    );
}
