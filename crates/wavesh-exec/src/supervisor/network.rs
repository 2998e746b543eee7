//! The host's side of the session's network namespace (NET-1): the helper's answer, and
//! the listeners handed to the proxy. The helper's side is `helper::zygote`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::wire::{Reader, recv_frame};
use super::{HELLO_WAIT, Shared, Supervisor, lock, tag};

/// What the host does with a new helper's network listeners.
pub(super) type NetworkHook = Box<dyn Fn([OwnedFd; 2]) + Send>;

/// Set in the helper's environment when the host wants the session's network namespace.
pub(super) const NETWORK_ENV: &str = "WAVESH_SESSION_NETWORK";

/// The session's network namespace as the helper made it (NET-1).
#[derive(Debug)]
pub enum Network {
    /// Not asked for.
    Off,
    /// It could not be made: why (SBX-5).
    Unavailable(String),
    /// Made: listeners inside it on `127.0.0.1:`[`crate::net::PROXY_PORT`] and
    /// [`crate::net::READ_PORT`], for the host's proxy to accept on, until taken.
    Ready(Option<[OwnedFd; 2]>),
}

impl Supervisor {
    /// The session's network namespace (NET-1): whether there is one, and why not.
    pub fn network_ready(&self) -> Result<bool, String> {
        match &*lock(&self.shared.network) {
            Network::Off => Ok(false),
            Network::Unavailable(why) => Err(why.clone()),
            Network::Ready(_) => Ok(true),
        }
    }

    /// Hands the namespace's listeners to `accept`, now and for every helper started
    /// later (a new helper's namespace is new).
    pub fn on_network(&self, accept: impl Fn([OwnedFd; 2]) + Send + 'static) {
        let mut hook = lock(&self.shared.on_network);
        if let Network::Ready(listeners) = &mut *lock(&self.shared.network)
            && let Some(listeners) = listeners.take()
        {
            accept(listeners);
        }
        *hook = Some(Box::new(accept));
    }
}

/// Reads a new helper's network frame and keeps what it says; its listeners go to the
/// hook at once when there is one. An error: the helper is not to be used.
pub(super) fn adopt(shared: &Shared, socket: &std::os::unix::net::UnixStream) -> io::Result<()> {
    let network = expect_network(socket)?;
    let mut hook = lock(&shared.on_network);
    let network = match (network, hook.as_mut()) {
        (Network::Ready(Some(listeners)), Some(hook)) => {
            hook(listeners);
            Network::Ready(None)
        }
        (network, _) => network,
    };
    if let Network::Unavailable(why) = &network {
        tracing::warn!(%why, "the session has no network namespace; its sandboxed commands have no network");
    }
    *lock(&shared.network) = network;
    Ok(())
}

/// Reads the helper's second frame: the session's network namespace.
fn expect_network(socket: &std::os::unix::net::UnixStream) -> io::Result<Network> {
    socket.set_read_timeout(Some(HELLO_WAIT))?;
    let frame = recv_frame(socket.as_raw_fd());
    socket.set_read_timeout(None)?;
    let Some((payload, fds)) = frame? else {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the supervisor exited before making the session's network",
        ));
    };
    let mut reader = Reader::new(&payload);
    let (kind, _, status, _) = (
        reader.u8("tag")?,
        reader.u64("id")?,
        reader.i32("status")?,
        reader.i32("value")?,
    );
    if kind != tag::NETWORK {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the supervisor did not say whether it made the session's network",
        ));
    }
    if status != 0 {
        let why = reader
            .bytes("reason")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        return Ok(Network::Unavailable(why));
    }
    let [a, b]: [OwnedFd; 2] = fds.try_into().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the session's network came without its two listeners",
        )
    })?;
    Ok(Network::Ready(Some([a, b])))
}
