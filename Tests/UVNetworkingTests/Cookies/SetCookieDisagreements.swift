/// The Set-Cookie lines both parsers read in `SetCookieDifferentialTests`, and the ones on which
/// they disagree, each with its RFC 6265 reason.
enum SetCookieDisagreements {
    /// What servers send, and the edge cases of RFC 6265 §5.2 (103 lines).
    static let lines: [String] = [
        // Plain pairs and the usual attributes.
        "sid=31d4d96e407aad42",
        "sid=31d4d96e407aad42; Path=/; Domain=example.com",
        "sid=31d4d96e407aad42; Path=/; Secure; HttpOnly",
        "lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
        "lang=en-US; Path=/; Max-Age=3600",
        "id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure; HttpOnly",
        "session=abc; SameSite=Strict",
        "session=abc; SameSite=Lax; Secure",
        "session=abc; SameSite=None; Secure",
        "__Host-id=1; Secure; Path=/",
        "__Secure-id=1; Secure; Domain=example.com",
        "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig; Path=/api; HttpOnly",
        "pref=dark; Max-Age=31536000; Path=/; SameSite=Lax",
        "cart=; Max-Age=0; Path=/",
        "cart=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
        "a=b; Domain=.Example.COM",
        "a=b; domain=example.com; path=/; secure; httponly",
        "a=b; DOMAIN=example.com; PATH=/x; SECURE; HTTPONLY",
        "a=b; Path=/docs/web",
        "a=b; Max-Age=-1",
        "a=b; Max-Age=10; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
        // Names and values.
        "a=",
        "a=b=c",
        " a = b ",
        "a\t=\tb",
        "a=b c",
        "a=\"quoted\"",
        "a=\"x;y\"",
        "a=\"with space\"",
        "a=\"esc\\\"aped\"",
        "a=\"\\073\"",
        "a=%3B%20encoded",
        "a=é",
        "é=b",
        "a b=c",
        "a,b=c",
        "a=b,c",
        "a=[1,2]",
        "a={\"json\":1}",
        "a:b=c",
        "a(b)=c",
        "a?=b",
        "$Version=1",
        "$Path=/; a=b",
        "=b",
        "abc",
        "",
        ";a=b",
        "a=b;",
        "a=b;;",
        "a=b; ; Path=/",
        // Attributes: unknown, repeated, empty, invalid.
        "a=b; Foo=bar",
        "a=b; Foo",
        "a=b; c=d",
        "a=b; Path",
        "a=b; Path=",
        "a=b; Path=relative",
        "a=b; Path=/x; Path=/y",
        "a=b; Domain=",
        "a=b; Domain=.",
        "a=b; Domain=example.com; Domain=other.org",
        "a=b; Domain=localhost",
        "a=b; Domain=127.0.0.1",
        "a=b; Secure=false",
        "a=b; HttpOnly=1",
        "a=b; Max-Age=",
        "a=b; Max-Age=abc",
        "a=b; Max-Age=1e3",
        "a=b; Max-Age=+10",
        "a=b; Max-Age=0",
        "a=b; Max-Age=99999999999999999999",
        "a=b; Max-Age=10; Max-Age=20",
        "a=b; SameSite=strict",
        "a=b; SameSite=Foo",
        "a=b; SameSite",
        "a=b; Comment=hello",
        "a=b; Version=1",
        "a=b; Partitioned; Secure",
        "a=b; Priority=High",
        "a=b; path=/; PATH=/z",
        "a=b;Path=/;Secure",
        "a=b ;  Path = /x  ; Secure ",
        // Dates (§5.1.1).
        "a=b; Expires=Sun, 06 Nov 1994 08:49:37 GMT",
        "a=b; Expires=Sunday, 06-Nov-94 08:49:37 GMT",
        "a=b; Expires=Sun Nov  6 08:49:37 1994",
        "a=b; Expires=Wed, 09-Jun-2021 10:18:14 GMT",
        "a=b; Expires=09 Jun 2021 10:18:14",
        "a=b; Expires=Wed, 09 Jun 21 10:18:14 GMT",
        "a=b; Expires=Wed, 09 Jun 69 10:18:14 GMT",
        "a=b; Expires=Wed, 09 Jun 70 10:18:14 GMT",
        "a=b; Expires=Fri, 31 Dec 9999 23:59:59 GMT",
        "a=b; Expires=Mon, 01 Jan 1600 00:00:00 GMT",
        "a=b; Expires=Thu, 30 Feb 2021 10:00:00 GMT",
        "a=b; Expires=Wed, 09 Jun 2021 25:00:00 GMT",
        "a=b; Expires=tomorrow",
        "a=b; Expires=",
        "a=b; Expires=2021-06-09T10:18:14Z",
        "a=b; Expires=Wed, 09 Jun 2021 10:18:14 +0200",
        // Control characters and odd bytes.
        "a=b\u{7F}",
        "a=b\u{01}c",
        "a=b; Path=/\u{1F}",
        "a\tb=c",
        "a=\u{00A0}b",
    ]

    /// Every line on which the two disagree, with the RFC 6265 reason ours reads it as it does.
    static let table: [String: String] = [
        "a b=c": Reason.nameIsAnyText,
        "a\tb=c": Reason.nameIsAnyText,
        "a(b)=c": Reason.nameIsAnyText,
        "a,b=c": Reason.nameIsAnyText,
        "a?=b": Reason.nameIsAnyText,
        "é=b": Reason.nameIsAnyText,
        "$Version=1": Reason.dollarNamesAreNames,
        "$Path=/; a=b": Reason.dollarNamesAreNames,
        "a=b c": Reason.valueIsAnyText,
        "a={\"json\":1}": Reason.valueIsAnyText,
        "a=é": Reason.valueIsAnyText,
        "a=\u{A0}b": Reason.valueIsAnyText,
        "a=\"quoted\"": Reason.quotesArePartOfTheValue,
        "a=\"with space\"": Reason.quotesArePartOfTheValue,
        "a=\"esc\\\"aped\"": Reason.quotesArePartOfTheValue,
        "a=\"\\073\"": Reason.quotesArePartOfTheValue,
        "a=\"x;y\"": Reason.semicolonEndsThePairEvenInQuotes,
        "a=b; Foo": Reason.unknownOrValuelessAttributesAreSkipped,
        "a=b; Path": Reason.unknownOrValuelessAttributesAreSkipped,
        "a=b; SameSite": Reason.unknownOrValuelessAttributesAreSkipped,
        "a=b; Partitioned; Secure": Reason.unknownOrValuelessAttributesAreSkipped,
        "a=b; ; Path=/": Reason.unknownOrValuelessAttributesAreSkipped,
        "a=b; Max-Age=+10": Reason.maxAgeMustBeDigits,
        "a=b; Max-Age=1e3": Reason.maxAgeMustBeDigits,
        "a=b; Max-Age=abc": Reason.maxAgeMustBeDigits,
        "a=b; Max-Age=99999999999999999999": Reason.maxAgeSaturates,
        "a=b; Path=relative": Reason.relativePathMeansDefaultPath,
        "a=b; SameSite=Foo": Reason.unknownSameSiteIsDefault,
        "a=b; Path=/\u{1F}": Reason.controlCharactersIgnoreTheLine,
        "a=b; Expires=09 Jun 2021 10:18:14": Reason.expiresIsReadByTheCookieDateAlgorithm,
        "a=b; Expires=Sun Nov  6 08:49:37 1994": Reason.expiresIsReadByTheCookieDateAlgorithm,
        "a=b; Expires=Sunday, 06-Nov-94 08:49:37 GMT": Reason.expiresIsReadByTheCookieDateAlgorithm,
        "a=b; Expires=Wed, 09 Jun 2021 10:18:14 +0200": Reason.expiresIsReadByTheCookieDateAlgorithm,
        "a=b; Expires=2021-06-09T10:18:14Z": Reason.unreadableExpiresIsIgnored,
        "a=b; Expires=Mon, 01 Jan 1600 00:00:00 GMT": Reason.unreadableExpiresIsIgnored,
        "a=b; Expires=Wed, 09 Jun 2021 25:00:00 GMT": Reason.unreadableExpiresIsIgnored,
        "a=b; Expires=tomorrow": Reason.unreadableExpiresIsIgnored,
        "a=b; Expires=Thu, 30 Feb 2021 10:00:00 GMT": Reason.impossibleDayIsNoDate,
        "a=b; Expires=Wed, 09 Jun 70 10:18:14 GMT": Reason.twoDigitYearsFollowTheRFC,
    ]

    /// Why ours differs, one per kind of disagreement (the rows of
    /// docs/fuzzing.md).
    enum Reason {
        static let nameIsAnyText = "§5.2 steps 1-5: the name is whatever precedes the first \"=\", trimmed of WSP; SimpleCookie allows only RFC 2109 token characters in a name and drops the line."
        static let dollarNamesAreNames = "§5.2: a name starting with \"$\" is a name like any other (RFC 2109's $Version, $Path are gone); SimpleCookie drops or skips such pairs."
        static let valueIsAnyText = "§5.2 steps 1-5: the value runs to the first \";\" and is trimmed of WSP only, whatever its characters (space, braces, non-ASCII, U+00A0); SimpleCookie stops at characters RFC 2109 does not allow."
        static let quotesArePartOfTheValue = "§5.2 and §4.1.1: DQUOTEs are part of the cookie's value and no escape is undone; SimpleCookie unquotes and unescapes as RFC 2109 did."
        static let semicolonEndsThePairEvenInQuotes = "§5.2 step 1: the name-value pair ends at the first \";\", quoted or not; SimpleCookie reads a quoted string across it."
        static let unknownOrValuelessAttributesAreSkipped = "§5.2: an attribute that is unknown, empty, or lacks the value it needs is ignored and the rest still read; SimpleCookie stops at one and drops the line."
        static let maxAgeMustBeDigits = "§5.2.2: a Max-Age whose first character is not a digit or \"-\", or with a non-digit after, is ignored; SimpleCookie keeps the text."
        static let maxAgeSaturates = "§5.2.2 and §5.3 step 3: a Max-Age past the latest representable date means that date (ours: Date.distantFuture); SimpleCookie keeps the text."
        static let relativePathMeansDefaultPath = "§5.2.4: a Path not starting with \"/\" is the request's default-path (nil here); SimpleCookie keeps it."
        static let unknownSameSiteIsDefault = "RFC 6265bis §5.6.7 (SameSite is not in RFC 6265): an unknown value means \"Default\", no attribute; SimpleCookie keeps the text."
        static let controlCharactersIgnoreTheLine = "RFC 6265bis §5.6 step 1 (control characters other than HTAB make the line ignored): taken because such a value would make every later request to the domain fail our field checks; SimpleCookie keeps the cookie."
        static let expiresIsReadByTheCookieDateAlgorithm = "§5.1.1: Expires is read by the cookie-date token algorithm, in any of the forms servers send (no weekday, RFC 850, asctime, a numeric zone ignored); SimpleCookie accepts only the RFC 1123 form with spaces and drops the line otherwise."
        static let unreadableExpiresIsIgnored = "§5.2.1 and §5.1.1: an Expires that is no cookie-date (ISO 8601, words, a year before 1601, hour 25) is ignored; SimpleCookie keeps the text (http2time cannot read it either)."
        static let impossibleDayIsNoDate = "§5.1.1 step 5: a day-of-month past the month's last day fails the date, so the attribute is ignored; http2time rolls 30 Feb over to 2 Mar."
        static let twoDigitYearsFollowTheRFC = "§5.1.1 step 3: a two-digit year 70 to 99 is 19xx (1970), 0 to 69 is 20xx; http2time picks the century nearest to now (2070)."
    }
}
