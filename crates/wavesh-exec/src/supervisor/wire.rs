//! The messages between the host and the helper: frames of `[u32 length][payload]` on a
//! unix stream socket, with descriptors passed as `SCM_RIGHTS` on a frame's first bytes.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// The largest frame accepted: a spawn carries the whole environment, never the command.
pub(crate) const MAX_FRAME: usize = 16 << 20;
/// The most descriptors one frame carries (command, output, seal, cgroup, and the
/// subreaper's channel on the way to the zygote).
const MAX_FDS: usize = 8;

/// Builds a payload.
#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, value: u8) -> &mut Self {
        self.0.push(value);
        self
    }
    pub(crate) fn u32(&mut self, value: u32) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub(crate) fn u64(&mut self, value: u64) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub(crate) fn i32(&mut self, value: i32) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub(crate) fn bytes(&mut self, value: &[u8]) -> &mut Self {
        // Frames are capped far below 4 GiB, so the length always fits.
        self.u32(u32::try_from(value.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(value);
        self
    }
}

/// Reads a payload; every read names what was missing.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }
    fn take(&mut self, n: usize, what: &str) -> io::Result<&'a [u8]> {
        if self.data.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("supervisor message cut short in {what}"),
            ));
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Ok(head)
    }
    pub(crate) fn u8(&mut self, what: &str) -> io::Result<u8> {
        Ok(self.take(1, what)?[0])
    }
    pub(crate) fn u32(&mut self, what: &str) -> io::Result<u32> {
        let bytes = self.take(4, what)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }
    pub(crate) fn u64(&mut self, what: &str) -> io::Result<u64> {
        let bytes = self.take(8, what)?;
        let mut array = [0u8; 8];
        array.copy_from_slice(bytes);
        Ok(u64::from_le_bytes(array))
    }
    pub(crate) fn i32(&mut self, what: &str) -> io::Result<i32> {
        Ok(self.u32(what)? as i32)
    }
    pub(crate) fn bytes(&mut self, what: &str) -> io::Result<&'a [u8]> {
        let len = self.u32(what)? as usize;
        self.take(len, what)
    }
}

/// Sends one frame, with `fds` attached to its first bytes.
#[expect(
    unsafe_code,
    reason = "sendmsg(2) with SCM_RIGHTS: a control message built in place"
)]
pub(crate) fn send_frame(socket: RawFd, payload: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&len| len as usize <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "supervisor frame too large"))?;
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(payload);
    let mut sent = 0usize;
    let mut first = true;
    while sent < frame.len() {
        let rest = &frame[sent..];
        let mut iov = libc::iovec {
            iov_base: rest.as_ptr() as *mut libc::c_void,
            iov_len: rest.len(),
        };
        // SAFETY: msghdr is plain data; every pointer below points into live buffers
        // (`iov`, `control`) for the duration of the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        let mut control = [0u8; 128];
        if first && !fds.is_empty() {
            let data_len = size_of_val(fds);
            // SAFETY: CMSG_SPACE only computes a size.
            let space = unsafe { libc::CMSG_SPACE(data_len as u32) } as usize;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = space as _;
            // SAFETY: the control buffer holds `space` bytes (checked against its size
            // by MAX_FDS), so the first header and its data fit.
            unsafe {
                let header = libc::CMSG_FIRSTHDR(&msg);
                (*header).cmsg_level = libc::SOL_SOCKET;
                (*header).cmsg_type = libc::SCM_RIGHTS;
                (*header).cmsg_len = libc::CMSG_LEN(data_len as u32) as _;
                std::ptr::copy_nonoverlapping(
                    fds.as_ptr().cast::<u8>(),
                    libc::CMSG_DATA(header),
                    data_len,
                );
            }
        }
        // SAFETY: `msg` is fully initialised above.
        let n = retrying(|| unsafe { libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) })?;
        first = false;
        sent += n;
    }
    Ok(())
}

/// Receives one frame and the descriptors sent with it; `None` at end of stream.
#[expect(
    unsafe_code,
    reason = "recvmsg(2) with SCM_RIGHTS: the received descriptors are taken into ownership"
)]
pub(crate) fn recv_frame(socket: RawFd) -> io::Result<Option<(Vec<u8>, Vec<OwnedFd>)>> {
    let mut header = [0u8; 4];
    let mut got = 0usize;
    let mut fds = Vec::new();
    while got < header.len() {
        let mut iov = libc::iovec {
            iov_base: header[got..].as_mut_ptr().cast(),
            iov_len: header.len() - got,
        };
        let mut control = [0u8; 128];
        // SAFETY: as in `send_frame`.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
        // SAFETY: `msg` points at live buffers of the sizes given.
        let n = retrying(|| unsafe { libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC) })?;
        if n == 0 {
            if got == 0 {
                return Ok(None);
            }
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got += n;
        // SAFETY: walking the control messages the kernel filled in.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg);
                    let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                    for i in 0..bytes / size_of::<RawFd>() {
                        let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                        fds.push(OwnedFd::from_raw_fd(fd));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
    }
    if fds.len() > MAX_FDS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "too many descriptors in one supervisor frame",
        ));
    }
    let len = u32::from_le_bytes(header) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("supervisor frame of {len} bytes is too large"),
        ));
    }
    let mut payload = vec![0u8; len];
    read_exact(socket, &mut payload)?;
    Ok(Some((payload, fds)))
}

/// Runs a system call that returns a count or -1, again while it is interrupted.
fn retrying(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let n = call();
        if let Ok(n) = usize::try_from(n) {
            return Ok(n);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Reads exactly `buf.len()` bytes.
#[expect(
    unsafe_code,
    reason = "read(2) into a borrowed buffer on a descriptor the caller owns"
)]
pub(crate) fn read_exact(fd: RawFd, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let rest = &mut buf[got..];
        // SAFETY: reading into the unfilled part of `buf`.
        let n = retrying(|| unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) })?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got += n;
    }
    Ok(())
}

/// Writes all of `buf`.
#[expect(
    unsafe_code,
    reason = "send(2) of a borrowed buffer on a descriptor the caller owns"
)]
pub(crate) fn write_all(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    let mut sent = 0;
    while sent < buf.len() {
        let rest = &buf[sent..];
        // SAFETY: writing from the unsent part of `buf`.
        sent += retrying(|| unsafe {
            libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL)
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn frames_carry_payload_and_descriptors() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        let big = vec![7u8; 300_000];
        let mut writer = Writer::default();
        writer.u8(b'S').u64(42).i32(-5).bytes(&big);
        let sender = std::thread::spawn({
            let payload = writer.0.clone();
            let fd = file.as_raw_fd();
            move || send_frame(a.as_raw_fd(), &payload, &[fd]).map(|()| a)
        });
        let (payload, fds) = recv_frame(b.as_raw_fd()).unwrap().unwrap();
        let a = sender.join().unwrap().unwrap();
        assert_eq!(fds.len(), 1);
        let mut reader = Reader::new(&payload);
        assert_eq!(reader.u8("tag").unwrap(), b'S');
        assert_eq!(reader.u64("id").unwrap(), 42);
        assert_eq!(reader.i32("n").unwrap(), -5);
        assert_eq!(reader.bytes("big").unwrap().len(), 300_000);
        assert!(reader.u8("past the end").is_err());
        drop(a);
        assert!(recv_frame(b.as_raw_fd()).unwrap().is_none());
    }
}
