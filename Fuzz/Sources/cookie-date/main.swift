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
