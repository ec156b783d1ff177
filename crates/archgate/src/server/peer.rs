//! Who is on the other end of a connection. A Unix socket says it itself (SO_PEERCRED): the
//! bridge socket and the control socket answer only their own user. A loopback TCP connection
//! does not, so its peer is looked up in the kernel's socket table, as `identd` does: the socket
//! whose local address is the peer's and whose remote address is ours belongs to the uid that
//! created it. Asked with one netlink `sock_diag` request for exactly that socket, or, where
//! netlink is unavailable, read from `/proc/net/tcp` and `/proc/net/tcp6`. `/mcp`, `/health` and the approval
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
    NotFound {
        ours: SocketAddr,
        theirs: SocketAddr,
    },
    #[error("sockets of more than one uid connect {theirs} to {ours}")]
    Ambiguous {
        ours: SocketAddr,
        theirs: SocketAddr,
    },
}

/// The uid owning the socket at `theirs` that is connected to our socket at `ours` (both as
/// seen from this end of a loopback connection). Asked of the kernel with one `sock_diag`
/// request for exactly that socket (cheap whatever the number of sockets); where netlink is
/// not available, read from the socket tables in `/proc/net` instead.
pub fn tcp_owner(ours: SocketAddr, theirs: SocketAddr) -> Result<u32, TcpOwnerError> {
    owner(ours, theirs, false)
}

/// [`tcp_owner`] for the peer of a connection archgate accepted: its end must still be held by
/// a process (a socket with an inode). A socket its process already closed — orphaned, or a
/// time-wait socket, which the kernel reports with uid 0 — belongs to no one, never to a
/// daemon run as root (attack 2 F7: a flood closing each socket at once was served as root's).
/// Not for a listener's side ([`listener_owner`]): a connection still in its accept queue has no
/// inode yet, and its uid is the listener's.
pub fn peer_owner(ours: SocketAddr, theirs: SocketAddr) -> Result<u32, TcpOwnerError> {
    owner(ours, theirs, true)
}

fn owner(ours: SocketAddr, theirs: SocketAddr, held: bool) -> Result<u32, TcpOwnerError> {
    if !diag_works() {
        return table_owner(ours, theirs, held);
    }
    match diag_owner(ours, theirs, held) {
        Ok(Some(uid)) => Ok(uid),
        Ok(None) => Err(TcpOwnerError::NotFound { ours, theirs }),
        Err(e) => {
            tracing::debug!("sock_diag unavailable ({e}); reading /proc/net/tcp");
            table_owner(ours, theirs, held)
        }
    }
}

/// The uid of whatever listens on `127.0.0.1:port`: a connection is made to it (nothing is sent),
/// and the socket that accepted it — the listener's, owned by its uid — is looked up as for any
/// peer. `Err` when nothing listens or its owner cannot be named.
pub fn listener_owner(port: u16) -> Result<u32, TcpOwnerError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let probe = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1))
        .map_err(TcpOwnerError::Table)?;
    let ours = probe.local_addr().map_err(TcpOwnerError::Table)?;
    tcp_owner(ours, addr)
}

/// Whether this kernel answers `sock_diag` for TCP: asked once, of a loopback connection made
/// for the purpose. Without its TCP handler (a module not loaded, a sandbox) the kernel says
/// "no such socket" for every request, which must not be taken for a peer that went away.
fn diag_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let probe = || -> std::io::Result<bool> {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            let c = std::net::TcpStream::connect(l.local_addr()?)?;
            let (s, theirs) = l.accept()?;
            let found = diag_owner(s.local_addr()?, theirs, true)?;
            drop(c);
            Ok(found == Some(my_uid()))
        };
        let works = probe().unwrap_or(false);
        if !works {
            tracing::info!(
                "sock_diag does not answer for TCP here; peers are read from /proc/net/tcp"
            );
        }
        works
    })
}

/// `SOCK_DIAG_BY_FAMILY`, `NLM_F_REQUEST`, `NLMSG_ERROR` (linux/sock_diag.h, linux/netlink.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
const NLMSG_ERROR: u16 = 2;
/// `TCP_TIME_WAIT`, `TCP_LISTEN` in `inet_diag_msg.idiag_state` (linux/tcp_states.h).
const DIAG_TIME_WAIT: u8 = 6;
const DIAG_LISTEN: u8 = 10;

thread_local! {
    static DIAG_SOCKET: std::cell::RefCell<Option<std::os::fd::OwnedFd>> =
        const { std::cell::RefCell::new(None) };
}
static DIAG_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// Takes this thread's netlink socket now (and learns whether the kernel answers `sock_diag`):
/// a thread that judges peers — an acceptor — holds its descriptor from its start, never first
/// under load, where a descriptor taken lazily looks like a leak (the soak's check) and the first
/// stranger's connection would pay for the socket.
pub fn prepare_this_thread() {
    if !diag_works() {
        return;
    }
    DIAG_SOCKET.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            match diag_socket() {
                Ok(fd) => *slot = Some(fd),
                Err(e) => tracing::debug!("no sock_diag socket for this thread yet: {e}"),
            }
        }
    });
}

/// A `sock_diag` netlink socket whose reads give up after a second.
fn diag_socket() -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockProtocol, SockType, setsockopt, socket, sockopt,
    };
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )?;
    setsockopt(
        &fd,
        sockopt::ReceiveTimeout,
        &nix::sys::time::TimeVal::new(1, 0),
    )?;
    Ok(fd)
}

/// One `inet_diag_req_v2` for the socket whose local address is `theirs` and remote `ours`
/// (linux/inet_diag.h: family, protocol, ext, pad, states; then `inet_diag_sockid`: ports and
/// addresses in network byte order, interface, cookie "none"). `Ok(None)`: no such socket.
fn diag_owner(ours: SocketAddr, theirs: SocketAddr, held: bool) -> std::io::Result<Option<u32>> {
    use nix::sys::socket::{MsgFlags, NetlinkAddr, recv, sendto};
    use std::os::fd::AsRawFd;
    let (family, src, dst) = match (theirs.ip(), ours.ip()) {
        (IpAddr::V4(t), IpAddr::V4(o)) => (2u8, words4(t), words4(o)),
        (t, o) => (10u8, words6(t), words6(o)),
    };
    let seq = DIAG_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut req = Vec::with_capacity(72);
    req.extend_from_slice(&72u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    req.extend_from_slice(&seq.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[family, 6, 0, 0]);
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    req.extend_from_slice(&theirs.port().to_be_bytes());
    req.extend_from_slice(&ours.port().to_be_bytes());
    req.extend_from_slice(&src);
    req.extend_from_slice(&dst);
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[0xff; 8]);
    debug_assert_eq!(req.len(), 72);
    // One netlink socket per thread, kept (attack 2 F7: opening one per connection was most of
    // what a refusal cost under a flood). A reply is taken only with this request's sequence
    // number: one that arrived after an earlier request gave up is skipped, never believed.
    let mut buf = [0u8; 1024];
    let n = DIAG_SOCKET.with(|cell| -> std::io::Result<usize> {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(diag_socket()?);
        }
        let fd = slot.as_ref().map(|f| f.as_raw_fd()).unwrap_or(-1);
        let asked = (|| -> std::io::Result<usize> {
            sendto(fd, &req, &NetlinkAddr::new(0, 0), MsgFlags::empty())?;
            for _ in 0..8 {
                let n = recv(fd, &mut buf, MsgFlags::empty())?;
                let got = buf
                    .get(8..12)
                    .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                if got == Some(seq) {
                    return Ok(n);
                }
            }
            Err(std::io::Error::other("no sock_diag reply to this request"))
        })();
        if asked.is_err() {
            // A socket in an unknown state is not kept.
            *slot = None;
        }
        asked
    })?;
    let reply = &buf[..n];
    let u16_at = |i: usize| {
        reply
            .get(i..i + 2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
    };
    let u32_at = |i: usize| {
        reply
            .get(i..i + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    let short = || std::io::Error::other("a short sock_diag reply");
    match u16_at(4).ok_or_else(short)? {
        NLMSG_ERROR => {
            let errno = i32::from_ne_bytes(u32_at(16).ok_or_else(short)?.to_ne_bytes());
            if errno == -(nix::errno::Errno::ENOENT as i32) {
                Ok(None)
            } else {
                Err(std::io::Error::from_raw_os_error(-errno))
            }
        }
        SOCK_DIAG_BY_FAMILY => {
            // `inet_diag_msg`: family, state, timer, retrans, the sockid (48 bytes), expires,
            // rqueue, wqueue, uid, inode.
            let state = *reply.get(17).ok_or_else(short)?;
            let at = |ip: usize, port: usize| -> Option<SocketAddr> {
                let port = u16::from_be_bytes(reply.get(port..port + 2)?.try_into().ok()?);
                let b: [u8; 16] = reply.get(ip..ip + 16)?.try_into().ok()?;
                let ip = if reply.get(16) == Some(&10) {
                    let v6 = Ipv6Addr::from(b);
                    v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
                } else {
                    IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
                };
                Some(SocketAddr::new(ip, port))
            };
            // The socket the kernel found must be the peer's end of this very connection.
            let exact = at(24, 20) == Some(theirs) && at(40, 22) == Some(ours);
            if !exact || state == DIAG_TIME_WAIT || state == DIAG_LISTEN {
                return Ok(None);
            }
            // `held`: a socket its process has closed has no inode (see `peer_owner`).
            if held && u32_at(84).ok_or_else(short)? == 0 {
                return Ok(None);
            }
            Ok(Some(u32_at(80).ok_or_else(short)?))
        }
        other => Err(std::io::Error::other(format!(
            "an unexpected sock_diag reply (type {other})"
        ))),
    }
}

/// An IPv4 address as `inet_diag_sockid` holds it: the first of four 32-bit words.
fn words4(ip: Ipv4Addr) -> [u8; 16] {
    let mut w = [0u8; 16];
    w[..4].copy_from_slice(&ip.octets());
    w
}

fn words6(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The owner as the socket tables in `/proc/net` say (as `identd` reads them).
fn table_owner(ours: SocketAddr, theirs: SocketAddr, held: bool) -> Result<u32, TcpOwnerError> {
    let mut found = None;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match std::fs::read_to_string(table) {
            Ok(t) => t,
            // A kernel without IPv6 has no tcp6 table; without the IPv4 one there is no answer.
            Err(e) if table.ends_with('6') && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(TcpOwnerError::Table(e)),
        };
        match owner_in(&text, ours, theirs, held) {
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
/// retrnsmt uid ...`, addresses as hex words in host byte order, ports as hex). A line's
/// addresses are compared as text first (the table is read on every accept: a flood of
/// connections must not make each lookup parse every line), then parsed to be sure.
fn owner_in(table: &str, ours: SocketAddr, theirs: SocketAddr, held: bool) -> Owner {
    let wanted = spellings(theirs);
    let mut owner = Owner::None;
    for line in table.lines().skip(1) {
        let mut f = line.split_whitespace();
        let (Some(_), Some(local)) = (f.next(), f.next()) else {
            continue;
        };
        if !wanted.iter().any(|w| local.eq_ignore_ascii_case(w)) {
            continue;
        }
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
        // A closed (orphaned) socket: inode 0, and a uid of 0 that is no one's (`peer_owner`).
        if held && f.get(9).is_none_or(|inode| *inode == "0") {
            continue;
        }
        owner = match owner {
            Owner::None => Owner::One(uid),
            Owner::One(u) if u == uid => Owner::One(u),
            _ => Owner::Many,
        };
    }
    owner
}

/// How the tables spell `a`: IPv4 as one hex word, and (for the IPv6 table) IPv4-mapped.
fn spellings(a: SocketAddr) -> Vec<String> {
    let word = |b: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(b));
    let port = a.port();
    match a.ip() {
        IpAddr::V4(v4) => {
            let mapped = format!(
                "{}{}{}",
                word([0; 4]),
                word([0; 4]),
                word([0, 0, 0xff, 0xff])
            );
            vec![
                format!("{}:{port:04X}", word(v4.octets())),
                format!("{mapped}{}:{port:04X}", word(v4.octets())),
            ]
        }
        IpAddr::V6(v6) => {
            let o = v6.octets();
            let words: String = o
                .chunks(4)
                .map(|c| word([c[0], c[1], c[2], c[3]]))
                .collect();
            vec![format!("{words}:{port:04X}")]
        }
    }
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
        assert_eq!(owner_in(TCP4, at(8765), at(40000), true), Owner::One(65534));
        // Our own end is never taken for the peer's.
        assert_eq!(owner_in(TCP4, at(40000), at(8765), true), Owner::One(1000));
        assert_eq!(owner_in(TCP4, at(8765), at(40001), true), Owner::None);
        assert_eq!(owner_in(TCP6, at(8765), at(40001), true), Owner::One(4242));
        let two = format!("{TCP4}   4: 0100007F:9C40 0100007F:223D 01 0:0 0:0 0 7 0 115\n");
        assert_eq!(owner_in(&two, at(8765), at(40000), true), Owner::Many);
        // A socket its process closed (inode 0, uid shown as 0) belongs to no one.
        let orphan = "  sl\n   0: 0100007F:9C42 0100007F:223D 04 0:0 0:0 0 0 0 0\n";
        assert_eq!(owner_in(orphan, at(8765), at(40002), true), Owner::None);
        // A listener's queued connection has no inode yet: its uid is the listener's.
        assert_eq!(owner_in(orphan, at(8765), at(40002), false), Owner::One(0));
    }

    /// Attack 2 F7: a flood that closes each socket right after connecting left orphaned
    /// sockets, which the kernel reports as root's: a daemon run as root served them as its own.
    #[test]
    fn a_peer_that_closed_its_socket_is_no_ones() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, theirs) = l.accept().unwrap();
        let ours = s.local_addr().unwrap();
        drop(c);
        assert!(
            peer_owner(ours, theirs).is_err(),
            "{:?}",
            peer_owner(ours, theirs)
        );
        assert!(table_owner(ours, theirs, true).is_err());
    }

    #[test]
    fn a_live_loopback_connection_is_owned_by_this_uid() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, theirs) = l.accept().unwrap();
        let ours = s.local_addr().unwrap();
        assert_eq!(theirs, c.local_addr().unwrap());
        assert_eq!(tcp_owner(ours, theirs).unwrap(), my_uid());
        // Both ways of asking agree: the kernel's sock_diag answer and its tables in /proc.
        // (Where the kernel has no sock_diag handler for TCP, the tables alone answer.)
        assert_eq!(table_owner(ours, theirs, true).unwrap(), my_uid());
        if diag_works() {
            assert_eq!(diag_owner(ours, theirs, true).unwrap(), Some(my_uid()));
            // Asked the other way round it finds our own end, never mistaken for the peer's.
            assert_eq!(diag_owner(theirs, ours, true).unwrap(), Some(my_uid()));
        }
        drop(c);
        // An address nobody connects from is not found: refused, never guessed.
        let nobody = SocketAddr::from(([127, 0, 0, 1], 1));
        assert!(matches!(
            tcp_owner(ours, nobody),
            Err(TcpOwnerError::NotFound { .. })
        ));
        if diag_works() {
            assert_eq!(diag_owner(ours, nobody, true).unwrap(), None);
        }
    }
}
