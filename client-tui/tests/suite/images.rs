//! pi's inline images: a tool result's image gets room under its output, where the terminal
//! speaks kitty's or iTerm2's graphics protocol, `terminal.imageWidthCells` wide, and the
//! renderer says where it goes; `terminal.showImages: false`, a terminal without graphics,
//! and a dialog over the transcript leave it out.

use pi_protocol::v1::message::*;
use pi_tui::input::Input;
use pi_tui::render::placed_images;
use pi_tui::state::Graphics;
use serde_json::json;

use super::support::*;

/// A `width`x`height` PNG, as base64.
fn png(width: u32, height: u32) -> String {
    use base64::Engine as _;
    let image = image::RgbaImage::from_pixel(width, height, image::Rgba([200, 40, 40, 255]));
    let mut bytes = std::io::Cursor::new(Vec::new());
    image.write_to(&mut bytes, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes.into_inner())
}

/// A session where `read` returned a 180x90 screenshot.
fn read_a_screenshot(graphics: Option<Graphics>, settings_json: serde_json::Value) -> Harness {
    let mut harness = Harness::new();
    harness.state.environment.graphics = graphics;
    harness.send(Input::Reply(settings(settings_json)));
    let result = AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call_1".to_owned(),
        tool_name: "read".to_owned(),
        content: vec![
            text("Read image file [image/png]"),
            UserContent::Image(ImageContent {
                data: png(180, 90),
                mime_type: "image/png".to_owned(),
            }),
        ],
        details: None,
        is_error: false,
        timestamp: 0,
    });
    let entries = history(vec![
        user("Look at shot.png"),
        AgentMessage::Assistant(assistant(
            vec![tool_call("call_1", "read", json!({"path": "shot.png"}))],
            StopReason::ToolUse,
        )),
        result,
    ]);
    let last_seq = entries.len() as u64;
    harness.attach(info(last_seq), entries);
    harness
}

#[test]
fn a_read_image_gets_room_under_its_output_on_a_kitty_terminal() {
    let mut harness = read_a_screenshot(Some(Graphics::Kitty), json!({}));
    let screen = harness.screen(100, 40);
    let placed = placed_images();
    assert_eq!(placed.len(), 1, "{screen}");
    let image = &placed[0];
    // pi's 60 cells wide; 90/180 of that many 9x18 cells high.
    assert_eq!((image.cols, image.rows), (60, 15));
    assert_eq!(image.picture.size, (180, 90));
    assert_eq!(image.picture.mime, "image/png");
    // Under the call and its output, and its rows left blank for the terminal to draw on.
    let lines: Vec<&str> = screen.lines().collect();
    let output_row = lines
        .iter()
        .position(|line| line.contains("● read shot.png"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(usize::from(image.y) > output_row, "{screen}\n{image:?}");
    for row in image.y..image.y + image.rows {
        assert_eq!(lines[usize::from(row)], "│", "row {row}:\n{screen}");
    }
}

#[test]
fn image_width_cells_sizes_it_and_show_images_false_leaves_it_out() {
    let mut harness = read_a_screenshot(
        Some(Graphics::Iterm2),
        json!({"terminal": {"imageWidthCells": 20}}),
    );
    harness.screen(100, 40);
    let placed = placed_images();
    assert_eq!(
        placed
            .iter()
            .map(|image| (image.cols, image.rows))
            .collect::<Vec<_>>(),
        [(20, 5)]
    );

    let mut harness = read_a_screenshot(
        Some(Graphics::Kitty),
        json!({"terminal": {"showImages": false}}),
    );
    let screen = harness.screen(100, 40);
    assert!(placed_images().is_empty());
    // No room left either: the output line, pi's placeholder and the separator, then the
    // editor.
    assert!(screen.contains("[Image: [image/png] 180x90]"), "{screen}");
    let lines: Vec<&str> = screen.lines().collect();
    let read = lines
        .iter()
        .position(|line| line.contains("● read shot.png"));
    let border = lines.iter().position(|line| line.starts_with("│───"));
    assert_eq!(border.zip(read).map(|(b, r)| b - r), Some(4), "{screen}");
}

#[test]
fn no_image_without_a_graphics_terminal_or_under_a_dialog() {
    let mut harness = read_a_screenshot(None, json!({}));
    let screen = harness.screen(100, 40);
    assert!(placed_images().is_empty());
    // pi's placeholder in its place.
    assert!(screen.contains("[Image: [image/png] 180x90]"), "{screen}");

    let mut harness = read_a_screenshot(Some(Graphics::Kitty), json!({}));
    harness.screen(100, 40);
    assert_eq!(placed_images().len(), 1);
    // The model selector over the transcript: the image waits until it closes.
    harness.type_text("/model");
    harness.send(key(crossterm::event::KeyCode::Enter));
    assert!(harness.state.overlay.is_some());
    harness.screen(100, 40);
    assert!(placed_images().is_empty());
    harness.send(key(crossterm::event::KeyCode::Esc));
    harness.screen(100, 40);
    assert_eq!(placed_images().len(), 1);
}

#[test]
fn an_image_scrolled_partly_off_screen_is_not_placed() {
    let mut harness = read_a_screenshot(Some(Graphics::Kitty), json!({}));
    // Twelve rows: the 15-row image cannot be wholly on screen.
    harness.screen(100, 12);
    assert!(placed_images().is_empty());
}
