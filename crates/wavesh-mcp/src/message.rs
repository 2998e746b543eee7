//! Checking one incoming JSON-RPC message before rmcp sees it (MCP-2).
//!
//! rmcp drops what it cannot parse: invalid UTF-8, a lone UTF-16 surrogate, `NaN`,
//! truncated JSON, a float or out-of-range `id`, a batch array. The client then waits
//! forever for a reply that never comes. Every message goes through [`check`] first, on
//! stdio and over HTTP alike: what rmcp can serve passes on, and everything else that
//! carries an `id` gets its JSON-RPC error here — -32700 (not JSON), -32600 (JSON, but
//! not a request) or -32602 (a known method with params it cannot take) — with the `id`
//! when it can be read and `null` when it cannot, as JSON-RPC 2.0 says.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::Value;

/// JSON-RPC: the message is not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: the message is JSON but not a valid request.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC: the method exists but cannot take these params.
pub const INVALID_PARAMS: i32 = -32602;

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Verdict {
    /// Hand it to rmcp.
    Serve(Box<ClientJsonRpcMessage>),
    /// Answer with this error (one JSON value: an error object, or an array of them for
    /// a batch), and serve nothing.
    Reply(String),
    /// Drop it: a notification nobody answers, or blank input.
    Ignore,
}

/// The methods MCP defines for a client, so that a known method whose params do not fit
/// is -32602 and not "method not found".
const CLIENT_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
];

/// Checks one message (a stdio line without its newline, or an HTTP body).
pub fn check(bytes: &[u8]) -> Verdict {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            return reply_unless_notification(
                bytes,
                PARSE_ERROR,
                &format!(
                    "Parse error: the message is not valid UTF-8 (bad byte at offset {})",
                    error.valid_up_to()
                ),
            );
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            return reply_unless_notification(
                bytes,
                PARSE_ERROR,
                &format!("Parse error: {}", parse_error_text(&error, text)),
            );
        }
    };
    match value {
        Value::Array(items) => batch(text, &items),
        Value::Object(_) => object(text, value),
        other => Verdict::Reply(error_reply(
            "null",
            INVALID_REQUEST,
            &format!(
                "Invalid Request: a message must be a JSON object, not {}",
                kind(&other)
            ),
        )),
    }
}

/// serde_json's message, with the cases a strict client meets named plainly.
fn parse_error_text(error: &serde_json::Error, input: &str) -> String {
    let text = error.to_string();
    if text.contains("surrogate") || (text.contains("hex escape") && has_surrogate_escape(input)) {
        format!(
            "{text} (a lone UTF-16 surrogate such as \\ud83d is not Unicode text; send the whole pair or valid UTF-8)"
        )
    } else if error.is_syntax() && (input.contains("NaN") || input.contains("Infinity")) {
        format!("{text} (NaN and Infinity are not JSON numbers)")
    } else if error.is_eof() {
        format!("{text} (the message is truncated)")
    } else {
        text
    }
}

/// Whether `input` holds an escaped UTF-16 surrogate (`\\uD800`..`\\uDFFF`).
fn has_surrogate_escape(input: &str) -> bool {
    input.as_bytes().windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && w[2].eq_ignore_ascii_case(&b'd')
            && matches!(w[3].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
    })
}

/// A reply to something that is not JSON: only when it looks like it had an `id` or we
/// cannot tell (JSON-RPC answers an unparsable message with id null).
fn reply_unless_notification(bytes: &[u8], code: i32, message: &str) -> Verdict {
    match scan_id(bytes) {
        ScannedId::Found(id) => Verdict::Reply(error_reply(&id, code, message)),
        ScannedId::Absent => Verdict::Ignore,
        ScannedId::Unknown => Verdict::Reply(error_reply("null", code, message)),
    }
}

fn batch(text: &str, items: &[Value]) -> Verdict {
    if items.is_empty() {
        return Verdict::Reply(error_reply(
            "null",
            INVALID_REQUEST,
            "Invalid Request: an empty batch",
        ));
    }
    // Each member's own id, raw, in order: ids are echoed exactly as sent.
    let raw_ids = member_ids(text);
    let replies: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.get("id").is_some() || !item.is_object())
        .map(|(index, _)| {
            let id = raw_ids
                .get(index)
                .and_then(Option::as_deref)
                .filter(|id| valid_id_text(id))
                .unwrap_or("null");
            error_reply(
                id,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported by MCP (removed in protocol 2025-06-18); send each message on its own",
            )
        })
        .collect();
    if replies.is_empty() {
        Verdict::Ignore
    } else {
        Verdict::Reply(format!("[{}]", replies.join(",")))
    }
}

fn object(text: &str, value: Value) -> Verdict {
    let has_id = value.get("id").is_some();
    let method = value.get("method").cloned();
    let id_text = match value.get("id") {
        None => None,
        Some(Value::String(_)) => scan_id(text.as_bytes()).found(),
        Some(Value::Number(number)) if number.is_i64() => Some(number.to_string()),
        Some(other) => {
            let raw = scan_id(text.as_bytes()).found();
            let echoed = raw.as_deref().filter(|raw| valid_id_text(raw));
            let shown = echoed.map_or_else(|| other.to_string(), str::to_owned);
            let why = match other {
                Value::Number(number)
                    if number.is_u64()
                        || number
                            .as_f64()
                            .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
                {
                    format!(
                        "`id` {shown} is out of range (an integer id must fit in 64 signed bits)"
                    )
                }
                Value::Number(_) => format!("`id` must be a string or an integer, not {shown}"),
                other => format!("`id` must be a string or an integer, not {}", kind(other)),
            };
            return Verdict::Reply(error_reply(
                echoed.unwrap_or("null"),
                INVALID_REQUEST,
                &format!("Invalid Request: {why}"),
            ));
        }
    };
    let id = id_text.as_deref().unwrap_or("null");
    let refuse = |code: i32, message: String| {
        if has_id {
            Verdict::Reply(error_reply(id, code, &message))
        } else {
            Verdict::Ignore
        }
    };
    if value.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return refuse(
            INVALID_REQUEST,
            "Invalid Request: `jsonrpc` must be \"2.0\"".into(),
        );
    }
    let method = match method {
        None => None,
        Some(Value::String(method)) => Some(method),
        Some(other) => {
            return refuse(
                INVALID_REQUEST,
                format!(
                    "Invalid Request: `method` must be a string, not {}",
                    kind(&other)
                ),
            );
        }
    };
    if let Some(method) = &method
        && has_id
        && let Some(message) = invalid_params(method, value.get("params"))
    {
        return refuse(INVALID_PARAMS, message);
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(JsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_))
                && method
                    .as_deref()
                    .is_some_and(|method| CLIENT_METHODS.contains(&method)) =>
        {
            // A standard method rmcp could not read as such: its params are wrong.
            refuse(
                INVALID_PARAMS,
                format!(
                    "Invalid params for `{}`: they do not match the method's schema",
                    method.as_deref().unwrap_or_default()
                ),
            )
        }
        Ok(message) => Verdict::Serve(Box::new(message)),
        Err(error) => refuse(INVALID_REQUEST, format!("Invalid Request: {error}")),
    }
}

/// Params that a standard method cannot take, named. rmcp reads such a request as a
/// custom method and answers "method not found", which misleads the client.
fn invalid_params(method: &str, params: Option<&Value>) -> Option<String> {
    let params = match params {
        None | Some(Value::Null) => return None,
        Some(Value::Object(params)) => params,
        Some(other) => {
            return Some(format!(
                "Invalid params for `{method}`: `params` must be an object, not {}",
                kind(other)
            ));
        }
    };
    let field = |name: &str, want: &str, ok: fn(&Value) -> bool| -> Option<String> {
        let value = params.get(name)?;
        (!ok(value)).then(|| {
            format!(
                "Invalid params for `{method}`: `{name}` must be {want}, not {}",
                kind(value)
            )
        })
    };
    match method {
        "tools/call" => {
            if !params.contains_key("name") {
                return Some(format!(
                    "Invalid params for `{method}`: missing `name` (the tool to call)"
                ));
            }
            field("name", "a string", Value::is_string).or_else(|| {
                field("arguments", "a JSON object of the tool's parameters", |v| {
                    v.is_object() || v.is_null()
                })
            })
        }
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            if !params.contains_key("uri") {
                return Some(format!("Invalid params for `{method}`: missing `uri`"));
            }
            field("uri", "a string", Value::is_string)
        }
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            field("cursor", "a string", |v| v.is_string() || v.is_null())
        }
        _ => None,
    }
}

/// A JSON-RPC error response with `id` (raw JSON text).
pub fn error_reply(id: &str, code: i32, message: &str) -> String {
    let message = Value::String(message.to_owned());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
}

/// Whether `raw` is a JSON string or number, so it may be echoed as an id.
fn valid_id_text(raw: &str) -> bool {
    matches!(
        serde_json::from_str::<Value>(raw),
        Ok(Value::String(_) | Value::Number(_))
    )
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a scan of a (possibly partial or malformed) message found about its `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScannedId {
    /// The top-level `id`, as the raw JSON text of a string or number.
    Found(String),
    /// The whole top-level object was read and it has no `id`: a notification.
    Absent,
    /// It could not be told.
    Unknown,
}

impl ScannedId {
    fn found(self) -> Option<String> {
        match self {
            ScannedId::Found(id) => Some(id),
            _ => None,
        }
    }

    /// The id to answer with: the one found, else `null`.
    pub fn or_null(&self) -> &str {
        match self {
            ScannedId::Found(id) => id,
            _ => "null",
        }
    }
}

/// Finds the top-level `"id"` of a JSON object without parsing the rest: the prefix of
/// an over-long line, a truncated message, one with `NaN` or invalid UTF-8 elsewhere.
/// Strings and nesting are tracked; the value must be a complete string or number.
pub fn scan_id(bytes: &[u8]) -> ScannedId {
    let mut scanner = Scanner { bytes, at: 0 };
    scanner.skip_space();
    if scanner.peek() != Some(b'{') {
        return ScannedId::Unknown;
    }
    scanner.at += 1;
    loop {
        scanner.skip_space();
        match scanner.peek() {
            Some(b'}') => return ScannedId::Absent,
            Some(b',') => {
                scanner.at += 1;
                continue;
            }
            Some(b'"') => {}
            _ => return ScannedId::Unknown,
        }
        let Some(key) = scanner.string() else {
            return ScannedId::Unknown;
        };
        scanner.skip_space();
        if scanner.peek() != Some(b':') {
            return ScannedId::Unknown;
        }
        scanner.at += 1;
        scanner.skip_space();
        let start = scanner.at;
        if !scanner.skip_value() {
            return ScannedId::Unknown;
        }
        // The key as JSON reads it: `"\u0069d"` is `id` too (SBX-7).
        let is_id = &bytes[key.clone()] == b"id"
            || (bytes[key.clone()].contains(&b'\\')
                && serde_json::from_slice::<String>(&bytes[key.start - 1..key.end + 1])
                    .is_ok_and(|k| k == "id"));
        if is_id {
            let raw = &bytes[start..scanner.at];
            return match std::str::from_utf8(raw) {
                Ok(raw) if valid_id_text(raw) => ScannedId::Found(raw.to_owned()),
                _ => ScannedId::Unknown,
            };
        }
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A string starting at the quote; where its raw content is, or None if it does not
    /// end.
    fn string(&mut self) -> Option<std::ops::Range<usize>> {
        let start = self.at + 1;
        let mut at = start;
        loop {
            match self.bytes.get(at)? {
                b'\\' => at += 2,
                b'"' => {
                    self.at = at + 1;
                    return Some(start..at);
                }
                _ => at += 1,
            }
        }
    }

    /// Skips one value, nested or not; false when it does not end within the bytes.
    fn skip_value(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            self.skip_space();
            let Some(byte) = self.peek() else {
                return false;
            };
            match byte {
                b'"' => {
                    if self.string().is_none() {
                        return false;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' | b':' if depth > 0 => self.at += 1,
                b',' | b'}' | b']' => return true,
                _ => {
                    // A bare token: number, literal or garbage; it ends at a delimiter.
                    while self
                        .peek()
                        .is_some_and(|b| !b.is_ascii_whitespace() && !b",:}]".contains(&b))
                    {
                        self.at += 1;
                    }
                    if self.peek().is_none() {
                        return false;
                    }
                }
            }
            if depth == 0 {
                self.skip_space();
                return matches!(self.peek(), Some(b',' | b'}'));
            }
        }
    }
}

/// The raw `id` text of each member of a batch array, by position.
fn member_ids(text: &str) -> Vec<Option<String>> {
    let bytes = text.as_bytes();
    let mut scanner = Scanner { bytes, at: 0 };
    scanner.skip_space();
    let mut ids = Vec::new();
    if scanner.peek() != Some(b'[') {
        return ids;
    }
    scanner.at += 1;
    loop {
        scanner.skip_space();
        match scanner.peek() {
            Some(b',') => scanner.at += 1,
            Some(b']') | None => return ids,
            Some(_) => {
                let start = scanner.at;
                if !skip_member(&mut scanner) {
                    return ids;
                }
                ids.push(scan_id(&bytes[start..scanner.at]).found());
            }
        }
    }
}

/// Skips one member of an array (the value ends at `,` or `]` at its own level).
fn skip_member(scanner: &mut Scanner<'_>) -> bool {
    let mut depth = 0usize;
    while let Some(byte) = scanner.peek() {
        match byte {
            b'"' => {
                if scanner.string().is_none() {
                    return false;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => depth -= 1,
            b',' | b']' if depth == 0 => return true,
            _ => {}
        }
        scanner.at += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(input: &[u8]) -> Value {
        match check(input) {
            Verdict::Reply(text) => serde_json::from_str(&text).expect("replies are JSON"),
            other => panic!(
                "expected a reply to {:?}, got {other:?}",
                String::from_utf8_lossy(input)
            ),
        }
    }

    #[test]
    fn mcp_2_scan_id_finds_the_top_level_id_in_broken_text() {
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","\u0069d":8,"params":{"x":NaN}}"#),
            ScannedId::Found("8".into())
        );
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","id":7,"params":{"x":NaN}}"#),
            ScannedId::Found("7".into())
        );
        assert_eq!(
            scan_id(br#"{"params":{"id":1,"s":"}\""},"id":"a\"b"}"#),
            ScannedId::Found(r#""a\"b""#.into())
        );
        assert_eq!(
            scan_id(br#"{"method":"x","params":{"a":[1,{"id":2}]}}"#),
            ScannedId::Absent
        );
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","params":{"command":"xxxx"#),
            ScannedId::Unknown
        );
        assert_eq!(
            scan_id(br#"{"id":12"#),
            ScannedId::Unknown,
            "a number cut short is not an id"
        );
        assert_eq!(
            scan_id(b"{\"id\":3,\"method\":\"\xff\xfe\"}"),
            ScannedId::Found("3".into())
        );
        assert_eq!(scan_id(b"not json"), ScannedId::Unknown);
    }

    #[test]
    fn mcp_2_parse_errors_carry_the_id_when_readable() {
        let r = reply(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"echo \ud83d"}}}"#);
        assert_eq!(r["id"], 4);
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("surrogate"),
            "{r}"
        );
        let r = reply(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\xff\"}");
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (5.into(), PARSE_ERROR.into())
        );
        let r = reply(br#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"x":NaN}}"#);
        assert_eq!(r["id"], "n");
        let r = reply(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"na"#);
        assert_eq!(r["id"], 6);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("truncated"),
            "{r}"
        );
        let r = reply(b"this is not json");
        assert!(r["id"].is_null());
        assert_eq!(r["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn mcp_2_notifications_that_fail_get_no_reply() {
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":NaN}}"#),
            Verdict::Ignore
        ));
        assert!(matches!(
            check(br#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#),
            Verdict::Ignore
        ));
        assert!(matches!(check(b"  \r"), Verdict::Ignore));
    }

    #[test]
    fn mcp_2_bad_ids_are_invalid_requests_echoed_as_sent() {
        let r = reply(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        assert_eq!(r["id"], 1.5);
        let raw = br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
        let Verdict::Reply(text) = check(raw) else {
            panic!()
        };
        assert!(
            text.contains(r#""id":123456789012345678901234567890"#),
            "{text}"
        );
        assert!(text.contains("out of range"), "{text}");
        let r = reply(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert!(r["id"].is_null());
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("an object"),
            "{r}"
        );
    }

    #[test]
    fn mcp_2_batches_get_one_error_per_request() {
        let raw = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]"#;
        let r = reply(raw);
        let ids: Vec<Value> = r
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].clone())
            .collect();
        assert_eq!(ids, vec![Value::from(1), Value::from("b")]);
        assert!(r[0]["error"]["message"].as_str().unwrap().contains("batch"));
        assert!(reply(b"[]")["id"].is_null());
        assert!(matches!(
            check(br#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#),
            Verdict::Ignore
        ));
    }

    #[test]
    fn mcp_2_known_methods_with_wrong_params_are_invalid_params() {
        let r = reply(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Bash","arguments":"ls"}}"#);
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        assert!(
            r["error"]["message"].as_str().unwrap().contains(
                "`arguments` must be a JSON object of the tool's parameters, not a string"
            ),
            "{r}"
        );
        let r = reply(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#);
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let r = reply(br#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":[1]}"#);
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let r = reply(
            br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":5}}"#,
        );
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (3.into(), INVALID_PARAMS.into()),
            "{r}"
        );
    }

    #[test]
    fn mcp_2_other_shapes() {
        let r = reply(b"5");
        assert_eq!(r["error"]["code"], INVALID_REQUEST);
        let r = reply(br#"{"jsonrpc":"2.0","id":8,"method":7}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (8.into(), INVALID_REQUEST.into())
        );
        let r = reply(br#"{"id":9,"method":"ping"}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (9.into(), INVALID_REQUEST.into())
        );
    }

    #[test]
    fn mcp_2_good_messages_pass() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"Bash","arguments":{"command":"echo \ud83d\ude00"}}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            br#"{"jsonrpc":"2.0","id":3,"method":"some/custom"}"#,
        ] {
            assert!(matches!(check(line), Verdict::Serve(_)), "{}", String::from_utf8_lossy(line));
        }
    }
}
