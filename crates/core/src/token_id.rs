//! The identity of an HTTP client's grant: its token's digest. A leaf: the client store makes it,
//! the gate's `Client` and the broker's `Question` carry it.

/// Who holds a grant of an HTTP client: the digest of the token that authenticated (never the
/// token; the same digest `clients.json` stores). What a call leaves waiting — its question, its
/// task's question — carries it, so a change of the clients judges the waiting work by the token
/// that asked, not by a name a new token may now go by (attack 23 F1).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenId(pub(crate) [u8; 32]);

impl std::fmt::Debug for TokenId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenId(..)")
    }
}
