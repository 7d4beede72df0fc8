import Foundation
import Testing
@testable import UVHTTP1

// Differential check of our response decoder against h11 (PyPI), a parser no one here wrote: both
// read the same inputs (the response fuzz seeds and Tests/UVHTTP1Tests/Differential/responses),
// h11 through Tests/UVHTTP1Tests/Differential/h11_outcome.py in a child process, and must agree
// input by input: the same verdict (accepted or rejected), and, when both accept, the same
// messages (status, reason, version, fields, body, trailers, 1xx heads) and the same bytes left
// unread. Both run in one feed and byte by byte; each must read the same either way.
// A disagreement passes only when `knownDisagreements` lists the input, with the side that
// accepts and the RFC reason; docs/fuzzing.md has the same table. A listed input
// that no longer disagrees fails too, so the table stays true.
//
// Requests: RequestParserH11DifferentialTests.

/// Which parser accepts an input that the two read differently.
enum H11Side: String, Sendable {
    /// Ours accepts, h11 rejects.
    case ours
    /// h11 accepts, ours rejects.
    case h11
    /// Both accept, but read different messages.
    case both
}

/// A disagreement the suite allows: who accepts, and why ours is right (or why it does not matter).
struct KnownH11Disagreement: Sendable {
    var accepts: H11Side
    var reason: String
}

@Suite("Response decoder vs h11 (differential)", .tags(.childProcess))
struct ResponseParserH11DifferentialTests {
    /// Every input on which our decoder (the client's leniencies on) and h11 0.16.0 disagree, by
    /// the name the script prints. Keep in step with docs/fuzzing.md.
    static let knownDisagreements: [String: KnownH11Disagreement] = [
        "seeds/cl-and-te": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1: a message with both is a smuggling shape; a client may not reuse the connection, and ours refuses it outright (h11 lets Transfer-Encoding win)"),
        "responses/cl-and-te-chunked": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1, as seeds/cl-and-te"),
        "seeds/te-http10": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §6.1: a Transfer-Encoding in an HTTP/1.0 message means the framing is faulty; ours refuses it"),
        "seeds/version-2": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §2.3/§4: HTTP/2.0 in an HTTP/1.1 status line is no HTTP/1.x version; h11 takes any digit.digit"),
        "responses/status-version-0-9": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §2.3: HTTP/0.9 has no status line; ours reads HTTP/1.x only"),
        "responses/status-version-1-2": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §2.3: a 1.x minor version above 1 may be read as 1.1, but llhttp (strict) refuses it; kept strict"),
        "seeds/http10-keepalive": KnownH11Disagreement(accepts: .both, reason: "RFC 9112 §9.3 and Appendix C.2.2: an HTTP/1.0 response with Connection: keep-alive may keep the connection; ours reads the next response, h11 never keeps HTTP/1.0 alive"),
        "seeds/obs-fold": KnownH11Disagreement(accepts: .both, reason: "RFC 9112 §5.2: each obs-fold becomes one or more SP; ours folds the line end and all whitespace around it into one SP, h11 keeps the whitespace before the fold"),
        "responses/chunked-size-space-before-crlf": KnownH11Disagreement(accepts: .h11, reason: "RFC 9112 §7.1: chunk-size = 1*HEXDIG, then chunk-ext or CRLF; whitespace after the size is not in the grammar (llhttp strict refuses it)"),
        "responses/field-control-char-value": KnownH11Disagreement(accepts: .h11, reason: "RFC 9110 §5.5: a field value is VCHAR, obs-text, SP and HTAB; other controls are invalid (h11 refuses only NUL and whitespace controls)"),
        "responses/field-del-value": KnownH11Disagreement(accepts: .h11, reason: "RFC 9110 §5.5: DEL (0x7F) is neither VCHAR nor obs-text"),
        "seeds/bare-lf-chunked": KnownH11Disagreement(accepts: .ours, reason: "RFC 9112 §2.2: a recipient MAY take a bare LF as a line end, here in the chunked framing; the client does (curl, Go and browsers do), h11 only in the head"),
        "seeds/strict-bare-lf-chunked": KnownH11Disagreement(accepts: .ours, reason: "as seeds/bare-lf-chunked (the suite reads every seed with the client's options; its option bits ask the harness for the strict ones)"),
        "seeds/cl-repeated-same": KnownH11Disagreement(accepts: .ours, reason: "RFC 9110 §8.6: a recipient MAY take a Content-Length list of one repeated value as that value; the client does, h11 refuses a list"),
        "seeds/strict-cl-repeated-same": KnownH11Disagreement(accepts: .ours, reason: "as seeds/cl-repeated-same (read with the client's options here)"),
        "responses/connect-200": KnownH11Disagreement(accepts: .both, reason: "RFC 9110 §9.3.6: a 2xx to CONNECT makes the connection a tunnel; our decoder is never given CONNECT answers (the proxy code reads those), so it reads the bytes as an EOF-framed body"),
    ]

    /// Inputs that h11 and our decoder both accept only thanks to one of the client's leniencies,
    /// which ResponseParser's strict default refuses: under the strict stance each becomes an
    /// "h11 accepts" disagreement, for the reason given. Checked here against the client's
    /// options (both must accept, the input must not be in `knownDisagreements`), and against
    /// ResponseParser's strict default (ours must refuse what h11 accepts).
    static let strictStanceDisagreements: [String: String] = [
        "seeds/bare-lf-end": "RFC 9112 §2.2: a recipient MAY take a bare LF as a line end; strict refuses it",
        "seeds/bare-lf-status": "RFC 9112 §2.2, as seeds/bare-lf-end",
        "responses/field-bare-lf": "RFC 9112 §2.2, as seeds/bare-lf-end",
        "seeds/cl-duplicate": "RFC 9110 §8.6: a recipient MAY take repeated equal Content-Length values as one; strict refuses them",
        "responses/cl-duplicate-equal": "RFC 9110 §8.6, as seeds/cl-duplicate",
        "responses/cl-list-equal": "RFC 9110 §8.6, as seeds/cl-duplicate",
        "responses/field-obs-fold": "RFC 9112 §5.2: obs-fold is deprecated; a user agent replaces it with SP, strict refuses it",
    ]

    @Test(.enabled(if: H11Differential.isH11Importable, "h11 is not importable by python3: run scripts/install-deps.sh (make test does)"))
    func responsesReadAsH11ReadsThemOrListed() throws {
        let seeds = H11Differential.responseSeeds
        let cases = H11Differential.directory.appendingPathComponent("responses")
        let h11 = try #require(try H11Differential.run(["response", "--seeds", seeds.path, cases.path]), "h11 went missing")
        var inputs: [(name: String, stream: [UInt8], methods: [String])] = []
        for name in try H11Differential.inputs(in: seeds) {
            let data = try [UInt8](Data(contentsOf: seeds.appendingPathComponent(name)))
            let flags: UInt8 = data.count >= 4 ? data[0] : 0
            inputs.append(("seeds/\(name)", data.count >= 4 ? Array(data.dropFirst(4)) : [], H11Differential.seedMethods(flags: flags)))
        }
        let methods = try H11Differential.methods(in: cases)
        for name in try H11Differential.inputs(in: cases) {
            let data = try [UInt8](Data(contentsOf: cases.appendingPathComponent(name)))
            inputs.append(("responses/\(name)", data, methods[name] ?? ["GET"]))
        }
        #expect(inputs.count >= 100, "the seeds and our cases: \(inputs.count) inputs")
        #expect(Set(h11.keys) == Set(inputs.map(\.name)), "the script and the suite read different inputs")

        var disagreements: [String] = []
        for input in inputs {
            guard let theirs = h11[input.name] else { continue }
            #expect(input.methods.starts(with: theirs.methods), "\(input.name): methods \(theirs.methods) vs \(input.methods)")
            let ours = H11Outcome.ours(input.stream, methods: input.methods, bounds: [input.stream.count])
            let bytewise = H11Outcome.ours(input.stream, methods: input.methods, bounds: Array(stride(from: 1, through: input.stream.count, by: 1)))
            #expect(ours.withoutErrorTexts == bytewise.withoutErrorTexts,
                    "\(input.name): ours reads it differently byte by byte: \(ours.summary) vs \(bytewise.summary)")
            // h11 must read the input alike in one feed and byte by byte, or the comparison would
            // depend on how it was fed.
            #expect(theirs.splitInvariant, "\(input.name): h11 reads it differently byte by byte")
            let difference = Self.difference(ours: ours, h11: theirs.result)
            let known = Self.knownDisagreements[input.name]
            switch (difference, known) {
            case (nil, nil):
                break
            case (nil, let known?):
                Issue.record("\(input.name): listed as a disagreement (\(known.accepts.rawValue) accepts) but ours and h11 now agree: remove it from the table")
            case (let difference?, nil):
                disagreements.append(input.name)
                Issue.record("""
                    \(input.name): ours and h11 disagree (\(difference.detail)) and the table does not list it
                      ours: \(ours.summary)
                      h11:  \(theirs.result.summary)
                    """)
            case (let difference?, let known?):
                disagreements.append(input.name)
                #expect(difference.accepts == known.accepts,
                        "\(input.name): listed as \(known.accepts.rawValue) accepting, but \(difference.accepts.rawValue) does (\(difference.detail)); ours: \(ours.summary); h11: \(theirs.result.summary)")
            }
        }
        for (name, reason) in Self.strictStanceDisagreements {
            guard let theirs = h11[name], let input = inputs.first(where: { $0.name == name }) else {
                Issue.record("\(name) is listed for the strict stance but is no input")
                continue
            }
            let ours = H11Outcome.ours(input.stream, methods: input.methods, bounds: [input.stream.count])
            #expect(ours.accepts && theirs.result.accepts && Self.knownDisagreements[name] == nil,
                    "\(name) (strict stance: \(reason)): ours \(ours.summary); h11 \(theirs.result.summary)")
            let strict = H11Outcome.ours(input.stream, methods: input.methods, bounds: [input.stream.count], options: ResponseParser.Options())
            #expect(!strict.accepts, "\(name) (strict stance: \(reason)): the strict default accepts it: \(strict.summary)")
        }
        // The strict default only ever refuses more: what it accepts, the client's options read alike.
        for input in inputs {
            let strict = H11Outcome.ours(input.stream, methods: input.methods, bounds: [input.stream.count], options: ResponseParser.Options())
            guard strict.accepts else { continue }
            let client = H11Outcome.ours(input.stream, methods: input.methods, bounds: [input.stream.count])
            #expect(strict.withoutErrorTexts == client.withoutErrorTexts, "\(input.name): strict \(strict.summary) vs client \(client.summary)")
        }
        for name in Self.knownDisagreements.keys where h11[name] == nil {
            Issue.record("\(name) is listed as a disagreement but is no input")
        }
        #expect(disagreements.count == Self.knownDisagreements.count)
    }

    /// How two readings of one input differ.
    struct Difference {
        var accepts: H11Side
        var detail: String
    }

    /// Nil when ours and h11 read the input alike: both reject it, or both accept it with the same
    /// messages and leave the same bytes unread. Messages are compared in h11's normal form.
    static func difference(ours: H11Outcome, h11: H11Outcome) -> Difference? {
        switch (ours.accepts, h11.accepts) {
        case (false, false):
            // Both reject; the messages completed before the bad one must still match.
            let a = ours.messages.filter(\.complete).map(normalised), b = h11.messages.filter(\.complete).map(normalised)
            let shared = min(a.count, b.count)
            return Array(a.prefix(shared)) == Array(b.prefix(shared)) ? nil
                : Difference(accepts: .both, detail: "both reject, but the messages before differ")
        case (true, false):
            return Difference(accepts: .ours, detail: "ours accepts, h11 rejects")
        case (false, true):
            return Difference(accepts: .h11, detail: "h11 accepts, ours rejects")
        case (true, true):
            let a = ours.messages.map(normalised), b = h11.messages.map(normalised)
            if a.count != b.count {
                return Difference(accepts: .both, detail: "\(a.count) message(s) vs \(b.count)")
            }
            for (index, (x, y)) in zip(a, b).enumerated() where x != y {
                return Difference(accepts: .both, detail: "message \(index) differs: ours \(x) vs h11 \(y)")
            }
            if ours.unparsed != h11.unparsed {
                return Difference(accepts: .both, detail: "\(ours.unparsed) byte(s) left unread vs \(h11.unparsed)")
            }
            return nil
        }
    }

    /// A message as h11 hands it over (h11_outcome.py's docstring): Content-Length as one value,
    /// given once; Transfer-Encoding lowercased. The reason phrase becomes the String our decoder
    /// makes of it (UTF-8, an invalid byte as U+FFFD): ours keeps no other form. Applied to both
    /// sides: the fields of h11 are in that form already.
    static func normalised(_ message: H11Outcome.Message) -> H11Outcome.Message {
        var message = message
        message.reason = String(decoding: (message.reason ?? "").latin1Bytes, as: UTF8.self)
        message.fields = h11Fields(message.fields)
        message.interim = message.interim?.map { head in
            var head = head
            head.reason = String(decoding: head.reason.latin1Bytes, as: UTF8.self)
            head.fields = h11Fields(head.fields)
            return head
        }
        return message
    }

    /// Fields in h11's normal form.
    static func h11Fields(_ fields: [[String]]) -> [[String]] {
        var seenContentLength = false
        var result: [[String]] = []
        for field in fields {
            let name = field[0].lowercased()
            if name == "content-length" {
                let values = Set(field[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                if seenContentLength { continue }
                seenContentLength = true
                result.append([field[0], values.count == 1 ? values.first! : field[1]])
            } else if name == "transfer-encoding" {
                result.append([field[0], field[1].lowercased()])
            } else {
                result.append(field)
            }
        }
        return result
    }
}

extension H11Outcome {
    /// The outcome with its error texts left out (they may name the byte a read ended at).
    var withoutErrorTexts: H11Outcome {
        var copy = self
        copy.error = nil
        copy.eofError = nil
        return copy
    }
}
