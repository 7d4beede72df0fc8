// Fuzzes the cookie-date algorithm (RFC 6265 §5.1.1) that reads an Expires attribute.
//
// Input: the attribute value, any bytes (invalid UTF-8 arrives as U+FFFD, as from a head).
//
// Invariants:
// - A date found lies in the algorithm's range: 1601-01-01 to 9999-12-31, whole seconds.
// - Delimiters around the value change nothing: the algorithm reads tokens between them.
// - Re-encoding a date found in the usual form ("Sun, 06 Nov 1994 08:49:37 GMT") and reading it
//   again gives the same date.

import Foundation
import FuzzSupport
@testable import UVNetworking

/// The usual Expires form of `date`, built by hand so that the check does not lean on a formatter.
func imfFixdate(_ date: Date) -> String {
    let seconds = Int(date.timeIntervalSince1970)
    let days = Int((Double(seconds) / 86_400).rounded(.down))
    let secondOfDay = seconds - days * 86_400
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let weekday = weekdays[((days % 7) + 7) % 7]
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
}

/// -11644473600: 1601-01-01T00:00:00Z; 253402300799: 9999-12-31T23:59:59Z.
let earliest = Date(timeIntervalSince1970: -11_644_473_600)
let latest = Date(timeIntervalSince1970: 253_402_300_799)

runFuzzer { bytes in
    let text = String(decoding: bytes, as: UTF8.self)
    let date = CookieDate.parse(text)
    fuzzCheck(CookieDate.parse(" \(text);") == date, "delimiters around \(text.debugDescription) changed the date")
    guard let date else { return }
    fuzzCheck(date >= earliest && date <= latest, "\(date) out of range for \(text.debugDescription)")
    fuzzCheck(date.timeIntervalSince1970.rounded() == date.timeIntervalSince1970, "fractional seconds from \(text.debugDescription)")
    let again = imfFixdate(date)
    fuzzCheck(CookieDate.parse(again) == date, "\(text.debugDescription) gave \(date), whose form \(again.debugDescription) reads differently")
}
