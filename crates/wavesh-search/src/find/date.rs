//! Date strings for `-newerXt`, read as GNU find reads them (gnulib's `parse_datetime`),
//! in the forms people write:
//! - `@SECONDS` since the epoch, negative or with a fraction (`@-1.5`);
//! - calendar dates: ISO 8601 `1991-12-14` (a two-digit year is 1969–2068), `19911214`,
//!   `12/14/1991`, `12/14`, `14 Dec 1991`, `Dec 14, 1991`;
//! - times of day: `20:31`, `20:31:05.25`, `8pm`, `12am`, after the date or after a `T`
//!   (`1991-12-14T00:01`); a bare `HHMM` after a date;
//! - zones: `Z`, `UTC`, `GMT`, `UT`, and numeric offsets after a time (`+01:00`, `-0330`,
//!   `+01`); without one the time is local (`TZ` applies);
//! - weekday names (`Sat`, `saturday`): ignored beside a date, alone the next such day;
//! - relative items: `now`, `today`, `yesterday`, `tomorrow`, `N unit` (`year`, `month`,
//!   `fortnight`, `week`, `day`, `hour`, `minute`/`min`, `second`/`sec`, plural or not),
//!   `next`/`last`/`this unit`, `ago`; years, months and days move the calendar date,
//!   the others the instant.
//!
//! A date without a time means its midnight; a time without a date means today; relative
//! items alone count from now; nothing at all (an empty string) is today's midnight.

/// Seconds and nanoseconds since the epoch of `text`, or `None` where GNU's reader would
/// not understand it either (or where it uses a form this one does not know).
pub(super) fn parse(text: &[u8], now: (i64, i64)) -> Option<(i64, i64)> {
    let text = std::str::from_utf8(text).ok()?;
    let trimmed = text.trim_start();
    if let Some(epoch) = trimmed.strip_prefix('@') {
        return epoch_seconds(epoch.trim_end());
    }
    let mut reader = Reader {
        s: text.as_bytes(),
        i: 0,
        date: None,
        time: None,
        zone: None,
        rel: Relative::default(),
        rel_seen: false,
        last_rel: None,
        pending_month: None,
        weekday: None,
    };
    reader.run()?;
    reader.resolve(now)
}

/// `@[-+]DIGITS[.DIGITS]`.
fn epoch_seconds(text: &str) -> Option<(i64, i64)> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = match digits.find(['.', ',']) {
        Some(at) => (&digits[..at], &digits[at + 1..]),
        None => (digits, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos = fraction_nanos(fraction);
    if negative {
        if nanos == 0 {
            Some((-seconds, 0))
        } else {
            Some((-seconds - 1, 1_000_000_000 - nanos))
        }
    } else {
        Some((seconds, nanos))
    }
}

/// The nanoseconds of a decimal fraction's digits (truncated past nine).
fn fraction_nanos(digits: &str) -> i64 {
    let mut nanos = 0i64;
    for (k, b) in digits.bytes().take(9).enumerate() {
        nanos += i64::from(b - b'0') * 10i64.pow(8 - u32::try_from(k).unwrap_or(8));
    }
    nanos
}

#[derive(Default, Clone, Copy)]
struct Relative {
    years: i64,
    months: i64,
    days: i64,
    seconds: i64,
}

#[derive(Clone, Copy)]
struct Date {
    year: Option<i64>,
    month: i64,
    day: i64,
}

#[derive(Clone, Copy)]
struct Time {
    hour: i64,
    minute: i64,
    second: i64,
    nanos: i64,
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    date: Option<Date>,
    time: Option<Time>,
    /// The zone's offset east of UTC, in seconds.
    zone: Option<i64>,
    rel: Relative,
    /// A relative item was read (`now` is one).
    rel_seen: bool,
    /// The last relative item read (its unit and count), for `ago`.
    last_rel: Option<(Unit, i64)>,
    /// A month name read before its day (`Dec 14`).
    pending_month: Option<i64>,
    /// A weekday's name (0 for Sunday): beside a date it is ignored, alone it is the
    /// next such day (today if it is one).
    weekday: Option<i64>,
}

fn weekday(word: &str) -> Option<i64> {
    const NAMES: [&str; 7] = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    let word = word.strip_suffix('.').unwrap_or(word);
    let short = match word {
        "tues" => "tue",
        "wednes" | "wed" => "wed",
        "thur" | "thurs" => "thu",
        other => other,
    };
    NAMES
        .iter()
        .position(|name| *name == word || (short.len() == 3 && name.starts_with(short)))
        .map(|k| i64::try_from(k).unwrap_or(0))
}

#[derive(Clone, Copy)]
enum Unit {
    Year,
    Month,
    Day,
    Second,
}

/// A unit word's unit and multiple.
fn unit(word: &str) -> Option<(Unit, i64)> {
    let word = word.strip_suffix('s').unwrap_or(word);
    Some(match word {
        "year" => (Unit::Year, 1),
        "month" => (Unit::Month, 1),
        "fortnight" => (Unit::Day, 14),
        "week" => (Unit::Day, 7),
        "day" => (Unit::Day, 1),
        "hour" => (Unit::Second, 3600),
        "minute" | "min" => (Unit::Second, 60),
        "second" | "sec" => (Unit::Second, 1),
        _ => return None,
    })
}

fn month(word: &str) -> Option<i64> {
    const NAMES: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let word = word.strip_suffix('.').unwrap_or(word);
    if word == "sept" {
        return Some(9);
    }
    NAMES
        .iter()
        .position(|name| {
            word.len() >= 3 && (*name == word || (word.len() == 3 && name.starts_with(word)))
        })
        .map(|k| i64::try_from(k).unwrap_or(0) + 1)
}

/// A year as written: two digits are 1969–2068 (POSIX).
fn full_year(value: i64, digits: usize) -> i64 {
    if digits == 2 {
        if value < 69 {
            2000 + value
        } else {
            1900 + value
        }
    } else {
        value
    }
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    fn skip_space(&mut self) {
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_whitespace() || b == b',')
        {
            self.i += 1;
        }
    }

    /// Digits at the cursor: their value and count.
    fn number(&mut self) -> Option<(i64, usize)> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 || digits > 18 {
            return None;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        Some((text.parse().ok()?, digits))
    }

    fn word(&mut self) -> String {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'.')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).to_ascii_lowercase()
    }

    /// The next word after spaces, without moving.
    fn next_word(&self) -> String {
        let mut j = self.i;
        while self.s.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let start = j;
        while self.s.get(j).is_some_and(u8::is_ascii_alphabetic) {
            j += 1;
        }
        String::from_utf8_lossy(&self.s[start..j]).to_ascii_lowercase()
    }

    fn run(&mut self) -> Option<()> {
        loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                break;
            };
            if c.is_ascii_digit() {
                self.numeric_item()?;
            } else if (c == b'+' || c == b'-')
                && self.peek_at(1).is_some_and(|b| b.is_ascii_digit())
            {
                self.signed_item()?;
            } else if c.is_ascii_alphabetic() {
                self.word_item()?;
            } else {
                return None;
            }
        }
        if self.pending_month.is_some() {
            return None;
        }
        Some(())
    }

    fn set_date(&mut self, date: Date) -> Option<()> {
        if self.date.is_some() || !(1..=12).contains(&date.month) || !(1..=31).contains(&date.day) {
            return None;
        }
        self.date = Some(date);
        Some(())
    }

    fn set_time(&mut self, time: Time) -> Option<()> {
        if self.time.is_some() || time.hour > 24 || time.minute > 59 || time.second > 60 {
            return None;
        }
        self.time = Some(time);
        Some(())
    }

    fn add_relative(&mut self, unit: Unit, count: i64) {
        self.rel_seen = true;
        match unit {
            Unit::Year => self.rel.years += count,
            Unit::Month => self.rel.months += count,
            Unit::Day => self.rel.days += count,
            Unit::Second => self.rel.seconds += count,
        }
        self.last_rel = Some((unit, count));
    }

    /// An item that starts with a digit.
    fn numeric_item(&mut self) -> Option<()> {
        let (n, digits) = self.number()?;
        match self.peek() {
            Some(b'-') if self.peek_at(1).is_some_and(|b| b.is_ascii_digit()) => {
                // ISO 8601: YEAR-MM-DD, maybe `T` and a time.
                self.i += 1;
                let (m, _) = self.number()?;
                if self.peek() != Some(b'-') {
                    return None;
                }
                self.i += 1;
                let (d, _) = self.number()?;
                self.set_date(Date {
                    year: Some(full_year(n, digits)),
                    month: m,
                    day: d,
                })?;
                if matches!(self.peek(), Some(b'T' | b't'))
                    && self.peek_at(1).is_some_and(|b| b.is_ascii_digit())
                {
                    self.i += 1;
                    let (h, _) = self.number()?;
                    if self.peek() != Some(b':') {
                        return None;
                    }
                    self.time_after_hour(h)?;
                }
            }
            Some(b'/') => {
                self.i += 1;
                let (d, _) = self.number()?;
                let mut year = None;
                if self.peek() == Some(b'/') {
                    self.i += 1;
                    let (y, digits) = self.number()?;
                    year = Some(full_year(y, digits));
                }
                self.set_date(Date {
                    year,
                    month: n,
                    day: d,
                })?;
            }
            Some(b':') => self.time_after_hour(n)?,
            _ => {
                let word = self.next_word();
                if let Some((unit, multiple)) = unit(&word) {
                    self.skip_space();
                    self.word();
                    self.add_relative(unit, n * multiple);
                } else if word == "am" || word == "pm" {
                    self.set_time(Time {
                        hour: n,
                        minute: 0,
                        second: 0,
                        nanos: 0,
                    })?;
                } else if let Some(month) = self.pending_month.take() {
                    // `Dec 14`, maybe a year after it.
                    let year = self.year_after()?;
                    self.set_date(Date {
                        year,
                        month,
                        day: n,
                    })?;
                } else if let Some(month) = month(&word) {
                    // `14 Dec`, maybe a year after it.
                    self.skip_space();
                    self.word();
                    let year = self.year_after()?;
                    self.set_date(Date {
                        year,
                        month,
                        day: n,
                    })?;
                } else if self.date.is_none() && digits > 4 {
                    // YYYYMMDD (or YYMMDD).
                    self.set_date(Date {
                        year: Some(full_year(n / 10_000, digits - 4)),
                        month: n / 100 % 100,
                        day: n % 100,
                    })?;
                } else if self.date.is_some_and(|d| d.year.is_none()) && self.time.is_none() {
                    let date = self.date.as_mut()?;
                    date.year = Some(full_year(n, digits));
                } else if self.date.is_some() && self.time.is_none() && digits <= 4 {
                    // HHMM or HH after a date.
                    let (hour, minute) = if digits <= 2 {
                        (n, 0)
                    } else {
                        (n / 100, n % 100)
                    };
                    self.set_time(Time {
                        hour,
                        minute,
                        second: 0,
                        nanos: 0,
                    })?;
                } else {
                    return None;
                }
            }
        }
        Some(())
    }

    /// A year after a day and a month name, if one follows.
    fn year_after(&mut self) -> Option<Option<i64>> {
        let save = self.i;
        self.skip_space();
        if self.peek().is_some_and(|b| b.is_ascii_digit()) {
            let start = self.i;
            let (y, digits) = self.number()?;
            // A time (`Dec 14 10:00`) is not a year.
            if self.peek() == Some(b':') || (digits != 2 && digits != 4) {
                self.i = start;
                return Some(None);
            }
            return Some(Some(full_year(y, digits)));
        }
        self.i = save;
        Some(None)
    }

    /// The rest of a time after its hour and a `:`, and a zone right after it.
    fn time_after_hour(&mut self, hour: i64) -> Option<()> {
        self.i += 1;
        let (minute, _) = self.number()?;
        let mut second = 0;
        let mut nanos = 0;
        if self.peek() == Some(b':') {
            self.i += 1;
            second = self.number()?.0;
            if matches!(self.peek(), Some(b'.' | b',')) {
                self.i += 1;
                let start = self.i;
                self.number()?;
                nanos = fraction_nanos(std::str::from_utf8(&self.s[start..self.i]).ok()?);
            }
        }
        self.set_time(Time {
            hour,
            minute,
            second,
            nanos,
        })?;
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.zone_offset()?;
        }
        Some(())
    }

    /// `+HH`, `+HHMM`, `+HH:MM` (or `-`).
    fn zone_offset(&mut self) -> Option<()> {
        let sign = if self.peek() == Some(b'-') { -1 } else { 1 };
        self.i += 1;
        let (n, digits) = self.number()?;
        let (hours, minutes) = if self.peek() == Some(b':') {
            self.i += 1;
            let (m, _) = self.number()?;
            (n, m)
        } else if digits <= 2 {
            (n, 0)
        } else if digits <= 4 {
            (n / 100, n % 100)
        } else {
            return None;
        };
        if hours > 24 || minutes > 59 || self.zone.is_some() {
            return None;
        }
        self.zone = Some(sign * (hours * 3600 + minutes * 60));
        Some(())
    }

    /// `+N unit`, `-N unit`, or a zone after a time (`10:00 -0330`).
    fn signed_item(&mut self) -> Option<()> {
        let sign = if self.peek() == Some(b'-') { -1 } else { 1 };
        let save = self.i;
        self.i += 1;
        let (n, _) = self.number()?;
        let word = self.next_word();
        if let Some((unit, multiple)) = unit(&word) {
            self.skip_space();
            self.word();
            self.add_relative(unit, sign * n * multiple);
            return Some(());
        }
        if self.time.is_some() {
            self.i = save;
            return self.zone_offset();
        }
        None
    }

    fn word_item(&mut self) -> Option<()> {
        let word = self.word();
        match word.as_str() {
            "now" | "today" => self.add_relative(Unit::Second, 0),
            "yesterday" => self.add_relative(Unit::Day, -1),
            "tomorrow" => self.add_relative(Unit::Day, 1),
            "ago" => {
                let (unit, count) = self.last_rel.take()?;
                self.add_relative(unit, -2 * count);
                self.last_rel = None;
            }
            "am" | "a.m." | "pm" | "p.m." => {
                let time = self.time.as_mut()?;
                if time.hour == 0 || time.hour > 12 {
                    return None;
                }
                time.hour %= 12;
                if word.starts_with('p') {
                    time.hour += 12;
                }
            }
            "utc" | "gmt" | "ut" | "z" | "zulu" => {
                if self.zone.is_some() {
                    return None;
                }
                self.zone = Some(0);
            }
            "t" if self.date.is_some() && self.peek().is_some_and(|b| b.is_ascii_digit()) => {}
            "next" | "last" | "this" => {
                let count = match word.as_str() {
                    "next" => 1,
                    "last" => -1,
                    _ => 0,
                };
                self.skip_space();
                let (unit, multiple) = unit(&self.word())?;
                self.add_relative(unit, count * multiple);
            }
            _ => {
                if let Some((unit, multiple)) = unit(&word) {
                    self.add_relative(unit, multiple);
                } else if let Some(day) = weekday(&word) {
                    if self.weekday.replace(day).is_some() {
                        return None;
                    }
                } else if let Some(month) = month(&word) {
                    if self.pending_month.is_some() {
                        return None;
                    }
                    self.skip_space();
                    if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                        self.pending_month = Some(month);
                    } else {
                        return None;
                    }
                } else {
                    return None;
                }
            }
        }
        Some(())
    }

    /// The instant the items name.
    fn resolve(&self, now: (i64, i64)) -> Option<(i64, i64)> {
        let (mut year, mut month, mut day, hour, minute, second, nanos);
        if self.date.is_none() && self.time.is_none() && self.weekday.is_none() && self.rel_seen {
            let tm = super::sys::broken_down(now.0, self.zone)?;
            (year, month, day, hour, minute, second) = tm;
            nanos = now.1;
        } else {
            let today = super::sys::broken_down(now.0, self.zone)?;
            match self.date {
                Some(date) => {
                    year = date.year.unwrap_or(today.0);
                    month = date.month;
                    day = date.day;
                }
                None => {
                    (year, month, day) = (today.0, today.1, today.2);
                    if let Some(wanted) = self.weekday {
                        let today = (days_from_civil(year, month, day) + 4).rem_euclid(7);
                        day += (wanted - today).rem_euclid(7);
                    }
                }
            }
            let time = self.time.unwrap_or(Time {
                hour: 0,
                minute: 0,
                second: 0,
                nanos: 0,
            });
            (hour, minute, second, nanos) = (time.hour, time.minute, time.second, time.nanos);
        }
        year += self.rel.years;
        month += self.rel.months;
        year += (month - 1).div_euclid(12);
        month = (month - 1).rem_euclid(12) + 1;
        day += self.rel.days;
        let seconds = match self.zone {
            Some(offset) => {
                let days = days_from_civil(year, month, 1) + day - 1;
                days * 86_400 + hour * 3600 + minute * 60 + second - offset
            }
            None => super::sys::local_seconds(year, month, day, hour, minute, second)?,
        };
        let seconds = seconds.checked_add(self.rel.seconds)?;
        Some((seconds, nanos))
    }
}

/// Days from 1970-01-01 to the first... to `year-month-day` (proleptic Gregorian).
pub(super) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Option<(i64, i64)> {
        let mut r = Reader {
            s: text.as_bytes(),
            i: 0,
            date: None,
            time: None,
            zone: None,
            rel: Relative::default(),
            rel_seen: false,
            last_rel: None,
            pending_month: None,
            weekday: None,
        };
        r.run()?;
        // Every case below names its zone, so the local zone does not matter.
        r.resolve((1_000_000_000, 0))
    }

    #[test]
    fn epoch_seconds_take_signs_and_fractions() {
        assert_eq!(parse(b"@0", (0, 0)), Some((0, 0)));
        assert_eq!(parse(b"@-1", (0, 0)), Some((-1, 0)));
        assert_eq!(parse(b"@-1.5", (0, 0)), Some((-2, 500_000_000)));
        assert_eq!(parse(b"@1.25", (0, 0)), Some((1, 250_000_000)));
        assert_eq!(parse(b"@x", (0, 0)), None);
    }

    #[test]
    fn dates_with_zones() {
        assert_eq!(utc("1991-12-14T00:01Z"), Some((692_668_860, 0)));
        assert_eq!(utc("1991-12-14 01:01+01:00"), Some((692_668_860, 0)));
        assert_eq!(utc("19911213 20:31:00-0330"), Some((692_668_860, 0)));
        assert_eq!(utc("1969-12-31T23:59:59Z"), Some((-1, 0)));
        assert_eq!(
            utc("1991-12-14T00:01:02.5Z"),
            Some((692_668_862, 500_000_000))
        );
        assert_eq!(utc("14 dec 1991 UTC"), Some((692_668_800, 0)));
        assert_eq!(utc("Dec 14, 1991 3pm UTC"), Some((692_722_800, 0)));
        assert_eq!(utc("12/14/1991 12am UTC"), Some((692_668_800, 0)));
        assert_eq!(utc("1991-12-14 +3 days UTC"), Some((692_928_000, 0)));
        assert_eq!(utc("1991-12-14 1 hour ago UTC"), Some((692_665_200, 0)));
        assert_eq!(utc("91-12-14 UTC"), Some((692_668_800, 0)));
        assert_eq!(utc("1991-13-14"), None);
        assert_eq!(utc("foo"), None);
    }
}
