//! The C library calls GNU find's behaviour rests on, where no safe wrapper has them:
//! the locale (glob matching and time formats follow it, as in GNU find), `fnmatch`,
//! `strftime`, the user and group databases, and a directory change for `-execdir`.
#![expect(unsafe_code, reason = "C library calls without a safe wrapper")]

use std::ffi::{CStr, CString};

/// `setlocale(LC_ALL, "")`, as GNU find does first: `fnmatch` and `strftime` then
/// follow `LC_ALL`, `LC_CTYPE`, `LC_TIME` and `LANG`.
pub(super) fn init_locale() {
    // SAFETY: called once, before any thread is started by this process's find.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
    }
}

/// `fnmatch(pattern, name, flags) == 0`. A NUL byte cannot be in an argument or a name.
pub(super) fn fnmatch(pattern: &CStr, name: &[u8], casefold: bool) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    let flags = if casefold { libc::FNM_CASEFOLD } else { 0 };
    // SAFETY: both strings are NUL-terminated and outlive the call.
    unsafe { libc::fnmatch(pattern.as_ptr(), name.as_ptr(), flags) == 0 }
}

#[allow(clippy::useless_conversion, reason = "time_t is not i64 everywhere")]
/// The broken-down local time of `seconds` (`TZ` applies).
fn local_time(seconds: i64) -> Option<libc::tm> {
    let time = libc::time_t::try_from(seconds).ok()?;
    // SAFETY: an all-zero tm is a valid value; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    let ok = unsafe { !libc::localtime_r(&raw const time, &raw mut tm).is_null() };
    ok.then_some(tm)
}

/// `strftime(format)` of `seconds` in local time; `None` when the time cannot be
/// represented.
pub(super) fn strftime(format: &str, seconds: i64) -> Option<Vec<u8>> {
    let tm = local_time(seconds)?;
    let format = CString::new(format).ok()?;
    let mut buf = vec![0u8; 512];
    // SAFETY: buf has buf.len() bytes; format is NUL-terminated; tm is initialised.
    let n = unsafe {
        libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            format.as_ptr(),
            &raw const tm,
        )
    };
    buf.truncate(n);
    Some(buf)
}

/// The local time's midnight of the day `seconds` is in (for `-daystart`), as GNU
/// computes it: `seconds` less the time of day.
pub(super) fn local_midnight(seconds: i64) -> Option<i64> {
    let tm = local_time(seconds)?;
    Some(seconds - i64::from(tm.tm_sec) - 60 * i64::from(tm.tm_min) - 3600 * i64::from(tm.tm_hour))
}

/// The name of user `uid`, if the user database has one.
pub(super) fn user_name(uid: u32) -> Option<Vec<u8>> {
    // SAFETY: getpwuid returns NULL or a pointer to a record valid until the next call;
    // the name is copied out at once (find is single-threaded here).
    unsafe {
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            return None;
        }
        Some(CStr::from_ptr((*pw).pw_name).to_bytes().to_vec())
    }
}

/// The name of group `gid`, if the group database has one.
pub(super) fn group_name(gid: u32) -> Option<Vec<u8>> {
    // SAFETY: as in user_name.
    unsafe {
        let gr = libc::getgrgid(gid);
        if gr.is_null() || (*gr).gr_name.is_null() {
            return None;
        }
        Some(CStr::from_ptr((*gr).gr_name).to_bytes().to_vec())
    }
}

/// The uid of user `name`.
pub(super) fn user_id(name: &[u8]) -> Option<u32> {
    let name = CString::new(name).ok()?;
    // SAFETY: as in user_name; the uid is copied out at once.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        (!pw.is_null()).then(|| (*pw).pw_uid)
    }
}

/// The gid of group `name`.
pub(super) fn group_id(name: &[u8]) -> Option<u32> {
    let name = CString::new(name).ok()?;
    // SAFETY: as in user_name.
    unsafe {
        let gr = libc::getgrnam(name.as_ptr());
        (!gr.is_null()).then(|| (*gr).gr_gid)
    }
}

/// Makes `command` change to directory `dir` in the child before it runs (`-execdir`):
/// by descriptor, so a directory deeper than PATH_MAX works.
pub(super) fn chdir_before_exec(command: &mut std::process::Command, dir: std::os::fd::RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: fchdir is async-signal-safe; `dir` stays open in the child (it is closed
    // on exec only).
    unsafe {
        command.pre_exec(move || {
            if libc::fchdir(dir) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// Makes `command` run with standard input closed (`-ok`).
pub(super) fn close_stdin_before_exec(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: close is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::close(0);
            Ok(())
        });
    }
}

/// The calendar fields (year, month 1–12, day, hour, minute, second) of `seconds`: in
/// local time, or at `offset` seconds east of UTC.
pub(super) fn broken_down(
    seconds: i64,
    offset: Option<i64>,
) -> Option<(i64, i64, i64, i64, i64, i64)> {
    if let Some(offset) = offset {
        let t = seconds.checked_add(offset)?;
        let days = t.div_euclid(86_400);
        let rest = t.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        return Some((y, m, d, rest / 3600, rest / 60 % 60, rest % 60));
    }
    let tm = local_time(seconds)?;
    Some((
        i64::from(tm.tm_year) + 1900,
        i64::from(tm.tm_mon) + 1,
        i64::from(tm.tm_mday),
        i64::from(tm.tm_hour),
        i64::from(tm.tm_min),
        i64::from(tm.tm_sec),
    ))
}

/// The date of a day counted from 1970-01-01 (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The instant of a local calendar time (`mktime`: fields out of range carry over, and
/// daylight saving time is the zone's at that date).
#[allow(clippy::useless_conversion, reason = "time_t is not i64 everywhere")]
pub(super) fn local_seconds(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    // SAFETY: an all-zero tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = i32::try_from(year - 1900).ok()?;
    tm.tm_mon = i32::try_from(month - 1).ok()?;
    tm.tm_mday = i32::try_from(day).ok()?;
    tm.tm_hour = i32::try_from(hour).ok()?;
    tm.tm_min = i32::try_from(minute).ok()?;
    tm.tm_sec = i32::try_from(second).ok()?;
    tm.tm_isdst = -1;
    // SAFETY: tm is initialised; mktime normalises it in place.
    let t = unsafe { libc::mktime(&raw mut tm) };
    let t = i64::from(t);
    if t == -1 {
        // -1 is also the second before the epoch: an error only if that is not the time.
        let check = local_time(-1)?;
        let same = check.tm_year == tm.tm_year
            && check.tm_mon == tm.tm_mon
            && check.tm_mday == tm.tm_mday
            && check.tm_hour == tm.tm_hour
            && check.tm_min == tm.tm_min
            && check.tm_sec == tm.tm_sec;
        if !same {
            return None;
        }
    }
    Some(t)
}
