//! Equivalence classes (`[[=a=]]`) of the locale's collation: the characters that
//! collate with the same primary weight as the named one (`a`, `à`, `Å`, ...), as the C
//! library's regular expressions read them. The weights are the C library's own
//! (`wcsxfrm` in the collation locale); the first level of glibc's transformed string
//! ends at its level separator, 1.

/// The members of `c`'s equivalence class in the locale's collation (`LC_ALL`, then
/// `LC_COLLATE`, then `LANG`), or `None` where they cannot be computed here: not glibc,
/// no such locale, or a character with no primary weight (punctuation, which glibc
/// orders by other levels).
pub(crate) fn equivalents(c: char) -> Option<Vec<char>> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<char, Option<Vec<char>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(found) = cache.lock().ok()?.get(&c) {
        return found.clone();
    }
    let members = compute(c);
    cache.lock().ok()?.insert(c, members.clone());
    members
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn compute(c: char) -> Option<Vec<char>> {
    #[expect(unsafe_code, reason = "wcsxfrm(3) is not in the libc crate")]
    unsafe extern "C" {
        fn wcsxfrm(
            dest: *mut libc::wchar_t,
            src: *const libc::wchar_t,
            n: libc::size_t,
        ) -> libc::size_t;
    }
    const ROOM: usize = 64;
    let name = ["LC_ALL", "LC_COLLATE", "LANG"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())?;
    let name = std::ffi::CString::new(name.into_encoded_bytes()).ok()?;
    #[expect(unsafe_code, reason = "newlocale(3) has no safe wrapper")]
    // SAFETY: a valid C string; a null base asks for a new object.
    let locale = unsafe {
        libc::newlocale(
            libc::LC_COLLATE_MASK | libc::LC_CTYPE_MASK,
            name.as_ptr(),
            std::ptr::null_mut(),
        )
    };
    if locale.is_null() {
        return None;
    }
    // The first level of a character's transformed string: its primary weights.
    let primary = |ch: u32, out: &mut [libc::wchar_t; ROOM]| -> Option<usize> {
        let source = [ch as libc::wchar_t, 0];
        #[expect(unsafe_code, reason = "wcsxfrm(3) has no safe wrapper")]
        // SAFETY: `source` is a NUL-terminated wide string, `out` has ROOM elements,
        // which wcsxfrm is told.
        let n = unsafe { wcsxfrm(out.as_mut_ptr(), source.as_ptr(), ROOM) };
        if n >= ROOM {
            return None;
        }
        Some(out[..n].iter().position(|&w| w == 1).unwrap_or(n))
    };
    #[expect(unsafe_code, reason = "uselocale(3) has no safe wrapper")]
    // SAFETY: a live locale object; the previous one is restored below.
    let previous = unsafe { libc::uselocale(locale) };
    let mut wanted = [0; ROOM];
    let members = primary(c as u32, &mut wanted)
        .filter(|&len| len > 0)
        .map(|len| {
            let wanted = &wanted[..len];
            let mut out = [0; ROOM];
            (1..=0x10FFFFu32)
                .filter(|&ch| !(0xD800..0xE000).contains(&ch))
                .filter(|&ch| primary(ch, &mut out).is_some_and(|n| out[..n] == *wanted))
                .filter_map(char::from_u32)
                .collect::<Vec<char>>()
        });
    #[expect(
        unsafe_code,
        reason = "uselocale(3) and freelocale(3) have no safe wrapper"
    )]
    // SAFETY: restores the thread's locale, then frees the object no thread uses now.
    unsafe {
        libc::uselocale(previous);
        libc::freelocale(locale);
    }
    members.filter(|m| m.contains(&c))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn compute(_c: char) -> Option<Vec<char>> {
    None
}
