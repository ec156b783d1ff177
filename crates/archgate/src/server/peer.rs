//! Who is on the other end of a Unix socket (SO_PEERCRED): the bridge socket and the control
//! socket answer only their own user.

use tokio::net::UnixStream;

/// The uid on the other end of a Unix stream.
pub fn uid(stream: &UnixStream) -> std::io::Result<u32> {
    Ok(credentials(stream)?.uid())
}

/// The other end's pid, uid and gid, as the kernel recorded them at connect time.
pub fn credentials(stream: &UnixStream) -> std::io::Result<nix::sys::socket::UnixCredentials> {
    nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(std::io::Error::from)
}
