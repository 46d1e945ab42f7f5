//! The TCP ports processes listen on, from the kernel (Linux): the sockets in LISTEN state in the
//! kernel's tables (`/proc/<pid>/net/tcp` and `tcp6`, proc(5)) whose inodes are among the
//! processes' descriptors (`/proc/<pid>/fd/<n>` naming `socket:[<inode>]`). It answers "is the dev
//! server up, and where" without reading what the server printed.

use std::collections::HashSet;

/// The TCP ports (IPv4 and IPv6) any of `pids` listens on, ascending, each once. The tables are
/// read in the network namespace of the first of `pids`; empty when none can be read (no such
/// process, not Linux).
pub fn listening_ports(pids: &[u32]) -> Vec<u16> {
    let Some(&first) = pids.first() else {
        return Vec::new();
    };
    let inodes: HashSet<u64> = pids.iter().flat_map(|&pid| socket_inodes(pid)).collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    let mut ports: Vec<u16> = ["tcp", "tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(format!("/proc/{first}/net/{table}")).ok())
        .flat_map(|table| {
            listening_sockets(&table)
                .filter(|(inode, _)| inodes.contains(inode))
                .map(|(_, port)| port)
                .collect::<Vec<_>>()
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The inodes of the sockets process `pid` holds open.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| socket_inode(&target.to_string_lossy()))
        .collect()
}

/// The inode of a descriptor's target when it is a socket (`socket:[12345]`).
fn socket_inode(target: &str) -> Option<u64> {
    target
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The state of a socket that listens, in the tables' `st` column.
const LISTEN: &str = "0A";

/// `(inode, local port)` of every socket in LISTEN state in one table (`/proc/net/tcp` or
/// `tcp6`: a header line, then `sl local_address rem_address st … uid timeout inode …`, the
/// port the hex digits after the local address's colon).
fn listening_sockets(table: &str) -> impl Iterator<Item = (u64, u16)> + '_ {
    table.lines().skip(1).filter_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(3) != Some(&LISTEN) {
            return None;
        }
        let (_, port) = fields.get(1)?.rsplit_once(':')?;
        let port = u16::from_str_radix(port, 16).ok()?;
        let inode = fields.get(9)?.parse().ok()?;
        Some((inode, port))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from a machine with a Python http.server on 8000 (IPv4), a server on 5173 (IPv6)
    /// and an established connection, which is no listener.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 918273 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A1B2 0100007F:1F40 01 00000000:00000000 00:00000000 00000000     0        0 918300 1 0000000000000000 20 4 30 10 -1
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1435 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 554433 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn only_sockets_in_listen_state_count() {
        assert_eq!(listening_sockets(TCP).collect::<Vec<_>>(), [(918273, 8000)]);
        assert_eq!(
            listening_sockets(TCP6).collect::<Vec<_>>(),
            [(554433, 5173)]
        );
        assert_eq!(listening_sockets("header only\n").count(), 0);
        assert_eq!(listening_sockets("h\n 0: garbage\n").count(), 0);
    }

    #[test]
    fn socket_targets_give_their_inode() {
        assert_eq!(socket_inode("socket:[918273]"), Some(918273));
        assert_eq!(socket_inode("pipe:[918273]"), None);
        assert_eq!(socket_inode("/dev/pts/3"), None);
        assert_eq!(socket_inode("socket:[x]"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_listener_of_this_process_is_found_by_its_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        assert!(listening_ports(&[std::process::id()]).contains(&port));
        drop(listener);
        assert!(!listening_ports(&[std::process::id()]).contains(&port));
        assert_eq!(listening_ports(&[]), Vec::<u16>::new());
    }
}
