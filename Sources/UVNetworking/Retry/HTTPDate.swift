import Foundation

/// Reads an HTTP-date (RFC 9110 §5.6.7) in any of the three forms a recipient must accept:
/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's (`Sun Nov  6 08:49:37 1994`).
///
/// Strict where the forms are (the weekday is not checked against the date, as senders get it
/// wrong and it carries nothing); nil for anything else, so a malformed Retry-After is no delay
/// rather than a wrong one.
enum HTTPDate {
    /// The instant `text` names, or nil when it is no HTTP-date. `now` settles a two-digit
    /// year: one more than 50 years ahead is taken in the past century (RFC 9110 §5.6.7).
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        var fields = text.split(whereSeparator: { $0 == " " }).map(String.init)
        guard let first = fields.first, first.count >= 3 else { return nil }
        if first.hasSuffix(",") {
            fields.removeFirst()
            guard weekdayIsValid(String(first.dropLast()), long: first.count > 4) else { return nil }
            if fields.count == 5 {
                // IMF-fixdate: DD Mon YYYY HH:MM:SS GMT
                guard fields[4] == "GMT", fields[0].count == 2, fields[2].count == 4,
                      let day = number(fields[0]), let month = month(fields[1]), let year = number(fields[2]) else { return nil }
                return instant(year: year, month: month, day: day, time: fields[3])
            }
            // RFC 850: DD-Mon-YY HH:MM:SS GMT
            guard fields.count == 3, fields[2] == "GMT" else { return nil }
            let parts = fields[0].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[0].count == 2, parts[2].count == 2,
                  let day = number(parts[0]), let month = month(parts[1]), let shortYear = number(parts[2]) else { return nil }
            return instant(year: fullYear(shortYear, now: now), month: month, day: day, time: fields[1])
        }
        // asctime: Www Mon D HH:MM:SS YYYY (a one-digit day padded with a space, which split drops)
        guard fields.count == 5, weekdayIsValid(first, long: false), let month = month(fields[1]),
              (1...2).contains(fields[2].count), let day = number(fields[2]), fields[4].count == 4, let year = number(fields[4])
        else { return nil }
        return instant(year: year, month: month, day: day, time: fields[3])
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// ASCII digits only: `Int` would also take a sign.
    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text)
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name).map { $0 + 1 }
    }

    private static func weekdayIsValid(_ name: String, long: Bool) -> Bool {
        long ? longWeekdays.contains(name) : weekdays.contains(name)
    }

    /// A two-digit year, in the century that keeps it at most 50 years ahead of `now`.
    private static func fullYear(_ shortYear: Int, now: Date) -> Int {
        let current = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now).year ?? 2000
        var year = current / 100 * 100 + shortYear
        if year > current + 50 { year -= 100 }
        return year
    }

    /// `HH:MM:SS` on the given day, in UTC; nil for values out of range.
    private static func instant(year: Int, month: Int, day: Int, time: String) -> Date? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
              let hour = number(parts[0]), let minute = number(parts[1]), let second = number(parts[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), year >= 1
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date, in the proleptic Gregorian calendar: whole 400-year
    /// eras of 146,097 days, counting years from March so the leap day falls last.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
