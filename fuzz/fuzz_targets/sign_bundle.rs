//! Model signatures: the Sigstore bundle, DSSE envelope, in-toto statement and manifest parsers,
//! certificates, the trusted root, and full bundle verification under each trust method.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::sign::{self, Cert, Limits, PublicKey, Trust, TrustedRoot};

const ROOT_JSON: &[u8] = include_bytes!("../../tests/fixtures/signing/keyless/trusted_root.json");
const ROOT_CA: &[u8] = include_bytes!("../../tests/fixtures/signing/keys/root-ca.crt");
const PUB: &str = include_str!("../../tests/fixtures/signing/keys/p256.pub.pem");

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    if let Ok(p) = sign::bundle::parse(data, &limits)
        && let Ok(st) = sign::statement::parse_statement(&p.payload_type, &p.payload)
    {
        let _ = sign::statement::manifest_from_statement(&st, &limits);
    }
    if let Ok(st) = sign::statement::parse_statement(sign::statement::IN_TOTO_PAYLOAD_TYPE, data) {
        let _ = sign::statement::manifest_from_statement(&st, &limits);
    }
    if let Ok(c) = Cert::from_der(data, &limits) {
        let _ = (
            c.san_identities(),
            c.fulcio_issuer(),
            c.can_sign(),
            c.public_key(),
        );
    }
    let _ = TrustedRoot::parse(data, &limits);
    let trusts = [
        Trust::Key(PublicKey::from_pem(PUB).expect("fixture key")),
        Trust::Certificates(Cert::from_pem_chain(ROOT_CA, &limits).expect("fixture root")),
        Trust::Sigstore {
            root: TrustedRoot::parse(ROOT_JSON, &limits).expect("fixture trusted root"),
            identity: sign::SubjectMatch::Exact("stefanb@us.ibm.com".into()),
            issuer: "https://sigstore.verify.ibm.com/oauth2".into(),
        },
    ];
    for t in &trusts {
        let _ = sign::verify_bundle(data, t, 1_767_225_600, &limits);
    }
});
