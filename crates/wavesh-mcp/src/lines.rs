//! The stdio transport: newline-delimited JSON-RPC with a bounded line (MCP-2).
//!
//! Each line goes through [`crate::message::check`]; what rmcp cannot serve is answered
//! here. A line longer than the limit is answered as soon as the limit is crossed (with
//! its `id` if the part read so far shows it) and the rest of it is skipped as it
//! arrives, never held. Replies and rmcp's own messages share one writer task, so a
//! reply cannot be lost when rmcp drops a pending `receive`.

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::message::{INVALID_REQUEST, Verdict, check, error_reply, scan_id};

/// One line read, or what ended the input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its newline.
    Whole(Vec<u8>),
    /// A line that crossed the limit; `head` is what was read up to it. The rest is
    /// skipped by the next reads.
    TooLong { head: Vec<u8> },
    /// End of input (a last line without newline counts as a line first).
    Eof,
}

/// Reads lines of at most `limit` bytes without ever holding more.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    /// Skipping the rest of a line that crossed the limit.
    skipping: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, limit: usize) -> LineReader<R> {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            limit,
            line: Vec::new(),
            skipping: false,
        }
    }

    /// The next line. Cancel-safe: a partial line stays in `self` for the next call.
    pub(crate) async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                self.skipping = false;
                if self.line.is_empty() {
                    return Ok(Line::Eof);
                }
                return Ok(Line::Whole(std::mem::take(&mut self.line)));
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |at| at + 1);
            if self.skipping {
                self.inner.consume(take);
                if newline.is_some() {
                    self.skipping = false;
                }
                continue;
            }
            let body = newline.unwrap_or(available.len());
            if self.line.len() + body > self.limit {
                let room = self.limit - self.line.len();
                self.line.extend_from_slice(&available[..room]);
                self.inner.consume(take);
                self.skipping = newline.is_none();
                let head = std::mem::take(&mut self.line);
                return Ok(Line::TooLong { head });
            }
            self.line.extend_from_slice(&available[..body]);
            self.inner.consume(take);
            if newline.is_some() {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Line::Whole(line));
            }
        }
    }
}

impl<R> LineReader<R> {
    #[cfg(test)]
    fn held(&self) -> usize {
        self.line.capacity()
    }
}

/// The reply to a line that crossed `limit`.
pub(crate) fn too_long_reply(head: &[u8], limit: usize) -> String {
    error_reply(
        scan_id(head).or_null(),
        INVALID_REQUEST,
        &format!(
            "Invalid Request: the message is larger than the limit of {limit} bytes (wavesh mcp --max-message-bytes); it was skipped"
        ),
    )
}

type Outgoing = (Vec<u8>, Option<oneshot::Sender<std::io::Result<()>>>);

/// The stdio transport for rmcp.
pub(crate) struct LineTransport<R> {
    reader: LineReader<R>,
    out: mpsc::UnboundedSender<Outgoing>,
    /// No request has reached rmcp yet: it fails the whole connection on anything but
    /// a request before `initialize`, so notifications and responses are dropped.
    before_first_request: bool,
    /// Cancelled when the input ends or fails.
    eof: tokio_util::sync::CancellationToken,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    pub(crate) fn new<W>(
        reader: R,
        writer: W,
        limit: usize,
        eof: tokio_util::sync::CancellationToken,
    ) -> LineTransport<R>
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_all(writer, queue));
        LineTransport {
            reader: LineReader::new(reader, limit),
            out,
            before_first_request: true,
            eof,
        }
    }

    fn reply(&self, text: String) {
        let mut bytes = text.into_bytes();
        bytes.push(b'\n');
        // The writer is gone only when the output closed; then nobody reads replies.
        let _ = self.out.send((bytes, None));
    }
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) {
    while let Some((bytes, done)) = queue.recv().await {
        let result = match writer.write_all(&bytes).await {
            Ok(()) => writer.flush().await,
            Err(error) => Err(error),
        };
        // The call's budget per stage (bench/call-stages.sh): the answer is out.
        tracing::debug!(target: "wavesh_stage", stage = "sent");
        let failed = result.is_err();
        if let Some(done) = done {
            let _ = done.send(result);
        }
        if failed {
            return;
        }
    }
}

/// The JSON text of an outgoing message, without the stray `_meta.progressToken` rmcp
/// puts on every request it sends: wavesh never reports progress to its own requests
/// (elicitation), and strict clients reject keys they were not told about.
pub(crate) fn outgoing_json(message: &TxJsonRpcMessage<RoleServer>) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(message)?;
    strip_request_meta(&mut value);
    serde_json::to_string(&value)
}

/// Removes `params._meta.progressToken` from a request (and `_meta` if then empty).
pub(crate) fn strip_request_meta(value: &mut serde_json::Value) {
    if value.get("method").is_none() || value.get("id").is_none() {
        return;
    }
    let Some(params) = value.get_mut("params").and_then(|p| p.as_object_mut()) else {
        return;
    };
    if let Some(meta) = params.get_mut("_meta").and_then(|m| m.as_object_mut()) {
        meta.remove("progressToken");
        if meta.is_empty() {
            params.remove("_meta");
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = outgoing_json(&item)
            .map_err(std::io::Error::other)
            .map(|text| {
                let mut bytes = text.into_bytes();
                bytes.push(b'\n');
                let (done, wait) = oneshot::channel();
                let sent = self.out.send((bytes, Some(done)));
                (sent, wait)
            });
        async move {
            let (sent, wait) = queued?;
            if sent.is_err() {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            wait.await
                .unwrap_or_else(|_| Err(std::io::ErrorKind::BrokenPipe.into()))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.reader.next().await {
                Ok(Line::Whole(line)) => {
                    tracing::debug!(target: "wavesh_stage", stage = "received");
                    line
                }
                Ok(Line::TooLong { head }) => {
                    tracing::warn!(
                        limit = self.reader.limit,
                        "skipped an MCP message over the size limit"
                    );
                    self.reply(too_long_reply(&head, self.reader.limit));
                    continue;
                }
                Ok(Line::Eof) => {
                    self.eof.cancel();
                    return None;
                }
                Err(error) => {
                    tracing::debug!(%error, "MCP input failed");
                    self.eof.cancel();
                    return None;
                }
            };
            match check(&line) {
                Verdict::Serve(message) => {
                    let is_request = matches!(*message, rmcp::model::JsonRpcMessage::Request(_));
                    if self.before_first_request && !is_request {
                        tracing::debug!("dropped a message sent before any request");
                        continue;
                    }
                    self.before_first_request &= !is_request;
                    return Some(*message);
                }
                Verdict::Reply(text) => self.reply(text),
                Verdict::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that yields `total` bytes of `x` after a head, then a newline and a tail.
    struct Endless {
        head: Vec<u8>,
        left: usize,
        tail: Vec<u8>,
    }

    impl AsyncRead for Endless {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            if !self.head.is_empty() {
                let n = buf.remaining().min(self.head.len());
                let head: Vec<u8> = self.head.drain(..n).collect();
                buf.put_slice(&head);
            } else if self.left > 0 {
                let n = buf.remaining().min(self.left);
                buf.put_slice(&vec![b'x'; n]);
                self.left -= n;
            } else {
                let n = buf.remaining().min(self.tail.len());
                let tail: Vec<u8> = self.tail.drain(..n).collect();
                buf.put_slice(&tail);
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn mcp_2_a_line_over_the_limit_is_skipped_without_being_held() {
        let reader = Endless {
            head: br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"command":""#
                .to_vec(),
            left: 50 * 1024 * 1024,
            tail: b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\"}\n".to_vec(),
        };
        let mut lines = LineReader::new(reader, 1024 * 1024);
        let Line::TooLong { head } = lines.next().await.unwrap() else {
            panic!("expected the long line to be cut")
        };
        assert_eq!(head.len(), 1024 * 1024);
        assert!(too_long_reply(&head, 1024 * 1024).contains(r#""id":41"#));
        let next = lines.next().await.unwrap();
        assert_eq!(
            next,
            Line::Whole(br#"{"jsonrpc":"2.0","id":42,"method":"ping"}"#.to_vec())
        );
        assert!(
            lines.held() <= 2 * 1024 * 1024,
            "held {} bytes",
            lines.held()
        );
        assert_eq!(lines.next().await.unwrap(), Line::Eof);
    }

    #[tokio::test]
    async fn lines_split_and_carriage_returns_go() {
        let input = b"a\r\nbb\n\nlast".to_vec();
        let mut lines = LineReader::new(&input[..], 10);
        assert_eq!(lines.next().await.unwrap(), Line::Whole(b"a".to_vec()));
        assert_eq!(lines.next().await.unwrap(), Line::Whole(b"bb".to_vec()));
        assert_eq!(lines.next().await.unwrap(), Line::Whole(Vec::new()));
        assert_eq!(lines.next().await.unwrap(), Line::Whole(b"last".to_vec()));
        assert_eq!(lines.next().await.unwrap(), Line::Eof);
    }

    #[test]
    fn mcp_3_requests_sent_carry_no_progress_token() {
        let mut value = serde_json::json!({"jsonrpc":"2.0","id":0,"method":"elicitation/create",
            "params":{"_meta":{"progressToken":0},"message":"m"}});
        strip_request_meta(&mut value);
        assert!(value["params"].get("_meta").is_none(), "{value}");
        let mut note = serde_json::json!({"jsonrpc":"2.0","method":"notifications/progress",
            "params":{"_meta":{"progressToken":0}}});
        let before = note.clone();
        strip_request_meta(&mut note);
        assert_eq!(note, before, "notifications are not touched");
    }
}
