//! The child sandbox as bytes for the supervisor, and back.

use super::*;

/// The child sandbox as bytes for the supervisor, and the ruleset descriptor to pass
/// beside them.
pub(crate) fn encode_child(child: Option<&ChildSandbox>) -> (Vec<u8>, Option<RawFd>) {
    let Some(child) = child else {
        return (vec![0], None);
    };
    let mut out = vec![1u8];
    out.push(u8::from(child.ruleset.is_some()));
    out.push(match child.seccomp {
        None => 0,
        Some(Filter::NetworkOff) => 1,
        Some(Filter::NetworkOn) => 2,
    });
    match child.userns {
        Some((uid, gid)) => {
            out.push(1);
            out.extend_from_slice(&uid.to_le_bytes());
            out.extend_from_slice(&gid.to_le_bytes());
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(child.mounts.len() as u32).to_le_bytes());
    for op in &child.mounts {
        out.push(op.kind as u8);
        out.extend_from_slice(&op.keep.to_le_bytes());
        put_path(&mut out, &op.path);
    }
    match &child.isolation {
        Some(writable) => {
            out.push(1);
            out.extend_from_slice(&(writable.len() as u32).to_le_bytes());
            for path in writable {
                put_path(&mut out, path);
            }
        }
        None => out.push(0),
    }
    child.views.encode(&mut out);
    match &child.sessions {
        Some(sessions) => {
            out.push(1);
            put_path(&mut out, &sessions.base);
            put_path(&mut out, &sessions.own);
        }
        None => out.push(0),
    }
    (out, child.ruleset.as_ref().map(AsRawFd::as_raw_fd))
}

/// A path on the wire: its length, then its bytes.
fn put_path(out: &mut Vec<u8>, path: &CString) {
    let path = path.as_bytes();
    out.extend_from_slice(&(path.len() as u32).to_le_bytes());
    out.extend_from_slice(path);
}

/// A path [`put_path`] wrote, read with `take`.
fn take_path<'a>(
    take: &mut impl FnMut(usize, &str) -> io::Result<&'a [u8]>,
) -> io::Result<CString> {
    let b = take(4, "path length")?;
    let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    CString::new(take(len, "path")?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "sandbox: a path holds a NUL byte",
        )
    })
}

/// Decodes what [`encode_child`] made; `ruleset` yields the passed descriptor when the
/// bytes say there is one. The seccomp filter is compiled here (in the helper, before
/// it forks).
pub(crate) fn decode_child(
    bytes: &[u8],
    ruleset: impl FnOnce() -> io::Result<OwnedFd>,
) -> io::Result<Option<ChildSandbox>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sandbox: {what}"));
    let mut at = 0usize;
    let mut take = |n: usize, what: &str| -> io::Result<&[u8]> {
        let slice = bytes.get(at..at + n).ok_or_else(|| bad(what))?;
        at += n;
        Ok(slice)
    };
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if take(1, "presence")?[0] == 0 {
        return Ok(None);
    }
    let has_ruleset = take(1, "ruleset flag")?[0] == 1;
    let seccomp = match take(1, "seccomp flag")?[0] {
        0 => None,
        1 => Some(Filter::NetworkOff),
        2 => Some(Filter::NetworkOn),
        _ => return Err(bad("unknown seccomp filter")),
    };
    let userns = if take(1, "userns flag")?[0] == 1 {
        let uid = u32_of(take(4, "uid")?);
        let gid = u32_of(take(4, "gid")?);
        Some((uid, gid))
    } else {
        None
    };
    let count = u32_of(take(4, "mount count")?);
    let mut mounts = Vec::new();
    for _ in 0..count {
        let kind = match take(1, "mount kind")?[0] {
            1 => MountKind::ReadOnly,
            2 => MountKind::HideFile,
            3 => MountKind::HideDir,
            4 => MountKind::Pin,
            _ => return Err(bad("unknown mount kind")),
        };
        let keep_bytes = take(8, "mount flags")?;
        let mut keep = [0u8; 8];
        keep.copy_from_slice(keep_bytes);
        let path = take_path(&mut take)?;
        mounts.push(MountOp {
            kind,
            path,
            keep: u64::from_le_bytes(keep),
        });
    }
    let isolation = if take(1, "isolation flag")?[0] == 1 {
        let count = u32_of(take(4, "writable count")?);
        let mut writable = Vec::new();
        for _ in 0..count {
            writable.push(take_path(&mut take)?);
        }
        Some(writable)
    } else {
        None
    };
    let views = crate::sandbox::view_mounts::ViewMounts::decode(&mut |n, what| {
        take(n, what).map(<[u8]>::to_vec)
    })?;
    let sessions = if take(1, "sessions flag")?[0] == 1 {
        Some(SessionsMount {
            base: take_path(&mut take)?,
            own: take_path(&mut take)?,
        })
    } else {
        None
    };
    if let Some(filter) = seccomp {
        program(filter)?;
    }
    Ok(Some(ChildSandbox {
        ruleset: if has_ruleset { Some(ruleset()?) } else { None },
        seccomp,
        mounts,
        views,
        maps: userns.map(maps_for),
        userns,
        isolation,
        sessions,
    }))
}
