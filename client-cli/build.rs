//! Links `pictl` as a position-dependent executable on Linux: a short-lived process then
//! applies no relocations at start (docs/decisions/0008-pictl-not-pie.md).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
