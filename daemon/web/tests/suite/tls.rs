//! https servers whose certificates no authority issued: the fetch fails with the problem
//! named.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::client;

/// Self-signed (P-256) for 127.0.0.1 and localhost, valid from 2000 to 2200, marked as an
/// authority (as `openssl req -x509` makes them); made with Python's `cryptography`.
const AUTHORITY_CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----
MIIBaDCCAQ+gAwIBAgIUameLvzzQpMxvIQfyGVSXM9zNIjcwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQcGktd2ViIGF1dGhvcml0eTAgFw0wMDAxMDEwMDAwMDBaGA8y
MjAwMDEwMTAwMDAwMFowGzEZMBcGA1UEAwwQcGktd2ViIGF1dGhvcml0eTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABC38MVoEHuJ/QbWUSvoeCoHDOJ8aGnLinO/i
PSJgmz5MBp40MTaqLZFQp9Sb4eslrKsJPOjvFshl1QJFbxIHR82jLzAtMBoGA1Ud
EQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49
BAMCA0cAMEQCIHZKC6W+kmzprc9ala4hakv5qu1TWshnWsLhrcV9yYhkAiBAIZIS
/B3919c0TahL57r7ERVlOVjq/7lR/V5mijC6Jw==
-----END CERTIFICATE-----
";

const AUTHORITY_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRFU9kwOv1fyCMXTs
F2oODCrUwnrdpf8W/Esj/gBBB6GhRANCAAQt/DFaBB7if0G1lEr6HgqBwzifGhpy
4pzv4j0iYJs+TAaeNDE2qi2RUKfUm+HrJayrCTzo7xbIZdUCRW8SB0fN
-----END PRIVATE KEY-----
";

/// The same, but a site's certificate (`CA:FALSE`).
const LEAF_CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----
MIIBWzCCAQKgAwIBAgIUbfKMXhje+be6VDuZZLcCVsbDbPQwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLcGktd2ViIGxlYWYwIBcNMDAwMTAxMDAwMDAwWhgPMjIwMDAx
MDEwMDAwMDBaMBYxFDASBgNVBAMMC3BpLXdlYiBsZWFmMFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEQe/fOTAEPacL9e0+APa2TTUS9E1iZTojqeQamRPhnp5h86s8
KBWXXnpmEb90j9+eh973vFL3UrVUX41jazOheqMsMCowGgYDVR0RBBMwEYcEfwAA
AYIJbG9jYWxob3N0MAwGA1UdEwEB/wQCMAAwCgYIKoZIzj0EAwIDRwAwRAIgYA9T
qsijlQK01ZzA7hdwWy/zhTjp4oc8Z8vswk4bxvcCICGvzSUGiDaqXvmzq+QrBabh
csQKJFH91KvX16+5I6RB
-----END CERTIFICATE-----
";

const LEAF_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzUh/BjG9gZ7sl0P+
d/cOG6uxGwTXwhNKZC/FPRmY+JWhRANCAARB7985MAQ9pwv17T4A9rZNNRL0TWJl
OiOp5BqZE+GenmHzqzwoFZdeemYRv3SP356H3ve8UvdStVRfjWNrM6F6
-----END PRIVATE KEY-----
";

#[tokio::test]
async fn self_signed_certificates_are_named() {
    assert_eq!(
        fetch_from(AUTHORITY_CERTIFICATE, AUTHORITY_KEY).await,
        "the secure connection to 127.0.0.1 failed: the certificate is self-signed (an authority's certificate used by the site itself); the site cannot be read securely"
    );
    assert_eq!(
        fetch_from(LEAF_CERTIFICATE, LEAF_KEY).await,
        "the secure connection to 127.0.0.1 failed: the certificate is issued by an unknown authority (self-signed, or a missing intermediate certificate); the site cannot be read securely"
    );
}

/// The error of fetching from a TLS server with `certificate` and `key`.
async fn fetch_from(certificate: &str, key: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certificate = CertificateDer::from_pem_slice(certificate.as_bytes()).unwrap();
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![certificate], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            // The client gives up during the handshake; nothing is served.
            let _ = acceptor.accept(socket).await;
        }
    });
    let error = client()
        .fetch(
            &format!("https://127.0.0.1:{port}/"),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    server.abort();
    error.to_string()
}
