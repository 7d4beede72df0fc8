import Foundation

/// The cookie-date algorithm of RFC 6265 §5.1.1: the forgiving reading of an Expires attribute.
///
/// Servers send every date format ever invented ("Wed, 09 Jun 2021 10:18:14 GMT",
/// "Wednesday, 09-Jun-21 10:18:14 GMT", "Wed Jun  9 10:18:14 2021"); the algorithm does not
/// recognise formats but picks the first token that looks like a time, a day, a month and a
/// year, in that order of preference. It works on bytes: the grammar is defined on octets, and
/// non-ASCII bytes are ordinary non-delimiters.
enum CookieDate {
    /// The date `text` names, in UTC; nil when the algorithm fails (a missing or out-of-range
    /// field, or a day the month does not have).
    static func parse(_ text: String) -> Date? {
        var fields = Fields()
        var text = text
        text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                // Step 1: date-tokens are runs of non-delimiters.
                while index < bytes.count && isDelimiter(bytes[index]) { index += 1 }
                let start = index
                while index < bytes.count && !isDelimiter(bytes[index]) { index += 1 }
                if index > start { fields.consider(UnsafeBufferPointer(rebasing: bytes[start..<index])) }
            }
        }
        return fields.date
    }

    /// delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
        default: return false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The fields found so far (step 2) and their checks (steps 3 to 6).
    private struct Fields {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        /// Step 2: a token fills the first field, in the RFC's order, that is still empty and
        /// whose production the token matches; a token matching none is ignored.
        mutating func consider(_ token: UnsafeBufferPointer<UInt8>) {
            if time == nil, let value = CookieDate.time(token) { time = value; return }
            if dayOfMonth == nil, let value = CookieDate.leadingDigits(token, minimum: 1, maximum: 2) { dayOfMonth = value; return }
            if month == nil, let value = CookieDate.month(token) { month = value; return }
            if year == nil, let value = CookieDate.leadingDigits(token, minimum: 2, maximum: 4) { year = value; return }
        }

        var date: Date? {
            guard let time, let dayOfMonth, let month, var year else { return nil }
            // Steps 3 and 4: two-digit years; 70 to 99 are 1900s, 0 to 69 are 2000s.
            if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
            // Step 5.
            guard (1...31).contains(dayOfMonth), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else {
                return nil
            }
            // Step 6: "Feb 30" names no date.
            guard dayOfMonth <= CookieDate.days(inMonth: month, of: year) else { return nil }
            let days = CookieDate.daysSinceEpoch(year: year, month: month, day: dayOfMonth)
            let seconds = days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
    }

    /// `minimum` to `maximum` digits, then nothing or a non-digit followed by anything
    /// (day-of-month = 1*2DIGIT ( non-digit *OCTET ); year = 2*4DIGIT ( non-digit *OCTET )).
    private static func leadingDigits(_ token: UnsafeBufferPointer<UInt8>, minimum: Int, maximum: Int) -> Int? {
        var value = 0
        var count = 0
        while count < token.count && isDigit(token[count]) {
            guard count < maximum else { return nil }
            value = value * 10 + Int(token[count] - 0x30)
            count += 1
        }
        return count >= minimum ? value : nil
    }

    /// time = hms-time ( non-digit *OCTET ); hms-time = time-field ":" time-field ":" time-field;
    /// time-field = 1*2DIGIT.
    private static func time(_ token: UnsafeBufferPointer<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var index = 0
        /// One or two digits at `index`, then, unless `last`, a colon.
        func field(last: Bool) -> Int? {
            let start = index
            var value = 0
            while index < token.count && isDigit(token[index]) && index - start < 2 {
                value = value * 10 + Int(token[index] - 0x30)
                index += 1
            }
            guard index > start else { return nil }
            if last {
                // A third digit is not the non-digit the grammar wants: "12:34:567" is no time.
                guard index == token.count || !isDigit(token[index]) else { return nil }
            } else {
                guard index < token.count, token[index] == 0x3A else { return nil }
                index += 1
            }
            return value
        }
        guard let hour = field(last: false), let minute = field(last: false), let second = field(last: true) else { return nil }
        return (hour, minute, second)
    }

    private static let monthNames: [[UInt8]] = ["jan", "feb", "mar", "apr", "may", "jun",
                                                "jul", "aug", "sep", "oct", "nov", "dec"].map { Array($0.utf8) }

    /// month = ( "jan" / … / "dec" ) *OCTET, case-insensitively; 1 to 12.
    private static func month(_ token: UnsafeBufferPointer<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        // `| 0x20` lowercases ASCII letters and turns no other byte into one.
        for (index, name) in monthNames.enumerated()
        where name[0] == token[0] | 0x20 && name[1] == token[1] | 0x20 && name[2] == token[2] | 0x20 {
            return index + 1
        }
        return nil
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days before each month in a common year.
    private static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

    /// Leap years from year 1 to `year - 1`.
    private static func leapYears(before year: Int) -> Int {
        (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400
    }

    /// Days from 1970-01-01 to the given Gregorian date (negative before it); `year` >= 1601.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        var days = (year - 1970) * 365 + leapYears(before: year) - leapYears(before: 1970)
        days += daysBeforeMonth[month - 1] + (month > 2 && isLeapYear(year) ? 1 : 0)
        return days + day - 1
    }
}
