@testable import UVNetworking

// What UVNetworking does with each reply of curl's test suite (the curl-replies corpus), decided
// reply by reply from RFC 9110/9112 and from what curl, Go and browsers do; curl's own expected
// exit code is curl's answer, not necessarily ours. docs/conformance.md gives the reasons at
// more length. Every request is a GET (HEAD where curl's test sends one) with the session's
// defaults: redirects followed (curl's tests pass -L or not; we always follow, up to 16),
// Accept-Encoding: gzip, deflate, br, zstd, no cookie store, a 64 KiB head limit, and a timeoutInterval
// of 1.5 s for replies that never end.
//
// By group:
// - Line ends: a bare LF ends a status, field, chunk-size or trailer line (RFC 9112 §2.2; curl,
//   Go, Python, browsers); 110 replies were refused for them before. A bare CR stays
//   malformedResponse (2105, 415).
// - Redirects: a URL already visited is requested again (3032 loops three times to the same
//   URL, 193/1089/1090 come back to it): only the limit ends a loop (25, 274, 473 ->
//   tooManyRedirects). An empty Location (54) makes the 302 the response. Locations with spaces,
//   UTF-8, ../ past the root, odd queries and fragments are resolved and followed. Schemes other
//   than http(s) fail (1159, 1563: unsupportedURL); 1270's https://moo.moo.moo fails to resolve
//   (dnsFailure, answered by hostAddressOverrides, never by DNS). 1029/1261 redirect to a part
//   the corpus lacks: the server closes without a byte (connectionClosed).
//   187, 1641-1643: a redirect whose body ends only at close, on a server that keeps the
//   connection open: the client closes that connection and follows at once (issue #12 item 3).
// - Content-Encoding: gzip, x-gzip, deflate (zlib or raw), br and zstd are decoded, several
//   members of gzip too (2305), and a list is undone last-applied first (230: "deflate,
//   identity, gzip", RFC 9110 §8.4). br (314, 316) and zstd (396, 397) decode to curl's content;
//   1618, curl's "brotli bomb", is 100 KiB from 14 bytes: under the first MiB, where no ratio
//   is checked, so it is delivered. Corrupt data fails (221, 223, and 315, whose br body lacks
//   its first byte: contentDecodingFailed, before its short body would have timed out). A
//   coding we cannot undo anywhere in the list ("none" 328) leaves the body as received, the
//   field saying what it is (curl without --compressed, Go, URLSession).
// - Transfer-Encoding: only a single "chunked" is a framing we accept (we never send TE, RFC
//   9112 §7.4); "chunked, chunked" (1482, 1483), identity (1493), chunked not last (1722,
//   1723) and Content-Length together with Transfer-Encoding (365, 1494-1496, 2119; RFC 9112
//   §6.3 "ought to be handled as an error", a smuggling sign on a pooled client) are
//   malformedResponse, where curl is lenient. A 204 has no body whatever it says (334).
// - Content-Length: the same value repeated, in fields or a list, is one value (767, 770:
//   "6,06,6" and "6,    6"; RFC 9110 §8.6); differing values (771), signs, letters, rubbish
//   (178, 394, 768) and values past 2^63-1 (393, 395: curl reads those to EOF; a length we cannot
//   represent frames nothing) are malformedResponse. A body cut short by close is
//   truncatedResponse (376, 379).
// - Status lines: HTTP/0.9 and garbage (66, 1144, 1164, 1172, 1174, 1266, 1267, 1480), other
//   versions (129), codes not of three digits (1430-1433), NUL (262), a field line without a
//   colon (398) and whitespace before the first field (1473, RFC 9112 §2.2 allows refusing) are
//   malformedResponse; 999 is passed on (1429). A head cut by close is truncatedResponse (1665).
// - Heads over 64 KiB: responseHeadTooLarge (497, 498, 747, 1154); 18 KiB is fine (1205).
// - Interim responses (102, 104) before the final one are skipped (1033, 1115).
// - Bodies ended by close: complete when the server closes; 24's server never closes and 29's
//   waits 10 s first (curl's test times out too): timeout. Empty replies: connectionClosed.
// - HEAD: no body, whatever follows (499, 1484).
// - Two different Location fields on a 200 (772) are delivered: Location means nothing there
//   (curl refuses them).

/// The outcome decided for one reply of the curl-replies corpus.
enum CurlReplyExpectation: CustomStringConvertible {
    /// The task succeeds with this status and a body of this many bytes.
    case response(status: Int, bytes: Int)
    /// The task fails with this code.
    case failure(NetworkingError.Code)
    /// The reply stalls before its end: the task fails when no byte came for its timeoutInterval.
    case timedOut

    /// The code a task's own timeoutInterval ends it with.
    static let timeoutCode = NetworkingError.Code.requestTimeout

    func matches(_ observed: EndToEnd.CurlReplies.Observed) -> Bool {
        switch self {
        case .response(let status, let bytes):
            return observed.error == nil && observed.status == status && observed.body.count == bytes
        case .failure(let code):
            return observed.error?.code == code
        case .timedOut:
            return observed.error?.code == Self.timeoutCode
        }
    }

    var description: String {
        switch self {
        case .response(let status, let bytes): return "response(status: \(status), bytes: \(bytes))"
        case .failure(let code): return "failure(.\(code))"
        case .timedOut: return "timedOut"
        }
    }
}

enum CurlReplyExpectations {
    /// curl test number -> outcome. The comment is curl's title for the test.
    static let table: [Int: CurlReplyExpectation] = [
        // MARK: Redirects
        11: .response(status: 200, bytes: 52),  // simple HTTP Location: following
        25: .failure(.tooManyRedirects),  // looping HTTP Location: following with --max-redirs
        28: .response(status: 200, bytes: 52),  // HTTP Location: following with extra spaces in header
        40: .response(status: 200, bytes: 5),  // HTTP redirect with whitespace after ? (and conversion)
        42: .response(status: 200, bytes: 5),  // HTTP redirect with whitespace in path (and conversion)
        45: .response(status: 200, bytes: 52),  // simple HTTP Location: without protocol in initial URL
        49: .response(status: 200, bytes: 5),  // HTTP follow redirect with ../
        50: .response(status: 200, bytes: 5),  // HTTP follow redirect with ../../
        51: .response(status: 200, bytes: 5),  // HTTP follow redirect with excessive ../
        52: .response(status: 200, bytes: 5),  // HTTP follow redirect with ./-prefix
        54: .response(status: 302, bytes: 33),  // HTTP with blank Location:
        55: .response(status: 200, bytes: 5),  // HTTP follow redirect with single slash in path
        187: .response(status: 200, bytes: 52),  // HTTP redirect with bad hostname separation and slash in parameters
        193: .response(status: 200, bytes: 8),  // HTTP GET -w num_connects with redirected fetch (2 connects)
        274: .failure(.tooManyRedirects),  // HTTP Location: following with --max-redirs 0
        276: .response(status: 200, bytes: 52),  // HTTP Location: following with multiple question marks in URLs
        391: .response(status: 200, bytes: 6),  // --path-as-is with redirect, keeping dotdots
        473: .failure(.tooManyRedirects),  // Check if --etag-save saved correct etag to a file on 301
        477: .response(status: 200, bytes: 4),  // HTTP GET with maximum filesize with a redirect sending data
        498: .failure(.responseHeadTooLarge),  // Reject too large HTTP response headers on endless redirects
        764: .response(status: 200, bytes: 6),  // -w with multiple header output
        765: .response(status: 200, bytes: 6),  // -w with multiple header output using } in separator
        1029: .failure(.connectionClosed),  // HTTP Location: and 'redirect_url' check
        1031: .response(status: 200, bytes: 52),  // HTTP Location: following to a query string
        1067: .response(status: 200, bytes: 52),  // HTTP Location: following with auto-referer
        1089: .response(status: 200, bytes: 15),  // HTTP GET --write-out with redirected fetch
        1090: .response(status: 200, bytes: 15),  // HTTP GET --write-out with redirected fetch and chunked reply
        1138: .response(status: 200, bytes: 5),  // HTTP redirect with UTF-8 characters
        1159: .failure(.unsupportedURL),  // HTTP Location: and 'redirect_url' with non-supported scheme
        1261: .failure(.connectionClosed),  // 'redirect_url' with --location and --max-redirs
        1270: .failure(.dnsFailure),  // Basic 'redirect_url'
        1413: .response(status: 200, bytes: 5),  // HTTP redirect with fragment in new URL
        1487: .response(status: 301, bytes: 6),  // HTTP GET with -J and Content-Disposition on 301
        1563: .failure(.unsupportedURL),  // Make sure redirects to CURLPROTO_GOPHER are forbidden by default
        1641: .response(status: 200, bytes: 6),  // HTTP GET -J, a redirect and Content-Disposition in the second response
        1642: .response(status: 200, bytes: 6),  // HTTP GET -J, redirect, no Content-Disposition use the Location: name
        1643: .response(status: 200, bytes: 6),  // HTTP -J, two redirects, use the last Location: name
        3015: .response(status: 200, bytes: 15),  // HTTP GET -w num_headers with redirected fetch (2 connects)
        3032: .response(status: 200, bytes: 30),  // HTTP redirect loop 3x swsbounce test
        // MARK: Content-Encoding
        220: .response(status: 200, bytes: 24),  // HTTP GET gzip compressed content
        221: .failure(.contentDecodingFailed),  // HTTP GET gzip compressed content with broken gzip header
        222: .response(status: 200, bytes: 5041),  // HTTP GET deflate compressed content
        223: .failure(.contentDecodingFailed),  // HTTP GET deflate compressed content with broken deflate header
        224: .response(status: 200, bytes: 45),  // HTTP GET gzip compressed content with huge comment and extra field
        230: .response(status: 200, bytes: 5041),  // HTTP GET multiply compressed content
        232: .response(status: 200, bytes: 5041),  // HTTP GET deflate raw-compressed content
        314: .response(status: 200, bytes: 5041),  // HTTP GET brotli compressed content
        315: .failure(.contentDecodingFailed),  // HTTP GET brotli compressed content with broken header
        316: .response(status: 200, bytes: 16512),  // HTTP brotli compressed content of size more than CURL_MAX_WRITE_SIZE
        328: .response(status: 200, bytes: 38),  // HTTP with "Content-Encoding: none
        396: .response(status: 200, bytes: 5041),  // HTTP GET zstd compressed content
        397: .response(status: 200, bytes: 16512),  // HTTP GET zstd compressed content of size more than CURL_MAX_WRITE_SIZE
        1618: .response(status: 200, bytes: 102400),  // HTTP GET brotli compression bomb
        2305: .response(status: 200, bytes: 14),  // HTTP GET gzip compressed content with two concatenated gzip members
        // MARK: Transfer-Encoding and chunked framing
        34: .response(status: 200, bytes: 145),  // HTTP GET with chunked Transfer-Encoding
        36: .failure(.malformedResponse),  // HTTP GET with bad chunked Transfer-Encoding
        207: .failure(.truncatedResponse),  // HTTP GET with chunked Transfer-Encoding closed prematurely
        266: .response(status: 200, bytes: 145),  // HTTP GET with chunked Transfer-Encoding and chunked trailer
        334: .response(status: 204, bytes: 0),  // HTTP 204 No content with chunked header
        339: .response(status: 200, bytes: 145),  // Check if --etag-save saved correct etag to a file
        347: .response(status: 200, bytes: 145),  // --etag-save with blank incoming header
        365: .failure(.malformedResponse),  // HTTP/1.1 with chunked AND Content-Length headers
        373: .response(status: 200, bytes: 1024),  // Chunked transfer encoding - Multiple valid chunks with binary zeros.
        457: .response(status: 200, bytes: 145),  // chunked Transfer-Encoding with --max-filesize
        693: .response(status: 200, bytes: 145),  // --etag-save with --create-dirs
        1116: .response(status: 200, bytes: 145),  // HTTP GET with chunked trailer without Trailer:
        1416: .failure(.malformedResponse),  // HTTP GET with chunked Transfer-Encoding overflowed chunked size
        1417: .response(status: 200, bytes: 145),  // HTTP GET with chunked encoding and chunked trailer without CRs
        1482: .failure(.malformedResponse),  // HTTP GET with double chunked in TE header
        1483: .failure(.malformedResponse),  // HTTP GET with two Transfer-Encoding: chunked headers
        1493: .failure(.malformedResponse),  // HTTP GET with identity + chunked in TE header
        1494: .failure(.malformedResponse),  // HTTP GET with identity twice in TE header
        1495: .failure(.malformedResponse),  // HTTP GET with chunked + identity in TE header
        1496: .failure(.malformedResponse),  // HTTP GET with gzip + chunked transfer-encoding without being asked
        1722: .failure(.malformedResponse),  // HTTP with chunked Transfer-Encoding not listed last
        1723: .failure(.malformedResponse),  // HTTP with two chunked Transfer-Encoding not listed last
        2106: .failure(.malformedResponse),  // HTTP chunked response with a nul byte in the trailer
        2119: .failure(.malformedResponse),  // Reject unsolicited Transfer-Encoding token with an identity prefix
        // MARK: Content-Length values
        178: .failure(.malformedResponse),  // HTTP response with negative Content-Length
        376: .failure(.truncatedResponse),  // --remove-on-error
        379: .failure(.truncatedResponse),  // --remove-on-error with --no-clobber and an added number
        393: .failure(.malformedResponse),  // HTTP max-filesize and out-of-range Content-Length
        394: .failure(.malformedResponse),  // HTTP with rubbish in Content-Length
        395: .failure(.malformedResponse),  // HTTP and out-of-range Content-Length
        415: .failure(.malformedResponse),  // HTTP response with control code then negative Content-Length
        767: .response(status: 200, bytes: 6),  // HTTP with two Content-Length response header fields same size
        768: .failure(.malformedResponse),  // HTTP with letters after the number in Content-Length
        769: .response(status: 200, bytes: 6),  // HTTP with space after Content-Length number
        770: .response(status: 200, bytes: 6),  // HTTP with Content-Length headers using comma separated list
        771: .failure(.malformedResponse),  // HTTP with two Content-Length headers using different sizes
        // MARK: Status lines and malformed heads
        66: .failure(.malformedResponse),  // HTTP GET without headers in the response
        129: .failure(.malformedResponse),  // HTTP/1.2 is rejected
        262: .failure(.malformedResponse),  // Reject HTTP response with binary zero in header
        398: .failure(.malformedResponse),  // Reject HTTP/1.1 response with colon-less header
        1144: .failure(.malformedResponse),  // HTTP HEAD, receive no headers only body
        1164: .failure(.malformedResponse),  // HTTP/0.9 GET and all zeroes
        1172: .failure(.malformedResponse),  // HTTP/0.9 GET response denied
        1174: .failure(.malformedResponse),  // HTTP/0.9 GET response denied by default
        1266: .failure(.malformedResponse),  // HTTP GET with a single-byte HTTP/0.9 response
        1267: .failure(.malformedResponse),  // HTTP GET with an invalid HTTP/1 response line start
        1429: .response(status: 999, bytes: 6),  // HTTP GET with 999 response code
        1430: .failure(.malformedResponse),  // HTTP GET with negative response code
        1431: .failure(.malformedResponse),  // HTTP GET with single-digit response code
        1432: .failure(.malformedResponse),  // HTTP GET with 100-digit response code and survive
        1433: .failure(.malformedResponse),  // HTTP GET with 100-digit subversion number in response
        1466: .response(status: 405, bytes: 6),  // HTTP GET with 3-digit response and only digits in reason
        1473: .failure(.malformedResponse),  // first HTTP header starts with white space
        1480: .failure(.malformedResponse),  // HTTP Continue response without final response
        1665: .failure(.truncatedResponse),  // HTTP with only headers and no final CRLF separator
        2105: .failure(.malformedResponse),  // HTTP with spurious CR in received header
        // MARK: Heads past the 64 KiB limit
        497: .failure(.responseHeadTooLarge),  // Reject too large accumulated HTTP response headers
        747: .failure(.responseHeadTooLarge),  // Reject too many HTTP response headers
        1154: .failure(.responseHeadTooLarge),  // HTTP GET with 100K (too long) response header
        1205: .response(status: 200, bytes: 6),  // HTTP GET with 18K HTTP header
        // MARK: Interim responses
        1033: .response(status: 200, bytes: 6),  // HTTP GET with 102 response!
        1115: .response(status: 200, bytes: 0),  // HTTP GET with unexpected 1xx response
        // MARK: Bodies that end when the connection closes; empty replies
        24: .timedOut,  // HTTP GET fail silently on HTTP error return
        26: .response(status: 200, bytes: 8),  // specify more -o than URLs
        29: .timedOut,  // HTTP with 2 secs timeout
        30: .failure(.connectionClosed),  // HTTP with no data in server reply
        37: .failure(.connectionClosed),  // HTTP GET with nothing returned from server
        57: .response(status: 200, bytes: 0),  // HTTP content-type with spaces in
        59: .response(status: 200, bytes: 4),  // HTTP URL with slash but with "parameter"
        151: .response(status: 401, bytes: 193),  // HTTP GET with an error code that might trick authentication
        152: .response(status: 401, bytes: 193),  // HTTP GET with an error code that might trick authentication and --fail
        282: .response(status: 200, bytes: 0),  // HTTP GET with no response body or headers
        349: .response(status: 404, bytes: 67),  // HTTP GET --fail-with-body on HTTP error return
        419: .failure(.connectionClosed),  // --dump-header to file that cannot be created
        1292: .response(status: 200, bytes: 0),  // Replaced internal headers with a blank one
        // MARK: HEAD
        14: .response(status: 200, bytes: 0),  // HTTP HEAD with Connection: close
        499: .response(status: 200, bytes: 0),  // HTTP HEAD to server still sending a body
        1484: .response(status: 200, bytes: 0),  // HTTP HEAD with response body to ignore
        // MARK: Plain responses: Content-Length or EOF framing, CRLF or bare-LF lines, odd but valid fields
        1: .response(status: 200, bytes: 6),  // HTTP GET
        15: .response(status: 200, bytes: 26),  // --write-out test
        192: .response(status: 200, bytes: 8),  // HTTP GET -w num_connects with one simple connect
        260: .response(status: 200, bytes: 6),  // HTTP GET URL without slash but with question mark
        292: .response(status: 200, bytes: 6),  // HTTP GET with maximum filesize not exceeded
        293: .response(status: 200, bytes: 6),  // HTTP GET with maximum filesize exceeded
        360: .response(status: 200, bytes: 6),  // Error on both --fail-with-body and --fail
        371: .response(status: 200, bytes: 6),  // using more -o than URLs in the command line
        374: .response(status: 200, bytes: 237),  // Valid gif with two frames. No new line in data section.
        421: .response(status: 200, bytes: 6),  // HTTP GET multiple headers and %{header_json}
        461: .response(status: 200, bytes: 6),  // disable Host: when specified as lower case
        469: .response(status: 200, bytes: 6),  // warn about Unicode quote character
        690: .response(status: 200, bytes: 6),  // -O with URL without path using trailing slash
        691: .response(status: 200, bytes: 6),  // -O with URL with path using trailing slash
        692: .response(status: 200, bytes: 6),  // -JO with URL without path using trailing slash
        762: .response(status: 200, bytes: 6),  // HTTP GET with --remote-time with file date from 1940
        772: .response(status: 200, bytes: 0),  // HTTP with two Location: headers triggers error
        773: .response(status: 200, bytes: 0),  // HTTP with two identical Location: headers triggers no error
        970: .response(status: 200, bytes: 445),  // HTTP GET with JSON output
        972: .response(status: 200, bytes: 445),  // Verify JSON output
        978: .response(status: 200, bytes: 6),  // verify that --stderr works for -w's stderr as well
        990: .response(status: 200, bytes: 6),  // use -w %output{}
        991: .response(status: 200, bytes: 6),  // use -w %output{} append
        1109: .response(status: 200, bytes: 6),  // HTTP GET with URL that contains fragment after the path
        1110: .response(status: 200, bytes: 6),  // HTTP GET with URL that contains a fragment after the query part
        1111: .response(status: 200, bytes: 6),  // HTTP GET with URL whose fragment contains a # (which is illegal)
        1118: .response(status: 200, bytes: 6),  // URL without slash and @-letter in query
        1121: .response(status: 200, bytes: 6),  // HTTP multiple provided Host: headers
        1147: .response(status: 200, bytes: 6),  // Get -H headers from a file
        1148: .response(status: 200, bytes: 60),  // progress-bar
        1157: .response(status: 200, bytes: 6),  // Get -H headers from empty file
        1176: .response(status: 200, bytes: 6),  // --output using #0
        1183: .response(status: 200, bytes: 12),  // 1183 used instead of actual test number
        1210: .response(status: 200, bytes: 6),  // HTTP GET with -J without Content-Disposition
        1223: .response(status: 200, bytes: 4),  // HTTP GET -w remote_ip and -w remote_port
        1271: .response(status: 200, bytes: 4),  // --write-out from file with empty file
        1274: .response(status: 200, bytes: 6),  // HTTP header line folding
        1278: .response(status: 200, bytes: 6),  // verify extra --no-remote-name
        1294: .response(status: 200, bytes: 6),  // HTTP GET with split initial request send
        1310: .response(status: 200, bytes: 6),  // HTTP GET with -J + --show-headers
        1311: .response(status: 200, bytes: 6),  // HTTP GET with -J and Content-Disposition
        1312: .response(status: 200, bytes: 6),  // HTTP GET with -J, Content-Disposition and ; in filename
        1313: .response(status: 200, bytes: 6),  // HTTP GET with -J, Content-Disposition, uneven quotes
        1334: .response(status: 200, bytes: 6),  // HTTP GET with -O without Content-Disposition, -D file
        1335: .response(status: 200, bytes: 6),  // HTTP GET with -O without Content-Disposition, -D stdout
        1336: .response(status: 200, bytes: 6),  // HTTP GET with -O and Content-Disposition, -D file
        1337: .response(status: 200, bytes: 6),  // HTTP GET with -O and Content-Disposition, -D stdout
        1338: .response(status: 200, bytes: 6),  // HTTP GET with -O -J without Content-Disposition, -D file
        1339: .response(status: 200, bytes: 6),  // HTTP GET with -O -J without Content-Disposition, -D stdout
        1340: .response(status: 200, bytes: 6),  // HTTP GET with -O -J and Content-Disposition, -D file
        1341: .response(status: 200, bytes: 6),  // HTTP GET with -O -J and Content-Disposition, -D stdout
        1342: .response(status: 200, bytes: 6),  // HTTP GET with -O -i without Content-Disposition, -D file
        1343: .response(status: 200, bytes: 6),  // HTTP GET with -O -i without Content-Disposition, -D stdout
        1344: .response(status: 200, bytes: 6),  // HTTP GET with -O -i and Content-Disposition, -D file
        1345: .response(status: 200, bytes: 6),  // HTTP GET with -O -i and Content-Disposition, -D stdout
        1346: .response(status: 200, bytes: 6),  // HTTP GET with -O -i without Content-Disposition, without -D
        1347: .response(status: 200, bytes: 6),  // HTTP GET with -O -i and Content-Disposition, without -D
        1364: .response(status: 200, bytes: 6),  // HTTP GET -o fname without Content-Disposition, -D file
        1365: .response(status: 200, bytes: 6),  // HTTP GET -o fname without Content-Disposition, -D stdout
        1366: .response(status: 200, bytes: 6),  // HTTP GET -o fname and Content-Disposition, -D file
        1367: .response(status: 200, bytes: 6),  // HTTP GET -o fname and Content-Disposition, -D stdout
        1368: .response(status: 200, bytes: 6),  // HTTP GET -o fname -J without Content-Disposition, -D file
        1369: .response(status: 200, bytes: 6),  // HTTP GET -o fname -J without Content-Disposition, -D stdout
        1370: .response(status: 200, bytes: 6),  // HTTP GET -o fname -J and Content-Disposition, -D file
        1371: .response(status: 200, bytes: 6),  // HTTP GET -o fname -J and Content-Disposition, -D stdout
        1372: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i without Content-Disposition, -D file
        1373: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i without Content-Disposition, -D stdout
        1374: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i and Content-Disposition, -D file
        1375: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i and Content-Disposition, -D stdout
        1376: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i without Content-Disposition, without -D
        1377: .response(status: 200, bytes: 6),  // HTTP GET -o fname -i and Content-Disposition, without -D
        1425: .response(status: 200, bytes: 5),  // Refuse binary output to terminal
        1426: .response(status: 200, bytes: 5),  // Okay binary output to terminal
        1438: .response(status: 200, bytes: 9),  // Check if %{scheme} returns HTTP
        1439: .response(status: 200, bytes: 9),  // Check if %{http_version} returns 1.1
        1443: .response(status: 200, bytes: 6),  // HTTP GET with -O and --remote-time
        1457: .response(status: 200, bytes: 9),  // Check if %{stderr} and %{stdout} switch between stdout and stderr.
        1460: .response(status: 200, bytes: 4),  // HTTP GET with -Ji and Content-Disposition with existing file
        1489: .response(status: 200, bytes: 6),  // -D sent to stderr
        1492: .response(status: 200, bytes: 6),  // HTTP GET with -J + --show-headers but no Content-Disposition:
        1584: .response(status: 200, bytes: 6),  // HTTP GET with -J and Content-Disposition including path
        1585: .response(status: 200, bytes: 6),  // HTTP GET with -J and Content-Disposition including DOS path
        1619: .response(status: 200, bytes: 4),  // --etag-save to stdout
        1639: .response(status: 200, bytes: 6),  // -O with URL without path using many trailing slashes
        1644: .response(status: 200, bytes: 6),  // -O with URL with path but using many trailing slashes
        1670: .response(status: 200, bytes: 6),  // -w individual header output
        1671: .response(status: 200, bytes: 6),  // -w header JSON output
        1680: .response(status: 200, bytes: 4),  // HTTP GET with explicit clobber
        1681: .response(status: 200, bytes: 4),  // HTTP GET without clobber
        1682: .response(status: 200, bytes: 4),  // HTTP GET without clobber and --output-dir
        1683: .response(status: 200, bytes: 4),  // HTTP GET without clobber when 100 files already exist
        1721: .response(status: 200, bytes: 6),  // Keep question mark for empty query
        1981: .response(status: 200, bytes: 6),  // %time output with --write-out
        3008: .response(status: 200, bytes: 6),  // --output-dir
        3009: .response(status: 200, bytes: 6),  // --output-dir a non-existing directory
        3011: .response(status: 200, bytes: 6),  // --output-dir with --create-dirs
        3012: .response(status: 200, bytes: 6),  // --output-dir with -J and -R
        3014: .response(status: 200, bytes: 9),  // Check if %{num_headers} returns correct number of headers
        3031: .response(status: 200, bytes: 6),  // --dump-header with --create-dirs
    ]
}
