//! The serving certificate of the metrics and health endpoint, as kube-scheduler's secure
//! serving has it: a PEM certificate chain and key from `--tls-cert-file` and
//! `--tls-private-key-file`, or, when neither is given, a self-signed certificate made at
//! start-up for localhost, 127.0.0.1 and the host's name
//! (`SecureServingOptions.MaybeDefaultWithSelfSignedCerts`, kept in memory as upstream
//! does without `--cert-dir`). Only ring is used: it is the crypto backend the client
//! already links.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::{Error, Result};

/// A TLS server configuration for the metrics and health endpoint.
#[derive(Clone)]
pub struct TlsConfig {
    server: Arc<rustls::ServerConfig>,
    origin: String,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// The certificate chain in `cert` and the private key in `key` (both PEM, as
    /// kube-scheduler's `--tls-cert-file`/`--tls-private-key-file`). A file that cannot
    /// be read or holds no usable PEM block is [`Error::Tls`] naming it and its flag.
    pub fn from_files(cert: &Path, key: &Path) -> Result<Self> {
        let cert_error = |message: String| Error::Tls {
            flag: "--tls-cert-file",
            path: cert.to_path_buf(),
            message,
        };
        let key_error = |message: String| Error::Tls {
            flag: "--tls-private-key-file",
            path: key.to_path_buf(),
            message,
        };
        let cert_pem = std::fs::read(cert).map_err(|e| cert_error(e.to_string()))?;
        let key_pem = std::fs::read(key).map_err(|e| key_error(e.to_string()))?;
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| cert_error(format!("not a PEM certificate: {e}")))?;
        if chain.is_empty() {
            return Err(cert_error("no PEM CERTIFICATE block".into()));
        }
        let private = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| key_error(format!("no PEM private key: {e}")))?;
        // rustls parses the certificate and checks that the key is its own: a
        // certificate that is not X.509 is the certificate's fault, any other refusal the
        // key's.
        let server = server_config(chain, private).map_err(|e| match e {
            rustls::Error::InvalidCertificate(_) => {
                cert_error(format!("not a usable X.509 certificate: {e}"))
            }
            e => key_error(format!(
                "not the key of the certificate in {}: {e}",
                cert.display()
            )),
        })?;
        Ok(Self {
            server,
            origin: format!("{} and {}", cert.display(), key.display()),
        })
    }

    /// A fresh self-signed certificate for `localhost`, `127.0.0.1` and `hosts` (the
    /// host's name), with its key; kept in memory only.
    pub fn self_signed(hosts: &[String]) -> Result<Self> {
        let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        for h in hosts {
            if !h.is_empty() && !names.contains(h) {
                names.push(h.clone());
            }
        }
        let failed = |message: String| Error::Tls {
            flag: "--tls-cert-file",
            path: PathBuf::from("(self-signed)"),
            message,
        };
        let certified =
            rcgen::generate_simple_self_signed(names.clone()).map_err(|e| failed(e.to_string()))?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let server = server_config(vec![certified.cert.der().clone()], key)
            .map_err(|e| failed(e.to_string()))?;
        Ok(Self {
            server,
            origin: format!("self-signed for {}", names.join(", ")),
        })
    }

    /// Where the certificate came from, for the start-up log.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The rustls configuration (HTTP/1.1 offered by ALPN).
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        self.server.clone()
    }
}

fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> std::result::Result<Arc<rustls::ServerConfig>, rustls::Error> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The host's name as the self-signed certificate names it: `HOSTNAME`, else
/// `/etc/hostname`; empty when neither is set.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("topospread-tls-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_self_signed_certificate_names_localhost_and_the_host() {
        let t = TlsConfig::self_signed(&["node-7".into()]).unwrap();
        assert_eq!(t.origin(), "self-signed for localhost, 127.0.0.1, node-7");
        assert_eq!(t.server_config().alpn_protocols, vec![b"http/1.1".to_vec()]);
    }

    #[test]
    fn a_certificate_and_key_from_files_load() {
        let d = dir("good");
        let certified = rcgen::generate_simple_self_signed(vec!["example".to_string()]).unwrap();
        std::fs::write(d.join("tls.crt"), certified.cert.pem()).unwrap();
        std::fs::write(d.join("tls.key"), certified.signing_key.serialize_pem()).unwrap();
        let t = TlsConfig::from_files(&d.join("tls.crt"), &d.join("tls.key")).unwrap();
        assert!(t.origin().ends_with("tls.key"), "{}", t.origin());
    }

    #[test]
    fn bad_files_name_the_file_and_the_flag() {
        let d = dir("bad");
        let certified = rcgen::generate_simple_self_signed(vec!["example".to_string()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["other".to_string()]).unwrap();
        let cert = d.join("tls.crt");
        let key = d.join("tls.key");
        std::fs::write(&cert, certified.cert.pem()).unwrap();
        std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
        let garbage = d.join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let mismatched = d.join("other.key");
        std::fs::write(&mismatched, other.signing_key.serialize_pem()).unwrap();
        for (c, k, flag, file) in [
            (
                d.join("missing.crt"),
                key.clone(),
                "--tls-cert-file",
                "missing.crt",
            ),
            (
                cert.clone(),
                d.join("missing.key"),
                "--tls-private-key-file",
                "missing.key",
            ),
            (
                garbage.clone(),
                key.clone(),
                "--tls-cert-file",
                "garbage.pem",
            ),
            (key.clone(), key.clone(), "--tls-cert-file", "tls.key"),
            (
                cert.clone(),
                cert.clone(),
                "--tls-private-key-file",
                "tls.crt",
            ),
            (
                cert.clone(),
                mismatched,
                "--tls-private-key-file",
                "other.key",
            ),
        ] {
            let e = TlsConfig::from_files(&c, &k).unwrap_err().to_string();
            assert!(
                e.starts_with(flag) && e.contains(file),
                "{flag} {file}: {e}"
            );
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
