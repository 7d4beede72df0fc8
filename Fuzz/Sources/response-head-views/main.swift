// Fuzzes the swift-http-types views of received heads (Sources/UVHTTP1/ResponseHead+HTTPTypes.swift):
// `ResponseHead.httpResponse`, `ResponseHead.httpFields` and `ReceivedFields.httpFields`. They
// matter because every caller of the client reads a response through them, and because they are
// not a plain conversion: a head whose bytes repeat an earlier head of its connection apart from
// Date's value shares that head's response, cached per Date value and rebuilt under a lock when
// Date changes. A wrong cache hands one response's fields to another.
//
// Input: the same 4 option bytes as response-parser (only the HEAD bits and the leniency bits are
// read here), then the bytes a server sends: up to 16 keep-alive responses on one parser, as a
// connection reads them.
//
// Two runs over the stream. In the first each head is checked when it arrives and then dropped, so
// the parser may reuse it for the next one (as the client lets it); in the second every head is
// kept and checked after the stream, last first, so the cache is read out of the order it was
// filled. Invariants (a violation traps with a message):
// - A view never drops a field (the parser lets only tokens through as names): as many fields as
//   received, in order, each name spelled as received, each value's bytes as received.
// - The status code and reason phrase are the head's.
// - `httpFields` is `httpResponse.headerFields`, and both equal `headers.httpFields` (built apart,
//   with no cache); asking twice gives the same.
// - Trailers: `httpFields` keeps them all, in order, bytes as received.

import FuzzSupport
import HTTPTypes
@testable import UVHTTP1

@inline(__always)
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                       line: UInt = #line) {
    fuzzCheck(condition(), message(), line: line)
}

/// Checks that `fields` is `received`, field by field and byte by byte.
private func checkSameFields(_ fields: HTTPFields, _ received: ReceivedFields, _ what: String) {
    invariant(fields.count == received.count, "\(what): \(fields.count) fields of \(received.count) received")
    for (index, field) in zip(received.indices, fields) {
        received.withField(at: index) { name, value in
            invariant(field.name.rawName.utf8.elementsEqual(name), "\(what): field \(index)'s name is \(field.name.rawName)")
            field.withUnsafeBytesOfValue { bytes in
                invariant(bytes.elementsEqual(value), "\(what): field \(index)'s value differs from the bytes received")
            }
        }
    }
}

/// Checks every view of `head` against its received bytes.
private func checkViews(_ head: ResponseHead) {
    let response = head.httpResponse
    invariant(response.status.code == head.status, "status \(response.status.code), not \(head.status)")
    invariant(response.status.reasonPhrase == head.reason, "reason \(response.status.reasonPhrase), not \(head.reason)")
    checkSameFields(response.headerFields, head.headers, "httpResponse")
    let uncached = head.headers.httpFields
    invariant(response.headerFields == uncached, "httpResponse's fields differ from the uncached view")
    invariant(head.httpFields == uncached, "httpFields differs from the uncached view")
    invariant(head.httpResponse == response, "httpResponse changed when asked again")
}

/// Records what the parser hands on: checks each head at once, or keeps it for later.
private final class HeadChecker: ResponseParserConsumer {
    let keepsHeads: Bool
    var kept: [ResponseHead] = []

    init(keepsHeads: Bool) { self.keepsHeads = keepsHeads }

    func parserReceivedInterim(_ head: ResponseHead) { take(head) }
    func parserReceivedHead(_ head: ResponseHead) { take(head) }
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {}
    func parserReceivedEnd(trailers: ReceivedFields) {
        checkSameFields(trailers.httpFields, trailers, "trailers")
    }

    private func take(_ head: ResponseHead) {
        if keepsHeads { kept.append(head) } else { checkViews(head) }
    }
}

/// Feeds `stream` to one parser as a connection would, up to 16 keep-alive responses; returns the
/// heads kept (none unless `keepsHeads`).
private func decode(_ stream: UnsafeRawBufferPointer, options: ResponseParser.Options,
                    isHEAD: (Int) -> Bool, keepsHeads: Bool) -> [ResponseHead] {
    let parser = ResponseParser(options: options)
    let checker = HeadChecker(keepsHeads: keepsHeads)
    var responses = 0
    parser.expectResponse(toHEAD: isHEAD(0))
    var start = 0
    do throws(HTTP1ParseError) {
        while start < stream.count {
            start += try parser.feed(UnsafeRawBufferPointer(rebasing: stream[start...]), to: checker)
            guard parser.isComplete else { break }
            responses += 1
            guard parser.keepAlive, responses < 16 else { return checker.kept }
            parser.expectResponse(toHEAD: isHEAD(responses))
        }
        try parser.finish(to: checker)
    } catch {
        // The views of the heads that came before the error are checked all the same.
    }
    return checker.kept
}

runFuzzer { data in
    var input = FuzzInput(data)
    let flags = input.byte()
    _ = input.bytes(3)
    var options = ResponseParser.Options.client()
    if flags & 16 != 0 { options.allowsBareLF = false }
    if flags & 32 != 0 { options.allowsObsFold = false }
    if flags & 64 != 0 { options.allowsRepeatedContentLength = false }
    let firstIsHEAD = flags & 1 != 0, alternates = flags & 2 != 0
    let isHEAD = { (index: Int) in alternates && index % 2 == 1 ? !firstIsHEAD : firstIsHEAD }
    let stream = Array(input.remaining())
    stream.withUnsafeBytes { bytes in
        _ = decode(bytes, options: options, isHEAD: isHEAD, keepsHeads: false)
        for head in decode(bytes, options: options, isHEAD: isHEAD, keepsHeads: true).reversed() {
            checkViews(head)
        }
    }
}
