//! Strict Ed25519 verification, exactly the reference SDK's rule
//! (`verifyEd25519`, kernel spec §5.9): `S < L`; the public key `A` and the
//! signature's `R` must be canonical encodings of curve points that are not
//! of small order; and the **cofactored** equation `[8][S]B = [8]R + [8][k]A`
//! with `k = SHA-512(R ‖ A ‖ M) mod L`.
//!
//! Why by hand over `curve25519-dalek`'s group operations rather than a
//! signature crate: `ed25519-dalek`'s `verify` and `verify_strict` use the
//! cofactorless equation and refuse a signature whose `R` has a small-order
//! component (which the reference accepts), while ZIP-215 verifiers
//! (`ed25519-zebra`) accept small-order keys and non-canonical points (which
//! the reference refuses). The conformance vectors pin both cases
//! (`vectors/signatures.json`, `verify`).

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use sha2::{Digest, Sha512};

/// A decoded public key that passed the key checks (canonical encoding, not
/// of small order), kept so repeated verifications skip decompression.
#[derive(Debug, Clone, Copy)]
pub struct VerifyingPoint {
    bytes: [u8; 32],
    point: EdwardsPoint,
}

impl VerifyingPoint {
    /// Decode a public key; `None` when the reference would refuse every
    /// signature under it (not a canonical point, or of small order).
    pub fn decode(bytes: &[u8; 32]) -> Option<Self> {
        let point = decode_point(bytes)?;
        (!point.is_small_order()).then_some(VerifyingPoint { bytes: *bytes, point })
    }

    /// Verify `signature` over `message` under this key.
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let mut r_bytes = [0u8; 32];
        r_bytes.copy_from_slice(&signature[..32]);
        let mut s_bytes = [0u8; 32];
        s_bytes.copy_from_slice(&signature[32..]);
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(s_bytes)) else {
            return false;
        };
        let Some(r) = decode_point(&r_bytes) else {
            return false;
        };
        if r.is_small_order() {
            return false;
        }
        let mut hasher = Sha512::new();
        hasher.update(r_bytes);
        hasher.update(self.bytes);
        hasher.update(message);
        let mut wide = [0u8; 64];
        wide.copy_from_slice(&hasher.finalize());
        let k = Scalar::from_bytes_mod_order_wide(&wide);
        // [S]B - [k]A - R, times the cofactor, must be the identity.
        let reconstructed = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &(-self.point), &s);
        (reconstructed - r).mul_by_cofactor().is_identity()
    }
}

/// A point from its 32-byte encoding, only when the encoding is canonical
/// (`y < p`, and no sign bit on `x = 0`): re-compressing gives the same bytes.
fn decode_point(bytes: &[u8; 32]) -> Option<EdwardsPoint> {
    let point = CompressedEdwardsY(*bytes).decompress()?;
    (point.compress().as_bytes() == bytes).then_some(point)
}

/// Verify an Ed25519 signature under the reference's strict, cofactored rule.
pub fn verify_ed25519(public_key: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> bool {
    VerifyingPoint::decode(public_key).is_some_and(|key| key.verify(message, signature))
}
