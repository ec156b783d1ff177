//! Who is on the other end of a connection. A Unix socket says it itself (SO_PEERCRED): the
//! bridge socket and the control socket answer only their own user. A loopback TCP connection
//! does not, so its peer is looked up in the kernel's socket table (`/proc/net/tcp` and
//! `/proc/net/tcp6`, as `identd` does): the socket whose local address is the peer's and whose
//! remote address is ours belongs to the uid that created it. `/mcp`, `/health` and the approval
//! page answer only their own user (`limits.rs` closes any other before reading a byte).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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

/// This process's uid: the only one its listeners answer.
pub fn my_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// Why the owner of a TCP peer could not be named.
#[derive(Debug, thiserror::Error)]
pub enum TcpOwnerError {
    #[error("cannot read the kernel's socket table: {0}")]
    Table(std::io::Error),
    #[error("no socket in the kernel's table connects {theirs} to {ours} (it went away)")]
    NotFound { ours: SocketAddr, theirs: SocketAddr },
    #[error("sockets of more than one uid connect {theirs} to {ours}")]
    Ambiguous { ours: SocketAddr, theirs: SocketAddr },
}

/// The uid owning the socket at `theirs` that is connected to our socket at `ours` (both as
/// seen from this end of a loopback connection), from the kernel's socket tables.
pub fn tcp_owner(ours: SocketAddr, theirs: SocketAddr) -> Result<u32, TcpOwnerError> {
    let mut found = None;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match std::fs::read_to_string(table) {
            Ok(t) => t,
            // A kernel without IPv6 has no tcp6 table; without the IPv4 one there is no answer.
            Err(e) if table.ends_with('6') && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(TcpOwnerError::Table(e)),
        };
        match owner_in(&text, ours, theirs) {
            Owner::One(uid) => match found {
                Some(other) if other != uid => {
                    return Err(TcpOwnerError::Ambiguous { ours, theirs });
                }
                _ => found = Some(uid),
            },
            Owner::Many => return Err(TcpOwnerError::Ambiguous { ours, theirs }),
            Owner::None => {}
        }
        // A peer on the IPv4 table is the usual case: the IPv6 one need not be read then.
        if found.is_some() {
            break;
        }
    }
    found.ok_or(TcpOwnerError::NotFound { ours, theirs })
}

#[derive(Debug, PartialEq, Eq)]
enum Owner {
    None,
    One(u32),
    Many,
}

/// TIME_WAIT and LISTEN: states of sockets that no process owns as a connection (a TIME_WAIT
/// entry shows uid 0 and may share its addresses with a new connection on loopback).
const TIME_WAIT: &str = "06";
const LISTEN: &str = "0A";

/// The owner of the socket whose local address is `theirs` and remote address is `ours`, in
/// one table's text (a header line, then one socket a line: `sl local rem st queues tr
/// retrnsmt uid ...`, addresses as hex words in host byte order, ports as hex).
fn owner_in(table: &str, ours: SocketAddr, theirs: SocketAddr) -> Owner {
    let mut owner = Owner::None;
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || f[3] == TIME_WAIT || f[3] == LISTEN {
            continue;
        }
        let (Some(local), Some(remote)) = (address(f[1]), address(f[2])) else {
            continue;
        };
        if local != theirs || remote != ours {
            continue;
        }
        let Ok(uid) = f[7].parse::<u32>() else {
            continue;
        };
        owner = match owner {
            Owner::None => Owner::One(uid),
            Owner::One(u) if u == uid => Owner::One(u),
            _ => Owner::Many,
        };
    }
    owner
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6), as the tables print them; an
/// IPv4-mapped IPv6 address comes back as IPv4, as a listener on 127.0.0.1 sees its peer.
fn address(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(
            u32::from_str_radix(ip, 16).ok()?.to_ne_bytes(),
        )),
        32 => {
            let mut b = [0u8; 16];
            for (i, chunk) in b.chunks_mut(4).enumerate() {
                let word = u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
                chunk.copy_from_slice(&word.to_ne_bytes());
            }
            let v6 = Ipv6Addr::from(b);
            match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            }
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our own text in the shape of Linux's `/proc/net/tcp` (net/ipv4/tcp_ipv4.c, `get_tcp4_sock`)
    /// on a little-endian machine: a listener on 127.0.0.1:8765 (uid 1000), our accepted end
    /// (uid 1000), the peer's end at 127.0.0.1:40000 (uid 65534), and a TIME_WAIT entry of an
    /// earlier connection between the same addresses (uid 0).
    const TCP4: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:223D 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0
   1: 0100007F:223D 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 112 1 0 20 4 30 10 -1
   2: 0100007F:9C40 0100007F:223D 01 00000000:00000000 00:00000000 00000000 65534        0 113 1 0 20 4 30 10 -1
   3: 0100007F:9C40 0100007F:223D 06 00000000:00000000 03:00001000 00000000     0        0 0 3 0
";

    /// The same peer as an IPv6 socket connected to 127.0.0.1 (an IPv4-mapped address).
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:9C41 0000000000000000FFFF00000100007F:223D 01 00000000:00000000 00:00000000 00000000  4242        0 114 1 0 20 4 30 10 -1
";

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn the_peers_socket_names_its_owner_and_time_wait_is_no_owner() {
        if cfg!(target_endian = "big") {
            return;
        }
        assert_eq!(owner_in(TCP4, at(8765), at(40000)), Owner::One(65534));
        // Our own end is never taken for the peer's.
        assert_eq!(owner_in(TCP4, at(40000), at(8765)), Owner::One(1000));
        assert_eq!(owner_in(TCP4, at(8765), at(40001)), Owner::None);
        assert_eq!(owner_in(TCP6, at(8765), at(40001)), Owner::One(4242));
        let two = format!("{TCP4}   4: 0100007F:9C40 0100007F:223D 01 0:0 0:0 0 7 0 115\n");
        assert_eq!(owner_in(&two, at(8765), at(40000)), Owner::Many);
    }

    #[test]
    fn a_live_loopback_connection_is_owned_by_this_uid() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, theirs) = l.accept().unwrap();
        let ours = s.local_addr().unwrap();
        assert_eq!(theirs, c.local_addr().unwrap());
        assert_eq!(tcp_owner(ours, theirs).unwrap(), my_uid());
        drop(c);
        // An address nobody connects from is not found: refused, never guessed.
        let nobody = SocketAddr::from(([127, 0, 0, 1], 1));
        assert!(matches!(
            tcp_owner(ours, nobody),
            Err(TcpOwnerError::NotFound { .. })
        ));
    }
}
