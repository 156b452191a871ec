//! Random identifiers.

/// A random UUID v4 (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, lowercase).
///
/// Never panics: when the system has no randomness to give, the bytes come from the clock
/// (unique enough for ids that are also checked for collisions where they are stored).
pub fn new_uuid() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos())
            .unwrap_or(0);
        bytes = nanos.to_le_bytes();
    }
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::new_uuid;

    #[test]
    fn uuids_are_version_4_in_the_usual_form() {
        let id = new_uuid();
        let parsed = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(id, parsed.hyphenated().to_string());
        assert_ne!(id, new_uuid());
    }
}
