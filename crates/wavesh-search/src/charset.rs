//! The locale's character set when it is neither UTF-8 nor C's bytes: EUC-JP, GB18030,
//! KOI8-R, ISO-8859-*, ... Lines are decoded with the C library's own `mbrtowc` in that
//! locale (as GNU grep decodes them), matched as UTF-8 text, and printed as they were
//! read. A byte that does not start a valid character of the set is kept apart as a
//! byte no UTF-8 expression matches (0xFF), as GNU never matches an encoding error.

/// A decoded line: UTF-8 text (invalid bytes as 0xFF) and, for each of its bytes, the
/// offset in the line of the character it came from.
pub(crate) struct Decoded {
    pub(crate) text: Vec<u8>,
    origin: Vec<usize>,
    line_len: usize,
    pub(crate) valid: bool,
}

impl Decoded {
    /// The line's offset of the text's offset `at` (a character boundary).
    pub(crate) fn origin(&self, at: usize) -> usize {
        self.origin.get(at).copied().unwrap_or(self.line_len)
    }
}

/// A character set the C library decodes. Only glibc's (whose wide characters are
/// Unicode in every locale, `__STDC_ISO_10646__`): elsewhere such a locale still goes to
/// the system grep.
pub(crate) struct Charset {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    locale: libc::locale_t,
    /// A single-byte set: each byte's character (`None`: not a character).
    table: Option<Box<[Option<char>; 256]>>,
}

// SAFETY: a locale object is never changed after `newlocale`; glibc lets any thread use
// it through `uselocale`.
#[expect(
    unsafe_code,
    reason = "the C library's locale object is shared read-only"
)]
unsafe impl Send for Charset {}
// SAFETY: as above.
#[expect(
    unsafe_code,
    reason = "the C library's locale object is shared read-only"
)]
unsafe impl Sync for Charset {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "mbrtowc(3) is not in the libc crate")]
unsafe extern "C" {
    fn mbrtowc(
        pwc: *mut libc::wchar_t,
        s: *const libc::c_char,
        n: libc::size_t,
        ps: *mut libc::c_void,
    ) -> libc::size_t;
}

/// Room for any C library's `mbstate_t` (glibc's is 8 bytes, others' up to 128).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[repr(C, align(8))]
struct MbState([u8; 128]);

impl Charset {
    /// The character set of the locale `name` (an `LC_ALL`/`LC_CTYPE`/`LANG` value), or
    /// `None` where the C library has no such locale.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(crate) fn new(name: &str) -> Option<Charset> {
        let c_name = std::ffi::CString::new(name).ok()?;
        #[expect(unsafe_code, reason = "newlocale(3) has no safe wrapper")]
        // SAFETY: a valid C string; a null base asks for a new object.
        let locale =
            unsafe { libc::newlocale(libc::LC_CTYPE_MASK, c_name.as_ptr(), std::ptr::null_mut()) };
        if locale.is_null() {
            return None;
        }
        let mut charset = Charset {
            locale,
            table: None,
        };
        let mut table = Box::new([None; 256]);
        let mut single = true;
        for byte in 0..=255u8 {
            match charset.decode_one(&[byte]) {
                Step::Char(c, 1) => table[usize::from(byte)] = Some(c),
                Step::Incomplete => single = false,
                _ => {}
            }
        }
        if single {
            charset.table = Some(table);
        }
        Some(charset)
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    pub(crate) fn new(_name: &str) -> Option<Charset> {
        None
    }

    /// The first character of `bytes`, as the locale reads it.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn decode_one(&self, bytes: &[u8]) -> Step {
        let mut state = MbState([0; 128]);
        let mut wide: libc::wchar_t = 0;
        #[expect(
            unsafe_code,
            reason = "uselocale(3) and mbrtowc(3) have no safe wrapper"
        )]
        // SAFETY: `self.locale` is a live locale object; `bytes` is readable for its
        // length; `wide` and `state` are writable and `state` starts zeroed (the initial
        // shift state). The thread's locale is restored before returning.
        let n = unsafe {
            let previous = libc::uselocale(self.locale);
            let n = mbrtowc(
                &mut wide,
                bytes.as_ptr().cast(),
                bytes.len(),
                std::ptr::from_mut(&mut state).cast(),
            );
            libc::uselocale(previous);
            n
        };
        match n {
            usize::MAX => Step::Invalid,
            n if n == usize::MAX - 1 => Step::Incomplete,
            n => match char::from_u32(wide as u32) {
                Some(c) => Step::Char(c, n.max(1)),
                None => Step::Invalid,
            },
        }
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    fn decode_one(&self, bytes: &[u8]) -> Step {
        if bytes.is_empty() {
            Step::Incomplete
        } else {
            Step::Invalid
        }
    }

    /// `line` as UTF-8 text.
    pub(crate) fn decode(&self, line: &[u8]) -> Decoded {
        let mut text = Vec::with_capacity(line.len() * 2);
        let mut origin = Vec::with_capacity(line.len() * 2);
        let mut valid = true;
        let mut i = 0;
        while i < line.len() {
            let byte = line[i];
            let step = if byte.is_ascii() {
                Step::Char(char::from(byte), 1)
            } else if let Some(table) = &self.table {
                table[usize::from(byte)].map_or(Step::Invalid, |c| Step::Char(c, 1))
            } else {
                self.decode_one(&line[i..])
            };
            match step {
                Step::Char(c, n) => {
                    let mut buffer = [0u8; 4];
                    let encoded = c.encode_utf8(&mut buffer).as_bytes();
                    text.extend_from_slice(encoded);
                    origin.extend(std::iter::repeat_n(i, encoded.len()));
                    i += n;
                }
                Step::Invalid | Step::Incomplete => {
                    valid = false;
                    text.push(0xFF);
                    origin.push(i);
                    i += 1;
                }
            }
        }
        Decoded {
            text,
            origin,
            line_len: line.len(),
            valid,
        }
    }

    /// Whether a character may take more than one byte (EUC-JP, GB18030, ...).
    pub(crate) fn multibyte(&self) -> bool {
        self.table.is_none()
    }

    /// `bytes` as a string, when each of them is part of a character.
    pub(crate) fn to_text(&self, bytes: &[u8]) -> Option<String> {
        let decoded = self.decode(bytes);
        if !decoded.valid {
            return None;
        }
        String::from_utf8(decoded.text).ok()
    }

    /// Whether every byte of `bytes` is part of a character.
    pub(crate) fn valid(&self, bytes: &[u8]) -> bool {
        bytes.is_ascii() || self.decode(bytes).valid
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl Drop for Charset {
    fn drop(&mut self) {
        #[expect(unsafe_code, reason = "freelocale(3) has no safe wrapper")]
        // SAFETY: the object came from newlocale and is no thread's locale now.
        unsafe {
            libc::freelocale(self.locale);
        }
    }
}

enum Step {
    /// A character and the bytes it takes.
    Char(char, usize),
    Invalid,
    Incomplete,
}
