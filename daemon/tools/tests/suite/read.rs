//! `read`: every success shape and error of pi's spec, with exact notice texts.

use std::io::Write as _;

use pi_llm::UserContent;
use serde_json::json;

use super::{Session, table, text};

fn numbered(lines: usize, width: usize) -> String {
    (1..=lines).map(|n| format!("{n:0width$}\n")).collect()
}

#[tokio::test]
async fn text_files_read_with_pis_limits_and_notices() {
    let session = Session::new();
    session.file("small.txt", "alpha\nbeta\ngamma\n");
    session.file("lines.txt", numbered(2500, 4));
    session.file("bytes.txt", numbered(2000, 60));
    session.file(
        "wide.txt",
        format!("short\n{}\nafter\n", "x".repeat(60_000)),
    );
    session.file("sub/dir/nested.txt", "nested\n");
    session.file("binary.bin", b"\x00\x01\x02binary");
    session.file("doc.pdf", b"%PDF-1.7\n...");
    std::fs::write(session.root().join("home/notes.md"), "home notes\n").unwrap();
    let cases = [
        ("whole small file", json!({"path": "small.txt"})),
        (
            "at prefix and relative path",
            json!({"path": "@sub/dir/nested.txt"}),
        ),
        ("tilde is the session home", json!({"path": "~/notes.md"})),
        (
            "offset and limit leave more lines",
            json!({"path": "small.txt", "offset": 2, "limit": 1}),
        ),
        (
            "limit reaching the end has no notice",
            json!({"path": "small.txt", "offset": 2, "limit": 10}),
        ),
        (
            "offset on the last (empty) line",
            json!({"path": "small.txt", "offset": 4}),
        ),
        (
            "offset beyond the end",
            json!({"path": "small.txt", "offset": 6}),
        ),
        (
            "truncated by lines",
            json!({"path": "lines.txt", "offset": 100}),
        ),
        ("truncated by bytes", json!({"path": "bytes.txt"})),
        (
            "first selected line over the byte limit",
            json!({"path": "wide.txt", "offset": 2}),
        ),
        ("missing file", json!({"path": "nope.txt"})),
        ("directory", json!({"path": "sub"})),
        ("binary with a NUL byte", json!({"path": "binary.bin"})),
        ("known binary signature", json!({"path": "doc.pdf"})),
        ("a device", json!({"path": "/dev/null"})),
        (
            "unknown artifact",
            json!({"path": "artifact://bash-0000000000000000"}),
        ),
        ("invalid artifact id", json!({"path": "artifact://../x"})),
    ];
    let rendered = table(&session, "read", &cases).await;
    // The bulky outputs are checked by their notices; the snapshot keeps only their ends.
    let rendered: String = rendered
        .split("\n## ")
        .map(|case| {
            let lines: Vec<&str> = case.lines().collect();
            if lines.len() > 40 {
                format!(
                    "{}\n[... {} lines ...]\n{}",
                    lines[..4].join("\n"),
                    lines.len() - 30,
                    lines[lines.len() - 26..].join("\n")
                )
            } else {
                case.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n## ");
    insta::assert_snapshot!(rendered);
}

#[tokio::test]
async fn truncated_reads_continue_exactly_where_the_notice_says() {
    let session = Session::new();
    let content = numbered(2500, 4);
    session.file("lines.txt", &content);
    let first = text(&session.call("read", json!({"path": "lines.txt"})).await);
    assert!(
        first.ends_with("[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"),
        "{first}"
    );
    let second = text(
        &session
            .call("read", json!({"path": "lines.txt", "offset": 2001}))
            .await,
    );
    let body = |text: &str| text.split("\n\n[").next().unwrap().to_owned();
    assert_eq!(format!("{}\n{}", body(&first), second), content);
}

#[tokio::test]
async fn images_come_back_as_image_content() {
    let session = Session::new();
    let small = png(40, 30);
    session.file("small.png", &small);
    let output = session.call("read", json!({"path": "small.png"})).await;
    assert!(!output.is_error);
    assert_eq!(text(&output), "Read image file [image/png]");
    let UserContent::Image(image) = &output.content[1] else {
        panic!("no image block: {output:?}")
    };
    assert_eq!(image.mime_type, "image/png");
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    assert_eq!(
        data, small,
        "images within the limits pass through unchanged"
    );

    session.file("wide.png", png(3000, 1000));
    let output = session.call("read", json!({"path": "wide.png"})).await;
    assert!(!output.is_error, "{output:?}");
    insta::assert_snapshot!(text(&output), @r"
    Read image file [image/jpeg]
    [Image: original 3000x1000, displayed at 2000x667. Multiply coordinates by 1.50 to map to original image.]
    ");
    let UserContent::Image(image) = &output.content[1] else {
        panic!("no image block")
    };
    let data = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    let decoded = image::load_from_memory(&data).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (2000, 667));
}

/// pi's `images.autoResize: false`: `read` returns images as they are, without a note.
#[tokio::test]
async fn without_auto_resize_images_are_read_as_they_are() {
    let mut session = Session::new();
    session.context = std::sync::Arc::new(pi_tools::ToolContext {
        resize_images: false,
        ..(*session.context).clone()
    });
    let wide = png(3000, 1000);
    session.file("wide.png", wide.clone());
    let output = session.call("read", json!({"path": "wide.png"})).await;
    assert!(!output.is_error, "{output:?}");
    assert_eq!(text(&output), "Read image file [image/png]");
    let UserContent::Image(image) = &output.content[1] else {
        panic!("no image block")
    };
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    assert_eq!(data, wide, "byte for byte");
}

#[tokio::test]
async fn artifacts_read_like_files() {
    let session = Session::new();
    let (id, mut file) = session.context.artifacts.create("bash").unwrap();
    file.write_all(b"one\ntwo\nthree\n").unwrap();
    drop(file);
    let output = session
        .call(
            "read",
            json!({"path": format!("artifact://{id}"), "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(
        text(&output),
        "two\n\n[2 more lines in file. Use offset=3 to continue.]"
    );
}

/// A PNG of `width` × `height` with a gradient (so it compresses like a real picture).
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x * y) % 239) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}
