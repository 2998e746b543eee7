//! `-printf` formats and `-ls` lines as GNU find 4.9 writes them: its escapes (octal,
//! `\c`), its directives with C printf flags, widths and precisions (numbers for `%d`,
//! `%m` and `%S`, strings for the rest), its time formats with ten-digit fractions, and
//! `-ls` columns that widen as wider values are seen.

use super::parse::ParseError;
use super::{Bytes, Meta};

/// A piece of a `-printf` format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Literal(Bytes),
    /// `\c`: stop here and flush.
    Stop,
    /// `%` with C flags (`spec` holds them, width and precision, without the `%`),
    /// the directive letter and, for `%A`, `%C`, `%T`, the time letter.
    Directive {
        spec: Bytes,
        letter: u8,
        time: u8,
    },
}

/// Whether this implementation knows every directive of `format` (`%Z`, the SELinux
/// context, is the system find's, and so is `%F`, the file system's type, where no
/// mount table is read).
pub(super) fn supported(format: &[u8]) -> bool {
    let mut i = 0;
    while i < format.len() {
        match format[i] {
            b'\\' => i += 2,
            b'%' => {
                i += 1;
                while i < format.len() && b"-+ #0123456789.".contains(&format[i]) {
                    i += 1;
                }
                if format.get(i) == Some(&b'Z')
                    || (format.get(i) == Some(&b'F')
                        && !cfg!(any(target_os = "linux", target_os = "android")))
                {
                    return false;
                }
                if matches!(format.get(i), Some(b'A' | b'C' | b'T')) {
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    true
}

#[expect(clippy::print_stderr, reason = "GNU's warnings about a format")]
fn warn(message: &str) {
    eprintln!("find: warning: {message}");
}

/// Parses a `-printf` format, warning as GNU does about unknown escapes and directives.
pub(super) fn parse(format: &[u8]) -> Result<Vec<Segment>, ParseError> {
    let mut out: Vec<Segment> = Vec::new();
    let mut literal = Bytes::new();
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        i += 1;
        match c {
            b'\\' => {
                let Some(&e) = format.get(i) else {
                    warn("escape `\\' followed by nothing at all");
                    literal.push(b'\\');
                    break;
                };
                i += 1;
                match e {
                    b'a' => literal.push(0x07),
                    b'b' => literal.push(0x08),
                    b'f' => literal.push(0x0c),
                    b'n' => literal.push(b'\n'),
                    b'r' => literal.push(b'\r'),
                    b't' => literal.push(b'\t'),
                    b'v' => literal.push(0x0b),
                    b'\\' => literal.push(b'\\'),
                    b'c' => {
                        if !literal.is_empty() {
                            out.push(Segment::Literal(std::mem::take(&mut literal)));
                        }
                        out.push(Segment::Stop);
                        return Ok(out);
                    }
                    b'0'..=b'7' => {
                        let mut value = u32::from(e - b'0');
                        let mut n = 1;
                        while n < 3 && matches!(format.get(i), Some(b'0'..=b'7')) {
                            value = value * 8 + u32::from(format[i] - b'0');
                            i += 1;
                            n += 1;
                        }
                        literal.push((value & 0xff) as u8);
                    }
                    _ => {
                        warn(&format!(
                            "unrecognized escape `\\{}'",
                            String::from_utf8_lossy(&[e])
                        ));
                        literal.extend_from_slice(&[b'\\', e]);
                    }
                }
            }
            b'%' => {
                // GNU's flags are `-+ #`; a `0` can only start the width.
                let start = i;
                while i < format.len() && b"-+ #".contains(&format[i]) {
                    i += 1;
                }
                while i < format.len() && format[i].is_ascii_digit() {
                    i += 1;
                }
                if format.get(i) == Some(&b'.') {
                    i += 1;
                    while i < format.len() && format[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                let spec = format[start..i].to_vec();
                let Some(&letter) = format.get(i) else {
                    return Err(ParseError(vec![
                        "error: % at end of format string".to_owned(),
                    ]));
                };
                i += 1;
                match letter {
                    b'%' => {
                        literal.push(b'%');
                        literal.extend_from_slice(&spec);
                    }
                    b'{' | b'[' | b'(' => {
                        return Err(ParseError(vec![format!(
                            "error: the format directive `%{}' is reserved for future use",
                            char::from(letter)
                        )]));
                    }
                    b'A' | b'C' | b'T' => {
                        let Some(&time) = format.get(i) else {
                            warn(&format!(
                                "format directive `%{}' should be followed by another character",
                                char::from(letter)
                            ));
                            literal.push(b'%');
                            literal.extend_from_slice(&spec);
                            literal.push(letter);
                            break;
                        };
                        i += 1;
                        push_directive(&mut out, &mut literal, spec, letter, time);
                    }
                    b'a' | b'b' | b'c' | b'd' | b'D' | b'f' | b'g' | b'G' | b'h' | b'H' | b'i'
                    | b'k' | b'l' | b'm' | b'M' | b'n' | b'p' | b'P' | b's' | b'S' | b't'
                    | b'u' | b'U' | b'y' | b'Y' | b'F' => {
                        push_directive(&mut out, &mut literal, spec, letter, 0);
                    }
                    _ => {
                        warn(&format!(
                            "unrecognized format directive `%{}'",
                            String::from_utf8_lossy(&[letter])
                        ));
                        literal.push(b'%');
                        literal.extend_from_slice(&spec);
                        literal.push(letter);
                    }
                }
            }
            _ => literal.push(c),
        }
    }
    if !literal.is_empty() {
        out.push(Segment::Literal(literal));
    }
    Ok(out)
}

fn push_directive(out: &mut Vec<Segment>, literal: &mut Bytes, spec: Bytes, letter: u8, time: u8) {
    if !literal.is_empty() {
        out.push(Segment::Literal(std::mem::take(literal)));
    }
    out.push(Segment::Directive { spec, letter, time });
}

/// C printf flags, width and precision.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

fn spec(text: &[u8]) -> Spec {
    let mut s = Spec::default();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'-' => s.left = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'#' => s.alt = true,
            b'0' => s.zero = true,
            _ => break,
        }
        i += 1;
    }
    let mut width = 0usize;
    while i < text.len() && text[i].is_ascii_digit() {
        width = width
            .saturating_mul(10)
            .saturating_add(usize::from(text[i] - b'0'));
        i += 1;
    }
    s.width = width;
    if text.get(i) == Some(&b'.') {
        i += 1;
        let mut p = 0usize;
        while i < text.len() && text[i].is_ascii_digit() {
            p = p
                .saturating_mul(10)
                .saturating_add(usize::from(text[i] - b'0'));
            i += 1;
        }
        s.precision = Some(p);
    }
    s
}

/// `%s` with the flags: precision cuts, width pads with spaces.
pub(super) fn string(out: &mut Bytes, text: &[u8], spec_text: &[u8]) {
    let s = spec(spec_text);
    let text = match s.precision {
        Some(p) if p < text.len() => &text[..p],
        _ => text,
    };
    pad(out, text, &s, false);
}

fn pad(out: &mut Bytes, body: &[u8], s: &Spec, zero_ok: bool) {
    let fill = s.width.saturating_sub(body.len());
    if s.left {
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if zero_ok && s.zero {
        // Zeros go after the sign or prefix.
        let sign = body
            .iter()
            .take_while(|b| matches!(b, b'+' | b'-' | b' '))
            .count();
        out.extend_from_slice(&body[..sign]);
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(&body[sign..]);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(body);
    }
}

/// `%d` with the flags.
pub(super) fn integer(out: &mut Bytes, value: i64, spec_text: &[u8]) {
    let s = spec(spec_text);
    let mut digits = value.unsigned_abs().to_string();
    if let Some(p) = s.precision {
        if p == 0 && value == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    let sign = if value < 0 {
        "-"
    } else if s.plus {
        "+"
    } else if s.space {
        " "
    } else {
        ""
    };
    let body = format!("{sign}{digits}");
    pad(out, body.as_bytes(), &s, s.precision.is_none());
}

/// `%o` with the flags (`%m`).
pub(super) fn octal(out: &mut Bytes, value: u32, spec_text: &[u8]) {
    let s = spec(spec_text);
    let mut digits = format!("{value:o}");
    if let Some(p) = s.precision {
        if p == 0 && value == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    if s.alt && !digits.starts_with('0') {
        digits.insert(0, '0');
    }
    pad(out, digits.as_bytes(), &s, s.precision.is_none());
}

/// `%g` with the flags (`%S`).
pub(super) fn float(out: &mut Bytes, value: f64, spec_text: &[u8]) {
    let s = spec(spec_text);
    let p = match s.precision {
        Some(0) => 1,
        Some(p) => p,
        None => 6,
    };
    let mut body = g_format(value.abs(), p, s.alt);
    if value.is_sign_negative() && value != 0.0 {
        body.insert(0, '-');
    } else if s.plus {
        body.insert(0, '+');
    } else if s.space {
        body.insert(0, ' ');
    }
    pad(out, body.as_bytes(), &s, true);
}

/// C's `%.Pg` of a non-negative number.
fn g_format(value: f64, p: usize, alt: bool) -> String {
    if !value.is_finite() {
        return if value.is_nan() { "nan" } else { "inf" }.to_owned();
    }
    let exp_text = format!("{:.*e}", p - 1, value);
    let exponent: i64 = exp_text
        .rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let p = i64::try_from(p).unwrap_or(i64::MAX);
    let strip = |mut s: String| {
        if !alt && s.contains('.') {
            while s.ends_with('0') {
                s.pop();
            }
            if s.ends_with('.') {
                s.pop();
            }
        }
        s
    };
    if exponent < -4 || exponent >= p {
        let (mantissa, _) = exp_text.split_once('e').unwrap_or((&exp_text, ""));
        let mantissa = strip(mantissa.to_owned());
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = usize::try_from(p - 1 - exponent).unwrap_or(0);
        strip(format!("{value:.decimals$}"))
    }
}

/// GNU's ten-digit fraction of a second: nanoseconds and a zero.
pub(super) fn fraction(nanos: i64) -> String {
    format!("{nanos:09}0")
}

/// A time as a `%A`, `%C` or `%T` directive (`letter`), or `%a`, `%c`, `%t` (`letter`
/// 0: the `ctime` shape with a fraction).
pub(super) fn time(when: (i64, i64), letter: u8) -> Bytes {
    let (seconds, nanos) = when;
    let strf = |format: &str| super::sys::strftime(format, seconds).unwrap_or_default();
    match letter {
        0 => {
            let mut out = strf("%a %b %e %H:%M:%S");
            out.push(b'.');
            out.extend_from_slice(fraction(nanos).as_bytes());
            out.extend_from_slice(&strf(" %Y"));
            out
        }
        b'@' => format!("{seconds}.{}", fraction(nanos)).into_bytes(),
        b'+' => {
            let mut out = strf("%Y-%m-%d+%H:%M:%S");
            out.push(b'.');
            out.extend_from_slice(fraction(nanos).as_bytes());
            out
        }
        b'S' | b'T' | b'X' => {
            let mut out = strf(&format!("%{}", char::from(letter)));
            out.push(b'.');
            out.extend_from_slice(fraction(nanos).as_bytes());
            out
        }
        _ => {
            let mut format = String::from("%");
            format.push(char::from(letter));
            strf(&format)
        }
    }
}

/// `ls -l`'s ten mode characters.
pub(super) fn mode_string(meta: &Meta) -> Bytes {
    let mode = meta.mode;
    let kind = match meta.type_letter() {
        b'f' => b'-',
        b'U' => b'?',
        other => other,
    };
    let bit = |mask: u32, c: u8| if mode & mask != 0 { c } else { b'-' };
    let special = |exec: bool, set: bool, on: u8, off: u8| match (exec, set) {
        (true, true) => on,
        (false, true) => off,
        (true, false) => b'x',
        (false, false) => b'-',
    };
    vec![
        kind,
        bit(0o400, b'r'),
        bit(0o200, b'w'),
        special(mode & 0o100 != 0, mode & 0o4000 != 0, b's', b'S'),
        bit(0o040, b'r'),
        bit(0o020, b'w'),
        special(mode & 0o010 != 0, mode & 0o2000 != 0, b's', b'S'),
        bit(0o004, b'r'),
        bit(0o002, b'w'),
        special(mode & 0o001 != 0, mode & 0o1000 != 0, b't', b'T'),
    ]
}

/// `-ls` column widths, which grow as wider values are printed (as gnulib's
/// `list_file` does).
pub(super) struct LsWidths {
    inode: usize,
    blocks: usize,
    nlink: usize,
    owner: usize,
    group: usize,
    size: usize,
    major: usize,
    minor: usize,
}

impl Default for LsWidths {
    fn default() -> Self {
        Self {
            inode: 9,
            blocks: 6,
            nlink: 3,
            owner: 8,
            group: 8,
            size: 8,
            major: 3,
            minor: 3,
        }
    }
}

fn column(out: &mut Bytes, text: &[u8], width: &mut usize, left: bool) {
    *width = (*width).max(text.len());
    let fill = *width - text.len();
    if left {
        out.extend_from_slice(text);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(text);
    }
    out.push(b' ');
}

/// One `-ls` line (without the name and link target).
pub(super) fn ls_prefix(
    out: &mut Bytes,
    widths: &mut LsWidths,
    meta: &Meta,
    owner: &[u8],
    group: &[u8],
    now: i64,
) {
    column(
        out,
        meta.ino.to_string().as_bytes(),
        &mut widths.inode,
        false,
    );
    let kib = (meta.blocks.max(0) * 512 + 1023) / 1024;
    column(out, kib.to_string().as_bytes(), &mut widths.blocks, false);
    out.extend_from_slice(&mode_string(meta));
    out.push(b' ');
    column(
        out,
        meta.nlink.to_string().as_bytes(),
        &mut widths.nlink,
        false,
    );
    column(out, owner, &mut widths.owner, true);
    column(out, group, &mut widths.group, true);
    let kind = meta.type_letter();
    if kind == b'c' || kind == b'b' {
        #[allow(clippy::unnecessary_cast, reason = "dev_t differs by platform")]
        let rdev = meta.rdev as rustix::fs::Dev;
        let major = rustix::fs::major(rdev).to_string();
        let minor = rustix::fs::minor(rdev).to_string();
        let mut device = Bytes::new();
        widths.major = widths.major.max(major.len());
        widths.minor = widths.minor.max(minor.len());
        device.extend(std::iter::repeat_n(b' ', widths.major - major.len()));
        device.extend_from_slice(major.as_bytes());
        device.extend_from_slice(b", ");
        device.extend(std::iter::repeat_n(b' ', widths.minor - minor.len()));
        device.extend_from_slice(minor.as_bytes());
        column(out, &device, &mut widths.size, false);
    } else {
        column(
            out,
            meta.size.to_string().as_bytes(),
            &mut widths.size,
            false,
        );
    }
    // Recent: within the last six months (half of 365.2425 days) and not in the future.
    let when = meta.mtime;
    let six_months_ago = now - 31_556_952 / 2;
    let recent = when.0 > six_months_ago && when.0 <= now;
    let format = if recent { "%b %e %H:%M" } else { "%b %e  %Y" };
    out.extend_from_slice(&super::sys::strftime(format, when.0).unwrap_or_default());
    out.push(b' ');
}

/// A name in a `-ls` line, escaped as GNU escapes it there whatever the locale:
/// backslash escapes for `\\`, `\n`, `\b`, `\r`, `\t`, `\f`, space and `"`, octal for
/// other bytes outside `!`..`~`.
pub(super) fn ls_name(out: &mut Bytes, name: &[u8]) {
    for &c in name {
        match c {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0c => out.extend_from_slice(b"\\f"),
            b' ' => out.extend_from_slice(b"\\ "),
            b'"' => out.extend_from_slice(b"\\\""),
            0x21..=0x7e => out.push(c),
            _ => out.extend_from_slice(format!("\\{c:03o}").as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(f: impl Fn(&mut Bytes)) -> String {
        let mut out = Bytes::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_follow_c_printf() {
        assert_eq!(render(|o| integer(o, 1, b"05")), "00001");
        assert_eq!(render(|o| integer(o, 0, b"-05")), "0    ");
        assert_eq!(render(|o| integer(o, 0, b" ")), " 0");
        assert_eq!(render(|o| integer(o, 0, b"+")), "+0");
        assert_eq!(render(|o| integer(o, 0, b".0")), "");
        assert_eq!(render(|o| octal(o, 0o644, b"#")), "0644");
        assert_eq!(render(|o| octal(o, 0o644, b"#5")), " 0644");
        assert_eq!(render(|o| octal(o, 0o644, b"05")), "00644");
        assert_eq!(render(|o| float(o, 1_365.333_333, b"")), "1365.33");
        assert_eq!(render(|o| float(o, 1_365.333_333, b".2")), "1.4e+03");
        assert_eq!(render(|o| float(o, 1.0, b"+")), "+1");
        assert_eq!(render(|o| float(o, 0.000_012_5, b"")), "1.25e-05");
        assert_eq!(render(|o| string(o, b"d/f", b"05")), "  d/f");
        assert_eq!(render(|o| string(o, b"./big", b"-10")), "./big     ");
        assert_eq!(render(|o| string(o, b"./big", b".2")), "./");
    }

    #[test]
    fn escapes_and_directives_parse_as_gnu() {
        let segments = parse(b"\\1\\12\\123\\1234|%5%|%-5%|%%").unwrap();
        assert_eq!(
            segments,
            vec![Segment::Literal(b"\x01\nSS4|%5|%-5|%".to_vec())]
        );
        assert!(parse(b"%").is_err());
        assert_eq!(
            parse(b"a\\cb").unwrap(),
            vec![Segment::Literal(b"a".to_vec()), Segment::Stop]
        );
    }
}
