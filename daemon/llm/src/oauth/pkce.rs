//! PKCE (RFC 7636, `S256`) and random `state` values for the authorization-code logins.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::OAuthError;

/// A code verifier and its challenge.
pub struct Pkce {
    /// The secret sent with the code exchange.
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`, sent with the authorization request.
    pub challenge: String,
}

/// 32 random bytes as the verifier (43 characters of base64url), as pi does.
pub fn generate() -> Result<Pkce, OAuthError> {
    let verifier = URL_SAFE_NO_PAD.encode(random_bytes::<32>()?);
    let challenge = challenge_of(&verifier);
    Ok(Pkce {
        verifier,
        challenge,
    })
}

/// The `S256` challenge of `verifier`.
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 16 random bytes in hex (the Codex login's `state`).
pub fn random_hex_state() -> Result<String, OAuthError> {
    Ok(random_bytes::<16>()?
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|error| {
        OAuthError::Local(format!(
            "the system has no randomness for the login ({error})"
        ))
    })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s_s256() {
        // As Python computes it: urlsafe_b64encode(sha256(verifier)) without padding.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mJ92K9qpgxOiEd1W4ONt6sOy8dTBoo"),
            "VczpFQToJ8r3hz2sFiaMrK4Too7L05MfJNDOsDiT8jY"
        );
        let pkce = generate().unwrap();
        assert_eq!(pkce.verifier.len(), 43);
        assert_eq!(pkce.challenge, challenge_of(&pkce.verifier));
        assert_eq!(random_hex_state().unwrap().len(), 32);
    }
}
