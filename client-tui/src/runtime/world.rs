//! Facts the shell reads from the machine: how to show the working directory, its git branch,
//! the files for `@` completion (.gitignore-aware), `keybindings.json`, and image files; and
//! the desktop's browser, for a login's URL.

use std::path::{Path, PathBuf};

use pi_protocol::v1::message::ImageContent;

/// Files listed at most for `@` completion.
const MAX_FILES: usize = 20_000;

/// Opens `url` in the desktop's browser when there is a desktop (macOS, or `DISPLAY` or
/// `WAYLAND_DISPLAY` set); does nothing otherwise (`/login`, `pictl login`, `pictl acp`). The opener runs off
/// the loop's thread, its output discarded (it would draw over the TUI).
pub fn open_in_browser(url: String) {
    let Some(opener) = browser_opener() else {
        return;
    };
    tokio::task::spawn_blocking(move || {
        let _ = std::process::Command::new(opener)
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    });
}

/// The desktop's opener for URLs and files: `open` on macOS, `xdg-open` when `DISPLAY` or
/// `WAYLAND_DISPLAY` is set; `None` without a desktop.
pub fn browser_opener() -> Option<&'static str> {
    if cfg!(target_os = "macos") {
        Some("open")
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some("xdg-open")
    } else {
        None
    }
}

/// `cwd` with the home directory shown as `~`.
pub fn display_cwd(cwd: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| cwd.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.display().to_string(),
    }
}

/// The branch checked out in the repository containing `cwd` (worktrees included), or the
/// short commit for a detached HEAD.
pub fn git_branch(cwd: &Path) -> Option<String> {
    let mut directory = Some(cwd);
    while let Some(current) = directory {
        let dot_git = current.join(".git");
        let git_dir = if dot_git.is_dir() {
            Some(dot_git)
        } else if dot_git.is_file() {
            std::fs::read_to_string(&dot_git).ok().and_then(|text| {
                text.trim()
                    .strip_prefix("gitdir:")
                    .map(|path| current.join(path.trim()))
            })
        } else {
            None
        };
        if let Some(git_dir) = git_dir {
            let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
            let head = head.trim();
            return Some(match head.strip_prefix("ref: refs/heads/") {
                Some(branch) => branch.to_owned(),
                None => head.chars().take(7).collect(),
            });
        }
        directory = current.parent();
    }
    None
}

/// Files under `cwd`, relative, sorted, honouring .gitignore and skipping hidden files.
pub fn list_files(cwd: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(cwd)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(cwd)
                .ok()
                .map(|path| path.display().to_string())
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

/// Reads an image file for a message; `Ok(None)` when the path is not a file.
/// Edits `text` in `$VISUAL`, else `$EDITOR` (pi's: split at spaces, so `code --wait`
/// works; a temporary `.pi.md` file, removed afterwards): the saved text without its final
/// newline, `Ok(None)` when the editor failed (the text stays as it was), or `Err` with what
/// to do.
pub fn edit_externally(
    text: &str,
    variable: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, String> {
    let command = variable("VISUAL")
        .filter(|value| !value.trim().is_empty())
        .or_else(|| variable("EDITOR").filter(|value| !value.trim().is_empty()))
        .ok_or("No editor configured. Set $VISUAL or $EDITOR environment variable.")?;
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    let file =
        std::env::temp_dir().join(format!("pi-editor-{millis}-{}.pi.md", std::process::id()));
    std::fs::write(&file, text)
        .map_err(|error| format!("could not write {}: {error}", file.display()))?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&file)
        .status();
    let result = match status {
        Ok(status) if status.success() => std::fs::read_to_string(&file)
            .map(|saved| Some(saved.strip_suffix('\n').unwrap_or(&saved).to_owned()))
            .map_err(|error| format!("could not read {}: {error}", file.display())),
        Ok(_) => Ok(None),
        Err(error) => Err(format!(
            "could not run the editor `{program}` ($VISUAL or $EDITOR): {error}"
        )),
    };
    let _ = std::fs::remove_file(&file);
    result
}

/// pi's Ctrl+V: the clipboard's image, read as pi reads it — `wl-paste` on Wayland (and WSL),
/// else `xclip`; on macOS `pngpaste` — written to a temporary file whose path goes into the
/// message (its image is attached when the message is sent). `Ok(None)`: no image there.
/// `variable` reads the environment (`PATH` included, for the tools).
pub fn paste_clipboard_image(
    variable: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<PathBuf>, String> {
    let run = |program: &str, args: &[&str]| -> Option<Vec<u8>> {
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(path) = variable("PATH") {
            command.env("PATH", path);
        }
        let output = command.output().ok()?;
        (output.status.success() && !output.stdout.is_empty()).then_some(output.stdout)
    };
    // pi's preference among what the clipboard offers.
    let pick = |types: &str| -> Option<String> {
        let offered: Vec<&str> = types.lines().map(str::trim).collect();
        ["image/png", "image/jpeg", "image/webp", "image/gif"]
            .iter()
            .find(|wanted| offered.contains(wanted))
            .map(|found| (*found).to_owned())
            .or_else(|| {
                offered
                    .iter()
                    .find(|offered| offered.starts_with("image/"))
                    .map(|found| (*found).to_owned())
            })
    };
    let wayland = variable("WAYLAND_DISPLAY").is_some_and(|value| !value.is_empty())
        || variable("XDG_SESSION_TYPE").as_deref() == Some("wayland")
        || variable("WSL_DISTRO_NAME").is_some();
    let from_wayland = || {
        let types = run("wl-paste", &["--list-types"])?;
        let chosen = pick(&String::from_utf8_lossy(&types))?;
        run("wl-paste", &["--type", &chosen, "--no-newline"])
    };
    let from_x11 = || {
        let offered = run("xclip", &["-selection", "clipboard", "-t", "TARGETS", "-o"])
            .map(|types| String::from_utf8_lossy(&types).into_owned())
            .unwrap_or_default();
        let mut tries: Vec<String> = pick(&offered).into_iter().collect();
        tries.extend(["image/png", "image/jpeg", "image/webp", "image/gif"].map(str::to_owned));
        tries
            .iter()
            .find_map(|kind| run("xclip", &["-selection", "clipboard", "-t", kind, "-o"]))
    };
    let bytes = if cfg!(target_os = "macos") {
        run("pngpaste", &["-"])
    } else if wayland {
        from_wayland().or_else(from_x11)
    } else {
        from_x11()
    };
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let Some(kind) = pi_image::sniff(&bytes) else {
        return Err("the clipboard's image is not a PNG, JPEG, GIF or WebP image".to_owned());
    };
    let extension = match kind {
        pi_image::ImageKind::Png => "png",
        pi_image::ImageKind::Jpeg => "jpg",
        pi_image::ImageKind::Gif => "gif",
        pi_image::ImageKind::Webp => "webp",
    };
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    let file = std::env::temp_dir().join(format!(
        "pi-clipboard-{millis}-{}.{extension}",
        std::process::id()
    ));
    std::fs::write(&file, &bytes)
        .map_err(|error| format!("could not write {}: {error}", file.display()))?;
    Ok(Some(file))
}

/// What is new since the version this user's `pictl` last announced (pi's startup changelog,
/// one line with `collapse`), recorded in `pictl-changelog-version` in `state_dir`; nothing
/// the first time (a fresh install), nor when the record cannot be written.
pub fn whats_new(state_dir: &Path, collapse: bool) -> Option<String> {
    use crate::changelog::{CHANGELOG, VERSION};
    let record = state_dir.join("pictl-changelog-version");
    let seen = std::fs::read_to_string(&record).ok();
    if seen.as_deref().map(str::trim) == Some(VERSION) {
        return None;
    }
    std::fs::create_dir_all(state_dir).ok()?;
    std::fs::write(&record, VERSION).ok()?;
    crate::changelog::whats_new(CHANGELOG, seen.as_deref(), collapse)
}

pub fn read_image(cwd: &Path, path: &str, fit: bool) -> Result<Option<ImageContent>, String> {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::home_dir().map(|home| home.join(rest)),
        None => Some(cwd.join(path)),
    };
    let Some(full) = expanded.filter(|full| full.is_file()) else {
        return Ok(None);
    };
    let bytes =
        std::fs::read(&full).map_err(|error| format!("cannot read {}: {error}", full.display()))?;
    let Some(kind) = pi_image::sniff(&bytes) else {
        return Err(format!(
            "{} is not a PNG, JPEG, GIF or WebP image",
            full.display()
        ));
    };
    let image = if fit {
        pi_image::prepare(&bytes, kind)
            .map_err(|error| format!("cannot attach {}: {error}", full.display()))?
    } else {
        pi_image::as_is(&bytes, kind)
    };
    Ok(Some(ImageContent {
        data: image.data,
        mime_type: image.mime.to_owned(),
    }))
}

/// A theme as loaded: what to show, the file to watch, and why it is not the one asked for.
#[derive(Debug)]
pub struct LoadedTheme {
    /// The theme to show.
    pub theme: crate::theme::Theme,
    /// Its file, watched for changes (none for a built-in).
    pub file: Option<PathBuf>,
    /// Why another theme shows, if one does.
    pub problem: Option<String>,
}

/// The dark or light built-in, by the terminal's background (`COLORFGBG`, as pi: a background
/// index under 8 is dark); dark when the terminal does not say.
pub fn background_theme(colorfgbg: Option<&str>) -> &'static str {
    let background = colorfgbg
        .and_then(|value| value.split(';').nth(1))
        .and_then(|index| index.trim().parse::<u32>().ok());
    match background {
        Some(index) if index >= 8 => "light",
        _ => "dark",
    }
}

/// Loads the theme `choice` names: a built-in (`dark`, `light`), a theme file (a path), or a
/// custom theme by its file name or its `name` in the project's `.pi/themes`, the `--theme`
/// and `themes` setting's files and directories, then pi's `<agent dir>/themes`. Without a name, the
/// built-in the terminal's background asks for. What cannot be loaded falls back to dark,
/// saying why (a theme file that does not parse is still watched).
pub fn load_theme(
    choice: &crate::state::ThemeChoice,
    cwd: &Path,
    agent_dir: &Path,
    background: &str,
) -> LoadedTheme {
    use crate::theme::Theme;
    let fallback = |problem: String| LoadedTheme {
        theme: Theme::dark(),
        file: None,
        problem: Some(format!("{problem}; the dark theme is used")),
    };
    let name = choice.name.clone().unwrap_or_else(|| background.to_owned());
    let from_file = |path: PathBuf| match std::fs::read_to_string(&path) {
        Ok(text) => match Theme::parse(&text, &path.display().to_string()) {
            Ok(theme) => LoadedTheme {
                theme,
                file: Some(path),
                problem: None,
            },
            // Watched all the same: fixing the file applies it.
            Err(error) => LoadedTheme {
                file: Some(path.clone()),
                ..fallback(error.to_string())
            },
        },
        Err(error) => fallback(format!("cannot read the theme {}: {error}", path.display())),
    };
    if name.ends_with(".json") || name.contains('/') {
        let path = match name.strip_prefix("~/") {
            Some(rest) => {
                std::env::home_dir().map_or_else(|| PathBuf::from(&name), |home| home.join(rest))
            }
            None => cwd.join(&name),
        };
        return from_file(path);
    }
    if let Some(theme) = Theme::named_builtin(&name) {
        return LoadedTheme {
            theme,
            file: None,
            problem: None,
        };
    }
    let (files, places) = theme_files(choice, cwd, agent_dir);
    if let Some(file) = files
        .iter()
        .find(|file| file.file_stem().is_some_and(|stem| stem == name.as_str()))
    {
        return from_file(file.clone());
    }
    // A file whose theme carries the name.
    for file in &files {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(theme) = Theme::parse(&text, &file.display().to_string())
            && theme.name == name
        {
            return LoadedTheme {
                theme,
                file: Some(file.clone()),
                problem: None,
            };
        }
    }
    let searched: Vec<String> = places
        .iter()
        .map(|place| place.display().to_string())
        .collect();
    fallback(format!(
        "no theme \"{name}\": not built in (dark, light) and not in {}",
        searched.join(", ")
    ))
}

/// pi's `[Themes]` of the startup header: the custom themes found where pi looks, by name.
pub fn custom_themes(
    choice: &crate::state::ThemeChoice,
    cwd: &Path,
    agent_dir: &Path,
) -> Vec<String> {
    theme_files(choice, cwd, agent_dir)
        .0
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|theme| theme["name"].as_str().map(str::to_owned))
                .unwrap_or_else(|| {
                    file.file_stem()
                        .map(|stem| stem.to_string_lossy().into_owned())
                        .unwrap_or_default()
                })
        })
        .collect()
}

/// The theme files where pi looks: the project's `.pi/themes`, the `themes` setting's and
/// `--theme`'s files and directories, then pi's `<agent dir>/themes` (none of the discovered
/// ones with `--no-themes`); `-`/`!` entries left out. Also the places searched.
fn theme_files(
    choice: &crate::state::ThemeChoice,
    cwd: &Path,
    agent_dir: &Path,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let excluded: Vec<PathBuf> = choice
        .paths
        .iter()
        .filter_map(|entry| entry.strip_prefix('-').or_else(|| entry.strip_prefix('!')))
        .map(PathBuf::from)
        .collect();
    let mut places = Vec::new();
    if choice.discover {
        places.push(cwd.join(".pi/themes"));
    }
    places.extend(
        choice
            .paths
            .iter()
            .filter(|entry| !entry.starts_with('-') && !entry.starts_with('!'))
            .map(PathBuf::from),
    );
    if choice.discover {
        places.push(agent_dir.join("themes"));
    }
    let mut files = Vec::new();
    for place in &places {
        if place.is_file() {
            files.push(place.clone());
        } else if let Ok(entries) = std::fs::read_dir(place) {
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| {
                    path.extension()
                        .is_some_and(|extension| extension == "json")
                })
                .collect();
            found.sort();
            files.extend(found);
        }
    }
    files.retain(|file| !excluded.iter().any(|out| file.starts_with(out)));
    (files, places)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    #[test]
    fn the_clipboards_image_is_read_with_pis_tools_into_a_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
            .unwrap();
        let image = dir.path().join("clip.png");
        std::fs::write(&image, &png).unwrap();
        let tool = |name: &str, body: &str| {
            let file = dir.path().join(name);
            std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        // Wayland: wl-paste lists the types, then gives the PNG.
        tool(
            "wl-paste",
            &format!(
                "case \"$1\" in --list-types) printf 'text/plain\\nimage/png\\n' ;; --type) cat {} ;; esac",
                image.display()
            ),
        );
        let path = format!("{}:/usr/bin:/bin", dir.path().display());
        let wayland = |name: &str| match name {
            "PATH" => Some(path.clone()),
            "WAYLAND_DISPLAY" => Some("wayland-0".to_owned()),
            _ => None,
        };
        let file = paste_clipboard_image(&wayland).unwrap().unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), png);
        assert!(file.display().to_string().ends_with(".png"));
        // X11: xclip, asked for the clipboard's targets first.
        tool(
            "xclip",
            &format!(
                "case \"$4\" in TARGETS) printf 'TARGETS\\nimage/png\\n' ;; image/png) cat {} ;; *) exit 1 ;; esac",
                image.display()
            ),
        );
        let x11 = |name: &str| (name == "PATH").then(|| path.clone());
        let file = paste_clipboard_image(&x11).unwrap().unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), png);
        // Text on the clipboard, or no tool at all: nothing to paste.
        tool(
            "xclip",
            "case \"$4\" in TARGETS) echo UTF8_STRING ;; *) exit 1 ;; esac",
        );
        assert_eq!(paste_clipboard_image(&x11), Ok(None));
        let bare = |name: &str| (name == "PATH").then(|| "/nonexistent".to_owned());
        assert_eq!(paste_clipboard_image(&bare), Ok(None));
        // Bytes that are no image.
        tool(
            "xclip",
            "case \"$4\" in TARGETS) echo image/png ;; *) echo not-an-image ;; esac",
        );
        assert_eq!(
            paste_clipboard_image(&x11),
            Err("the clipboard's image is not a PNG, JPEG, GIF or WebP image".to_owned())
        );
    }

    #[test]
    fn the_external_editor_edits_a_file_and_its_text_comes_back() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        // A fake $VISUAL: appends its first argument to the file (its last).
        let script = dir.path().join("fake-editor");
        std::fs::write(
            &script,
            "#!/bin/sh\nfor last; do :; done\nprintf '%s\\n' \"$1\" >> \"$last\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let visual = format!("{} --and-more", script.display());
        let variables = |name: &str| (name == "VISUAL").then(|| visual.clone());
        assert_eq!(
            edit_externally("draft ", &variables),
            Ok(Some("draft --and-more".to_owned()))
        );
        // $EDITOR when $VISUAL is unset; an editor that fails leaves the text.
        let failing = |name: &str| (name == "EDITOR").then(|| "false".to_owned());
        assert_eq!(edit_externally("draft", &failing), Ok(None));
        let missing = |name: &str| (name == "EDITOR").then(|| "/no/such/editor".to_owned());
        let error = edit_externally("draft", &missing).unwrap_err();
        assert!(
            error.starts_with("could not run the editor `/no/such/editor` ($VISUAL or $EDITOR): "),
            "{error}"
        );
        assert_eq!(
            edit_externally("draft", &|_| None),
            Err("No editor configured. Set $VISUAL or $EDITOR environment variable.".to_owned())
        );
    }

    #[test]
    fn whats_new_is_said_once_per_update_and_not_on_a_fresh_install() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = dir.path().join("state");
        assert_eq!(whats_new(&state_dir, false), None, "a fresh install");
        let record = state_dir.join("pictl-changelog-version");
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            crate::changelog::VERSION
        );
        assert_eq!(whats_new(&state_dir, false), None, "already seen");
        // An update from 0.0.1: the releases since, once.
        std::fs::write(&record, "0.0.1").unwrap();
        let new = whats_new(&state_dir, false).unwrap();
        assert!(new.starts_with("## [0.1.0]"), "{new}");
        assert_eq!(whats_new(&state_dir, false), None);
        // `collapseChangelog`: pi's one line.
        std::fs::write(&record, "0.0.1").unwrap();
        assert_eq!(
            whats_new(&state_dir, true).as_deref(),
            Some("Updated to v0.1.0. Use /changelog to view full changelog.")
        );
    }

    /// A one-pixel red PNG.
    const PIXEL_PNG: [u8; 69] = [
        137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2,
        0, 0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0,
        3, 1, 1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
    ];

    #[test]
    fn cwd_branch_files_and_images_are_read_from_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/feature/tui\n").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("src/deep/mod.rs"), "").unwrap();
        std::fs::write(root.join("target/junk.o"), "").unwrap();
        std::fs::write(root.join("shot.png"), PIXEL_PNG).unwrap();
        std::fs::write(root.join("fake.png"), b"not a picture").unwrap();

        assert_eq!(display_cwd(&root.join("src"), Some(root)), "~/src");
        assert_eq!(display_cwd(root, Some(root)), "~");
        assert_eq!(display_cwd(root, None), root.display().to_string());
        assert_eq!(
            git_branch(&root.join("src/deep")).as_deref(),
            Some("feature/tui")
        );
        assert_eq!(
            list_files(root),
            ["fake.png", "shot.png", "src/deep/mod.rs", "src/main.rs"]
        );

        for fit in [true, false] {
            let image = read_image(root, "shot.png", fit).unwrap().unwrap();
            assert_eq!(image.mime_type, "image/png");
            assert_eq!(
                image.data,
                base64::engine::general_purpose::STANDARD.encode(PIXEL_PNG),
                "within the limits: byte for byte"
            );
        }
        assert_eq!(read_image(root, "missing.png", true), Ok(None));
        assert_eq!(
            read_image(root, "fake.png", true),
            Err(format!(
                "{}/fake.png is not a PNG, JPEG, GIF or WebP image",
                root.display()
            ))
        );
    }

    #[test]
    fn a_worktree_names_its_branch_through_the_gitdir_file() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::write(git_dir.join("HEAD"), "0123456789abcdef\n").unwrap();
        let worktree = dir.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", git_dir.display()),
        )
        .unwrap();
        assert_eq!(git_branch(&worktree).as_deref(), Some("0123456"));
    }

    /// A theme file in pi's format: dark's colours with `accent` set to `accent`.
    fn theme_json(name: &str, accent: &str) -> String {
        let mut theme: serde_json::Value =
            serde_json::from_str(include_str!("../themes/dark.json")).unwrap();
        theme["name"] = serde_json::json!(name);
        theme["colors"]["accent"] = serde_json::json!(accent);
        theme.to_string()
    }

    #[test]
    fn themes_are_found_by_file_name_or_name_where_pi_looks() {
        use crate::state::ThemeChoice;
        use crate::theme::{Role, ThemeColor};
        let dir = tempfile::tempdir().unwrap();
        let (cwd, agent, extra) = (
            dir.path().join("proj"),
            dir.path().join("agent"),
            dir.path().join("extra"),
        );
        for place in [cwd.join(".pi/themes"), agent.join("themes"), extra.clone()] {
            std::fs::create_dir_all(place).unwrap();
        }
        std::fs::write(
            cwd.join(".pi/themes/ocean.json"),
            theme_json("ocean", "#0000ff"),
        )
        .unwrap();
        std::fs::write(
            agent.join("themes/forest.json"),
            theme_json("forest", "#00ff00"),
        )
        .unwrap();
        std::fs::write(
            extra.join("file-name.json"),
            theme_json("sunset", "#ff8000"),
        )
        .unwrap();
        std::fs::write(agent.join("themes/broken.json"), "{\"colors\": {}}").unwrap();
        let choice = |name: &str| ThemeChoice {
            name: Some(name.to_owned()),
            paths: vec![extra.display().to_string()],
            discover: true,
        };
        let load = |choice: &ThemeChoice| load_theme(choice, &cwd, &agent, "dark");
        // pi's `[Themes]`: every custom theme found, by its name (else its file's).
        assert_eq!(
            custom_themes(&choice("ocean"), &cwd, &agent),
            ["ocean", "sunset", "broken", "forest"]
        );

        let ocean = load(&choice("ocean"));
        assert_eq!(ocean.theme.color(Role::Accent), ThemeColor::Rgb(0, 0, 255));
        assert_eq!(ocean.file, Some(cwd.join(".pi/themes/ocean.json")));
        assert_eq!(ocean.problem, None);
        assert_eq!(load(&choice("forest")).theme.name, "forest");
        // By the `name` in the file, not only the file's name.
        assert_eq!(load(&choice("sunset")).theme.name, "sunset");
        assert_eq!(load(&choice("light")).theme, crate::theme::Theme::light());
        // Without a name: the terminal's background's built-in.
        assert_eq!(
            load_theme(&ThemeChoice::default(), &cwd, &agent, "light")
                .theme
                .name,
            "light"
        );

        // `--no-themes`: the directories are not searched, the paths given still are.
        let undiscovered = ThemeChoice {
            discover: false,
            ..choice("ocean")
        };
        let missing = load(&undiscovered);
        assert_eq!(missing.theme.name, "dark");
        assert_eq!(
            missing.problem.unwrap(),
            format!(
                "no theme \"ocean\": not built in (dark, light) and not in {}; the dark theme \
                 is used",
                extra.display()
            )
        );

        let broken = load(&choice("broken"));
        assert_eq!(broken.theme.name, "dark");
        assert_eq!(
            broken.file,
            Some(agent.join("themes/broken.json")),
            "watched"
        );
        let problem = broken.problem.unwrap();
        assert!(
            problem.starts_with(&format!(
                "{}: `colors` lacks accent, border,",
                agent.join("themes/broken.json").display()
            )),
            "{problem}"
        );
        assert!(problem.ends_with("; the dark theme is used"), "{problem}");

        // A path names a file of its own.
        let by_path = load(&choice("../extra/file-name.json"));
        assert_eq!(by_path.theme.name, "sunset");
    }

    #[test]
    fn the_background_chooses_dark_or_light_as_pi() {
        assert_eq!(background_theme(Some("15;0")), "dark");
        assert_eq!(background_theme(Some("0;15")), "light");
        assert_eq!(background_theme(Some("0;default;15")), "dark");
        assert_eq!(background_theme(None), "dark");
    }
}
