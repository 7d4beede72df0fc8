import Foundation
import Testing
@testable import UVNetworking

/// RFC 6265 §5.1.1, the cookie-date algorithm. Expected instants are seconds since 1970 UTC.
@Suite(.tags(.unit)) struct CookieDateTests {
    private func seconds(_ text: String) -> TimeInterval? {
        CookieDate.parse(text)?.timeIntervalSince1970
    }

    @Test(arguments: [
        // The formats servers send: RFC 1123, RFC 850, asctime, and Netscape's dashes.
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        ("Sun Nov  6 08:49:37 1994", 784_111_777),
        ("Sun, 06-Nov-1994 08:49:37 GMT", 784_111_777),
        // The fields in any order, any delimiters between them, month names by their first three
        // letters in any case, single-digit fields, trailing garbage after a field.
        ("1994 Nov 06 08:49:37", 784_111_777),
        ("08:49:37/6/NOVEMBER/1994", 784_111_777),
        ("6 nOv 1994 8:49:37", 784_111_777),
        ("06 Nov 1994x 08:49:37GMT", 784_111_777),
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894),
        // A token fills the first empty field it matches: once day, month and year are found, a
        // second time is ignored; before them, it is read as a day ("11" followed by a
        // non-digit), and "09" then becomes the year.
        ("10:18:14 09 Jun 2021 11:00:00", 1_623_233_894),
        ("10:18:14 11:00:00 09 Jun 2021", 1_244_715_494),
        // Two-digit years: 70 to 99 are 1900s, 0 to 69 are 2000s.
        ("Thu, 01 Jan 70 00:00:01 GMT", 1),
        ("Sat, 01 Jan 00 00:00:00 GMT", 946_684_800),
        ("01 Jan 69 00:00:00", 3_124_224_000),
        // Limits that are still dates.
        ("Mon, 01 Jan 1601 00:00:00 GMT", -11_644_473_600),
        ("31 Dec 9999 23:59:59", 253_402_300_799),
        ("Sat, 29 Feb 2020 00:00:00 GMT", 1_582_934_400),
        ("29 Feb 2000 12:00:00", 951_825_600),
    ])
    func parses(_ text: String, _ expected: TimeInterval) {
        #expect(seconds(text) == expected)
    }

    @Test(arguments: [
        // Missing fields.
        "",
        "Wed, 09 Jun 2021 GMT",
        "Wed, 09 2021 10:18:14 GMT",
        "Wed, Jun 2021 10:18:14 GMT",
        "Wed, 09 Jun 10:18:14 GMT",
        // Out of range.
        "Fri, 31 Dec 1600 23:59:59 GMT",
        "09 Jun 999 10:18:14",
        "00 Jun 2021 10:18:14",
        "32 Jun 2021 10:18:14",
        "09 Jun 2021 24:00:00",
        "09 Jun 2021 10:60:00",
        "09 Jun 2021 10:18:60",
        // Days the month does not have.
        "31 Jun 2021 10:18:14",
        "29 Feb 2021 10:18:14",
        "29 Feb 1900 10:18:14",
        // Tokens that match no production: three-digit time fields, a five-digit year, a
        // time with two fields, a day with three digits.
        "09 Jun 2021 100:18:14",
        "09 Jun 2021 10:18:140",
        "09 Jun 20210 10:18:14",
        "09 Jun 2021 10:18",
        "009 Jun 2021 10:18:14",
        "Ju 09 2021 10:18:14",
    ])
    func rejects(_ text: String) {
        #expect(seconds(text) == nil)
    }
}
