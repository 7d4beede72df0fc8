import Foundation
import Testing
@testable import UVNetworking

/// The three forms of HTTP-date a recipient must read (RFC 9110 §5.6.7), and what is refused.
@Suite(.tags(.unit)) struct HTTPDateTests {
    /// 1994-11-06T08:49:37Z, the RFC's own example, in each form.
    private static let example = Date(timeIntervalSince1970: 784_111_777)
    private static let now = Date(timeIntervalSince1970: 1_796_000_000) // 2026-11-30

    @Test func theRFCsExampleInEachForm() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: Self.now) == Self.example)
    }

    @Test func dayBoundariesAndLeapYears() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT") == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Thu, 31 Dec 2026 23:59:59 GMT") == Date(timeIntervalSince1970: 1_798_761_599))
        // Not leap years, or no such day.
        #expect(HTTPDate.parse("Mon, 29 Feb 1900 00:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Sat, 31 Apr 2026 00:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Sat, 00 Apr 2026 00:00:00 GMT") == nil)
    }

    /// A two-digit year more than 50 years ahead is in the past century.
    @Test func twoDigitYearsStayWithinFiftyYearsAhead() {
        let y2070 = HTTPDate.parse("Wednesday, 01-Jan-70 00:00:00 GMT", now: Self.now)
        let y2076 = HTTPDate.parse("Wednesday, 01-Jan-76 00:00:00 GMT", now: Self.now)
        let y1977 = HTTPDate.parse("Saturday, 01-Jan-77 00:00:00 GMT", now: Self.now)
        #expect(y2070 == Date(timeIntervalSince1970: 3_155_760_000))
        #expect(y2076 == Date(timeIntervalSince1970: 3_345_062_400))
        #expect(y1977 == Date(timeIntervalSince1970: 220_924_800))
    }

    @Test func whatIsNoHTTPDate() {
        for text in ["", "120", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                     "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun Nov  6 08:49:37 94",
                     "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT extra",
                     "Sun, 06 Nov -994 08:49:37 GMT", "Sun, 06 Nov 1994 +8:49:37 GMT"] {
            #expect(HTTPDate.parse(text, now: Self.now) == nil, "\(text.debugDescription)")
        }
    }
}
