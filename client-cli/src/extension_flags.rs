//! Flags pi extensions register (`pi.registerFlag`): pi's command line takes any `--name`
//! it does not know as one (`--name=value`, `--name value` when the next argument does not
//! start with `-` or `@`, or `--name` alone: `true`), and the session's extensions read it
//! with `pi.getFlag`. `pictl run`, `pictl rpc` and the TUI's forms take them the same way:
//! they are split off before the command line is parsed, and given to `session/create`; a
//! flag no extension registers fails the session's creation, as pi fails to start.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde_json::Value;

/// The subcommands that start a session.
const SESSION_COMMANDS: [&str; 3] = ["run", "rpc", "attach"];

/// `args` (the program first) without the extension flags of a command that starts a
/// session, and those flags by name.
pub fn split(args: Vec<OsString>, cli: &clap::Command) -> (Vec<OsString>, BTreeMap<String, Value>) {
    let mut flags = BTreeMap::new();
    let strings: Option<Vec<String>> = args
        .iter()
        .map(|arg| arg.to_str().map(str::to_owned))
        .collect();
    // A command line that is not UTF-8 is left to clap as it is.
    let Some(strings) = strings else {
        return (args, flags);
    };
    // The command whose flags count: a session-starting subcommand, or the bare form (the
    // TUI). Other subcommands keep their arguments as they are.
    let mut start = 1;
    let mut command = cli;
    while start < strings.len() {
        let arg = &strings[start];
        if arg == "--" {
            break;
        }
        if arg.starts_with('-') {
            let long = arg
                .strip_prefix("--")
                .map(|long| long.split('=').next().unwrap_or(long));
            if long.is_some_and(|name| !knows(cli, name)) {
                // Not pictl's: the bare form's own (an extension flag).
                break;
            }
            // A value follows `--name` (not `--name=v`) or a bare `-x` (not `-xVALUE`).
            let value_follows = if arg.starts_with("--") {
                !arg.contains('=')
            } else {
                arg.len() == 2
            };
            // (An optional value, as `--list-models`'s, may be missing at the end.)
            start = (start + 1 + usize::from(takes_value(cli, arg) && value_follows))
                .min(strings.len());
            continue;
        }
        match cli.find_subcommand(arg) {
            Some(sub) if SESSION_COMMANDS.contains(&sub.get_name()) => {
                command = sub;
                start += 1;
            }
            Some(_) => return (args, flags),
            None => {}
        }
        break;
    }
    let mut kept: Vec<OsString> = strings[..start].iter().map(OsString::from).collect();
    let mut index = start;
    while index < strings.len() {
        let arg = &strings[index];
        index += 1;
        if arg == "--" {
            kept.extend(strings[index - 1..].iter().map(OsString::from));
            break;
        }
        let Some(long) = arg.strip_prefix("--") else {
            kept.push(arg.into());
            if arg.len() == 2
                && arg.starts_with('-')
                && takes_value(command, arg)
                && let Some(value) = strings.get(index)
            {
                kept.push(value.into());
                index += 1;
            }
            continue;
        };
        let (name, inline) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        if knows(command, name) {
            kept.push(arg.into());
            if inline.is_none()
                && takes_value(command, arg)
                && let Some(value) = strings.get(index)
            {
                kept.push(value.into());
                index += 1;
            }
            continue;
        }
        let value = match inline {
            Some(value) => Value::from(value),
            None => match strings.get(index) {
                Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                    index += 1;
                    Value::from(next.as_str())
                }
                _ => Value::Bool(true),
            },
        };
        flags.insert(name.to_owned(), value);
    }
    (kept, flags)
}

/// pi's short options of more than one letter, which clap cannot have, as their long forms.
const PI_SHORT_OPTIONS: [(&str, &str); 6] = [
    ("-nt", "--no-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-ne", "--no-extensions"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
    ("-nc", "--no-context-files"),
];

/// `args` with pi's `-nt`, `-nbt`, `-ne`, `-ns`, `-np` and `-nc` spelled long (up to `--`).
pub fn expand_pi_short_options(args: Vec<OsString>) -> Vec<OsString> {
    let mut ended = false;
    args.into_iter()
        .map(|arg| {
            if ended {
                return arg;
            }
            ended = arg == "--";
            PI_SHORT_OPTIONS
                .iter()
                .find(|(short, _)| arg == *short)
                .map_or(arg, |(_, long)| OsString::from(long))
        })
        .collect()
}

/// Whether `command` has the long option `name` (or it is clap's own).
fn knows(command: &clap::Command, name: &str) -> bool {
    name == "help"
        || name == "version"
        || command.get_arguments().any(|arg| {
            arg.get_long() == Some(name)
                || arg
                    .get_all_aliases()
                    .is_some_and(|aliases| aliases.contains(&name))
        })
}

/// Whether the option `arg` (`--name`, `--name=…` or `-x`) of `command` takes a value.
fn takes_value(command: &clap::Command, arg: &str) -> bool {
    let found = if let Some(long) = arg.strip_prefix("--") {
        let name = long.split_once('=').map_or(long, |(name, _)| name);
        command.get_arguments().find(|option| {
            option.get_long() == Some(name)
                || option
                    .get_all_aliases()
                    .is_some_and(|aliases| aliases.contains(&name))
        })
    } else {
        let short = arg.chars().nth(1);
        command
            .get_arguments()
            .find(|option| option.get_short().is_some() && option.get_short() == short)
    };
    found.is_some_and(|option| option.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli() -> clap::Command {
        clap::Command::new("pictl")
            .arg(clap::Arg::new("model").short('m').long("model").num_args(1))
            .subcommand(
                clap::Command::new("run")
                    .arg(clap::Arg::new("model").long("model").num_args(1))
                    .arg(
                        clap::Arg::new("json")
                            .long("json")
                            .action(clap::ArgAction::SetTrue),
                    )
                    .arg(
                        clap::Arg::new("extension")
                            .short('e')
                            .long("extension")
                            .num_args(1),
                    )
                    .arg(clap::Arg::new("inputs").num_args(0..)),
            )
            .subcommand(clap::Command::new("sessions").arg(clap::Arg::new("all").long("all")))
    }

    fn split_strs(args: &[&str]) -> (Vec<String>, BTreeMap<String, Value>) {
        let (kept, flags) = split(args.iter().map(OsString::from).collect(), &cli());
        (
            kept.into_iter()
                .map(|arg| arg.into_string().unwrap())
                .collect(),
            flags,
        )
    }

    #[test]
    fn unknown_long_flags_of_session_commands_are_extension_flags_as_pi_reads_them() {
        let (kept, flags) = split_strs(&[
            "pictl",
            "run",
            "--model",
            "m",
            "--plan",
            "--preset=fast",
            "--depth",
            "3",
            "-e",
            "x.ts",
            "--json",
            "--verbose-ext",
            "@file",
            "fix it",
        ]);
        assert_eq!(
            kept,
            [
                "pictl", "run", "--model", "m", "-e", "x.ts", "--json", "@file", "fix it"
            ]
        );
        assert_eq!(
            flags,
            BTreeMap::from([
                ("depth".to_owned(), Value::from("3")),
                ("plan".to_owned(), Value::Bool(true)),
                ("preset".to_owned(), Value::from("fast")),
                ("verbose-ext".to_owned(), Value::Bool(true)),
            ])
        );
        // As pi: a flag followed by a word takes it as its value.
        let (kept, flags) = split_strs(&["pictl", "run", "--plan", "fix it"]);
        assert_eq!(kept, ["pictl", "run"]);
        assert_eq!(flags["plan"], Value::from("fix it"));
    }

    #[test]
    fn the_bare_form_takes_them_and_other_commands_and_after_dashes_do_not() {
        let (kept, flags) = split_strs(&["pictl", "--model", "m", "--plan"]);
        assert_eq!(kept, ["pictl", "--model", "m"]);
        assert_eq!(flags["plan"], Value::Bool(true));
        // A short option with its value attached takes nothing more.
        let (kept, flags) = split_strs(&["pictl", "-mx", "--plan"]);
        assert_eq!(kept, ["pictl", "-mx"]);
        assert_eq!(flags["plan"], Value::Bool(true));
        let (kept, flags) = split_strs(&["pictl", "sessions", "--plan"]);
        assert_eq!(kept, ["pictl", "sessions", "--plan"]);
        assert!(flags.is_empty());
        let (kept, flags) = split_strs(&["pictl", "run", "--", "--plan"]);
        assert_eq!(kept, ["pictl", "run", "--", "--plan"]);
        assert!(flags.is_empty());
    }
}
