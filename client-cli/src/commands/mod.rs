//! One module per `pictl` command group.

pub mod attach;
pub mod daemon;

/// Prints one JSON object as a line on stdout.
pub fn print_json(value: &serde_json::Value) {
    #[allow(clippy::print_stdout, reason = "the command's output")]
    {
        println!("{value}");
    }
}
