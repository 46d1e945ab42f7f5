//! Whether looking a path up can hang: the guard that lets `cd DIR` run in place on Node's JS
//! thread (see `session::qualify`) only where the lookup it does cannot stall on a mount.
//!
//! A lookup hangs when it reaches a filesystem served by something that may not answer: NFS,
//! SMB, FUSE, 9p, an automount point. Such a lookup is refused here when the path, walked
//! component by component (`..` taken lexically), passes under a mount point whose type is not
//! in [`LOCAL_TYPES`], or when walking it meets a symbolic link, which could lead anywhere: the
//! walk is made with `openat2(RESOLVE_NO_SYMLINKS)`, which stops at the first link, so that the
//! lexical walk is the one the kernel makes. The mount table is read from
//! `/proc/self/mountinfo` once and again only when the kernel reports that it changed (`poll`
//! on the open file signals `POLLPRI` after a mount or unmount). Anything unknown — another
//! platform, a kernel without `openat2`, an unreadable table — says "may hang".

use std::path::{Component, Path, PathBuf};

/// Filesystem types whose lookups are served by this machine's memory or disks.
// The mount table is Linux's (other platforms say "may hang" without reading one).
#[cfg(any(target_os = "linux", test))]
const LOCAL_TYPES: &[&str] = &[
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "f2fs",
    "zfs",
    "tmpfs",
    "ramfs",
    "overlay",
    "squashfs",
    "iso9660",
    "vfat",
    "exfat",
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "mqueue",
    "hugetlbfs",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "efivarfs",
    "binfmt_misc",
    "fusectl",
    "nsfs",
];

/// Whether looking `path` (absolute, as a `stat` of it would walk it) up cannot hang.
pub(crate) fn lookup_cannot_hang(path: &Path) -> bool {
    path.is_absolute()
        && mounts::remote_mount_points().is_some_and(|remote| lexical_walk_avoids(path, &remote))
        && walks_without_symlinks(path)
}

/// Whether no directory a lexical walk of `path` passes through lies under one of `remote`.
fn lexical_walk_avoids(path: &Path, remote: &[PathBuf]) -> bool {
    let mut at = PathBuf::from("/");
    let under_remote = |at: &Path| remote.iter().any(|mount| at.starts_with(mount));
    if under_remote(&at) {
        return false;
    }
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => at.push(name),
            Component::Prefix(_) => return false,
        }
        if under_remote(&at) {
            return false;
        }
    }
    true
}

/// The type of a mount-table line of `/proc/self/mountinfo`, with its mount point unescaped.
#[cfg(any(target_os = "linux", test))]
fn parse_mountinfo_line(line: &str) -> Option<(PathBuf, &str)> {
    let (before, after) = line.split_once(" - ")?;
    let point = before.split(' ').nth(4)?;
    let fs_type = after.split(' ').next()?;
    Some((PathBuf::from(unescape_octal(point)), fs_type))
}

/// `\040`-style escapes (space, tab, newline, backslash) as the kernel writes them in mount points.
#[cfg(any(target_os = "linux", test))]
fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes
            .get(i + 1..i + 4)
            .filter(|digits| bytes[i] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d)));
        match escape {
            Some(digits) => {
                let value = digits.iter().fold(0u32, |n, d| n * 8 + u32::from(d - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points of `mountinfo` whose type is not local.
#[cfg(any(target_os = "linux", test))]
fn remote_mount_points_in(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(parse_mountinfo_line)
        .filter(|(_, fs_type)| !LOCAL_TYPES.contains(fs_type))
        .map(|(point, _)| point)
        .collect()
}

#[cfg(target_os = "linux")]
mod mounts {
    use std::fs::File;
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;
    use std::sync::Mutex;

    use shellwright_io::lock;

    struct Table {
        file: File,
        remote: Vec<PathBuf>,
    }

    static TABLE: Mutex<Option<Table>> = Mutex::new(None);

    /// The non-local mount points, read anew only when the mount table changed.
    pub(super) fn remote_mount_points() -> Option<Vec<PathBuf>> {
        let mut table = lock(&TABLE);
        match &mut *table {
            Some(known) if !changed(&known.file)? => {}
            Some(known) => known.remote = read(&mut known.file)?,
            None => {
                let mut file = File::open("/proc/self/mountinfo").ok()?;
                let remote = read(&mut file)?;
                *table = Some(Table { file, remote });
            }
        }
        table.as_ref().map(|t| t.remote.clone())
    }

    fn read(file: &mut File) -> Option<Vec<PathBuf>> {
        let mut text = String::new();
        file.rewind().ok()?;
        file.read_to_string(&mut text).ok()?;
        Some(super::remote_mount_points_in(&text))
    }

    /// Whether a mount or unmount happened since the table was last read (or polled).
    fn changed(file: &File) -> Option<bool> {
        let mut poll = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        // SAFETY: `poll` is one valid pollfd for this call, and a zero timeout returns at once.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        (ready >= 0).then_some(poll.revents & (libc::POLLPRI | libc::POLLERR) != 0)
    }
}

#[cfg(not(target_os = "linux"))]
mod mounts {
    pub(super) fn remote_mount_points() -> Option<Vec<std::path::PathBuf>> {
        None
    }
}

/// Whether the kernel walks `path` to its end, or to where it fails at once, without meeting a
/// symbolic link: `openat2` with `RESOLVE_NO_SYMLINKS`.
#[cfg(target_os = "linux")]
fn walks_without_symlinks(path: &Path) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    /// `struct open_how` of linux/openat2.h (libc's cannot be built outside it).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: `path` is a NUL-terminated string and `how` a valid `open_how` of the size passed,
    // both live for the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if let Ok(fd) = i32::try_from(fd)
        && fd >= 0
    {
        // SAFETY: `fd` was just opened by this call and is owned by nothing else.
        unsafe { libc::close(fd) };
        return true;
    }
    // Where the walk stopped at once on a local filesystem, `cd` fails at once the same way.
    matches!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ENOENT | libc::ENOTDIR | libc::EACCES)
    )
}

#[cfg(not(target_os = "linux"))]
fn walks_without_symlinks(_path: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_not_local_are_found_unescaped() {
        let mountinfo = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /mnt/my\\040share rw - nfs4 server:/share rw
31 22 0:41 / /home/u/fuse rw - fuse.sshfs u@h:/ rw
32 22 0:42 / /tmp rw - tmpfs tmpfs rw
";
        assert_eq!(
            remote_mount_points_in(mountinfo),
            [
                PathBuf::from("/mnt/my share"),
                PathBuf::from("/home/u/fuse")
            ]
        );
    }

    #[test]
    fn a_lexical_walk_through_a_remote_mount_is_refused() {
        let remote = [PathBuf::from("/mnt/nfs")];
        assert!(lexical_walk_avoids(Path::new("/tmp/x"), &remote));
        assert!(lexical_walk_avoids(Path::new("/mnt/nfsx"), &remote));
        assert!(!lexical_walk_avoids(Path::new("/mnt/nfs/a"), &remote));
        assert!(!lexical_walk_avoids(Path::new("/mnt/nfs/../x"), &remote));
        assert!(lexical_walk_avoids(Path::new("/mnt/./x/../y"), &remote));
        assert!(!lexical_walk_avoids(Path::new("/x"), &[PathBuf::from("/")]));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn symbolic_links_on_the_way_are_refused() {
        let dir = std::env::temp_dir().join(format!("sw-path-walk-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("real")).expect("mkdir");
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).expect("symlink");
        let real = lookup_cannot_hang(&dir.join("real"));
        let missing = lookup_cannot_hang(&dir.join("missing/deeper"));
        let through_link = lookup_cannot_hang(&dir.join("link"));
        let under_link = lookup_cannot_hang(&dir.join("link/."));
        std::fs::remove_dir_all(&dir).expect("cleanup");
        assert!(!lookup_cannot_hang(Path::new("relative")));
        // Only where the machine has no network mount over the temp directory.
        if mounts::remote_mount_points().is_some_and(|r| lexical_walk_avoids(&dir, &r)) {
            assert!(real);
            assert!(missing);
        }
        assert!(!through_link);
        assert!(!under_link);
    }
}
