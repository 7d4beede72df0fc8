import Foundation
import Testing
@testable import UVHTTP1

// Differential check of RequestParser against h11 as a server (h11_outcome.py's request mode),
// on the request inputs of Tests/UVHTTP1Tests/Differential/requests: the same verdict, and when
// both accept, the same requests (method, target, version, fields in h11's normal form, body,
// trailers) and the same bytes left unread. RequestParser runs with its strict defaults, in one
// feed and byte by byte. Every disagreement is listed with the side that accepts and the RFC
// reason (docs/fuzzing.md has the same table); a listed input that now agrees fails too.

@Suite("Request parser vs h11 (differential)", .tags(.childProcess))
struct RequestParserH11DifferentialTests {
    /// Inputs RequestParser (strict defaults) and h11 read differently, keyed by file name.
    static let knownDisagreements: [String: KnownH11Disagreement] = [
        "bare-lf-lines": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §2.2: a recipient MAY take a bare LF as a line end; the strict default refuses it (allowsBareLF)"),
        "field-obs-fold": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §5.2: a server MUST either reject obs-fold with 400 or replace it with SP; the strict default rejects (allowsObsFold)"),
        "smuggle-double-cl-equal": KnownH11Disagreement(accepts: .h11, reason: "RFC 9110 §8.6: a recipient MAY take repeated equal Content-Length values as one; the strict default refuses them (allowsRepeatedContentLength)"),
        "smuggle-cl-te": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1: Content-Length with Transfer-Encoding is the shape of request smuggling; a server MAY reject it and ours always does (h11 lets Transfer-Encoding win)"),
        "smuggle-te-cl": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1, as smuggle-cl-te"),
        "smuggle-te-http10": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1: a server MUST treat Transfer-Encoding in an HTTP/1.0 request as faulty framing and close the connection; ours refuses the request"),
        "version-2-0": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §2.3: HTTP/2.0 in an HTTP/1.1 request line is no HTTP/1.x version; h11 takes any digit.digit"),
        "method-custom-token": KnownH11Disagreement(accepts: .h11, reason: "RFC 9110 §9.1: a method is any token, and a server answers one it does not know with 501; llhttp 8.1 refuses every method it does not know, so ours does too (a known limit, documented)"),
        "method-lowercase": KnownH11Disagreement(accepts: .h11, reason: "RFC 9110 §9.1 (methods are case-sensitive tokens: \"get\" is a valid, unknown one), and llhttp's limit as method-custom-token"),
        "absolute-form-no-authority": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §3.2.2: absolute-form is RFC 3986's absolute-URI, which needs no \"//\" (urn:example:a is one); llhttp 8.1 reads absolute form only as letters, \"://\" and an authority, so ours refuses it (a known limit, documented; found by the http1-roundtrip harness)"),
        "leading-crlf": KnownH11Disagreement(accepts: .ours, reason: "RFC 9112 §2.2: a server SHOULD ignore at least one empty line received before the request-line; ours does, h11 does not"),
        "no-host-http11": KnownH11Disagreement(accepts: .ours, reason: "RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host; that is the server's decision on a well-framed request, which the parser reports whole (h11 refuses it while parsing)"),
        "two-hosts": KnownH11Disagreement(accepts: .ours, reason: "RFC 9112 §3.2: a server MUST answer 400 to a request with more than one Host field; as no-host-http11, the parser reports both fields and the server decides"),
    ]

    @Test(.enabled(if: H11Differential.isH11Importable, "h11 is not importable by python3: run scripts/install-deps.sh (make test does)"))
    func requestsReadAsH11ReadsThemOrListed() throws {
        let cases = H11Differential.directory.appendingPathComponent("requests")
        let h11 = try #require(try H11Differential.run(["request", cases.path]), "h11 went missing")
        let names = try H11Differential.inputs(in: cases)
        #expect(names.count >= 40, "\(names.count) request inputs")
        var found: [String] = []
        for name in names {
            let stream = try [UInt8](Data(contentsOf: cases.appendingPathComponent(name)))
            let key = h11.keys.first { $0 == name || $0.hasSuffix("/\(name)") }
            guard let key, let theirs = h11[key] else {
                Issue.record("\(name): h11_outcome.py printed nothing for it")
                continue
            }
            let ours = H11Outcome.ourRequests(stream, bounds: [stream.count])
            let bytewise = H11Outcome.ourRequests(stream, bounds: Array(stride(from: 1, through: stream.count, by: 1)))
            #expect(ours.withoutErrorTexts == bytewise.withoutErrorTexts, "\(name): ours reads it differently byte by byte: \(ours.summary) vs \(bytewise.summary)")
            #expect(theirs.splitInvariant, "\(name): h11 reads it differently byte by byte")
            let difference = ResponseParserH11DifferentialTests.difference(ours: ours, h11: theirs.result)
            switch (difference, Self.knownDisagreements[name]) {
            case (nil, nil):
                break
            case (nil, let known?):
                Issue.record("\(name): listed (\(known.accepts.rawValue) accepts) but ours and h11 now agree: remove it from the table")
            case (let difference?, nil):
                found.append(name)
                Issue.record("""
                    \(name): ours and h11 disagree (\(difference.detail)) and the table does not list it
                      ours: \(ours.summary)
                      h11:  \(theirs.result.summary)
                    """)
            case (let difference?, let known?):
                found.append(name)
                #expect(difference.accepts == known.accepts, "\(name): listed as \(known.accepts.rawValue) accepting, but \(difference.accepts.rawValue) does (\(difference.detail))")
            }
        }
        #expect(found.count == Self.knownDisagreements.count)
    }
}
