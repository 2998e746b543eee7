//! `tools/call` with `arguments` that are not an object.
//!
//! rmcp cannot deserialize such a request and answers "method not found" naming only the
//! method, which tells the client nothing. This reader sits under rmcp's transport and
//! rewrites exactly those requests: `arguments` becomes `{MARKER: "<JSON type>"}`, and the
//! call handler answers with an error that names the problem. Every other line passes
//! through byte for byte; a line is parsed only when a key `"arguments"` is followed by
//! something other than an object or null.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The key that carries the JSON type of the arguments that were sent.
pub(crate) const MARKER: &str = "__wavesh_arguments_type";

/// Reads lines from `inner`, rewriting `tools/call` requests whose `arguments` are not an
/// object.
pub(crate) struct ArgumentsCheck<R> {
    inner: R,
    /// The current line, not yet complete.
    line: Vec<u8>,
    /// Bytes ready for the reader.
    out: Vec<u8>,
    out_pos: usize,
    eof: bool,
}

impl<R> ArgumentsCheck<R> {
    pub(crate) fn new(inner: R) -> ArgumentsCheck<R> {
        ArgumentsCheck {
            inner,
            line: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            eof: false,
        }
    }

    fn take_lines(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..=end]);
            let line = std::mem::take(&mut self.line);
            self.out.extend_from_slice(&checked(line));
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ArgumentsCheck<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let this = &mut *self;
            if this.out_pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.out_pos);
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                if this.line.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                let line = std::mem::take(&mut this.line);
                this.out = checked(line);
                continue;
            }
            let mut chunk = [0u8; 64 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Ready(Ok(())) => {
                    if read.filled().is_empty() {
                        this.eof = true;
                    } else {
                        let filled = read.filled().to_vec();
                        this.take_lines(&filled);
                    }
                }
            }
        }
    }
}

/// The line itself, or the rewritten request when its `arguments` are not an object.
fn checked(line: Vec<u8>) -> Vec<u8> {
    if !has_odd_arguments(&line) {
        return line;
    }
    let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&line) else {
        return line;
    };
    if message["method"] != "tools/call" {
        return line;
    }
    let Some(arguments) = message
        .get_mut("params")
        .and_then(|params| params.get_mut("arguments"))
    else {
        return line;
    };
    let kind = match arguments {
        serde_json::Value::Object(_) | serde_json::Value::Null => return line,
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
    };
    *arguments = serde_json::json!({ MARKER: kind });
    let mut out = message.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// Whether some key `"arguments"` is followed by anything but `{` or `null`.
fn has_odd_arguments(line: &[u8]) -> bool {
    const KEY: &[u8] = b"\"arguments\"";
    memchr::memmem::find_iter(line, KEY).any(|at| {
        let mut rest = line[at + KEY.len()..]
            .iter()
            .skip_while(|b| b.is_ascii_whitespace());
        if rest.next() != Some(&b':') {
            return false;
        }
        !matches!(
            rest.find(|b| !b.is_ascii_whitespace()),
            Some(b'{' | b'n') | None
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn only_odd_arguments_are_rewritten() {
        let plain = br#"{"method":"tools/call","params":{"name":"Bash","arguments":{"command":"echo \"arguments\": 1"}}}"#;
        assert!(!has_odd_arguments(plain));
        assert_eq!(checked(plain.to_vec()), plain.to_vec());
        let odd =
            b"{\"method\":\"tools/call\",\"params\":{\"name\":\"Bash\",\"arguments\" : \"ls\"}}\n";
        let rewritten: serde_json::Value = serde_json::from_slice(&checked(odd.to_vec())).unwrap();
        assert_eq!(rewritten["params"]["arguments"][MARKER], "a string");
        let other = br#"{"method":"x","params":{"arguments":5}}"#;
        assert_eq!(checked(other.to_vec()), other.to_vec());
    }

    #[tokio::test]
    async fn lines_pass_through_whole_and_in_order() {
        let input =
            b"{\"a\":1}\n{\"method\":\"tools/call\",\"params\":{\"arguments\":[1]}}\nlast".to_vec();
        let mut reader = ArgumentsCheck::new(&input[..]);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "{\"a\":1}");
        assert!(lines[1].contains("an array"), "{text}");
        assert_eq!(lines[2], "last");
    }

    fn json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[ -~]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z]{1,9}|arguments", inner, 0..4)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any line either passes byte for byte, or is the same request with only its
        /// non-object `arguments` replaced by the marker.
        #[test]
        fn lines_are_kept_or_only_their_arguments_change(
            arguments in json(),
            extra in json(),
            method in "tools/call|ping",
        ) {
            let line = format!(
                "{}\n",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method,
                    "params": {"name": "Bash", "arguments": arguments, "extra": extra}})
            );
            let out = checked(line.clone().into_bytes());
            let odd = method == "tools/call" && !(arguments.is_object() || arguments.is_null());
            if odd {
                let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
                proptest::prop_assert!(value["params"]["arguments"][MARKER].is_string());
                proptest::prop_assert_eq!(&value["params"]["extra"], &extra);
                proptest::prop_assert!(out.ends_with(b"\n"));
            } else {
                proptest::prop_assert_eq!(out, line.into_bytes());
            }
        }
    }
}
