import CLLHTTP

/// Reads the requests of one connection with llhttp (request mode, strict build) and writes the
/// answer to each into the loop's `OutputBuffer` as soon as the request is complete.
///
/// llhttp does the framing: pipelined requests in one read, requests split across reads at any
/// byte, Content-Length and chunked bodies (no body callback is set, so body bytes are skipped
/// without being copied), HTTP/1.0 and `Connection: close` (its keep-alive verdict). Only the
/// request target is kept, in storage reused from one request to the next; fields are looked at
/// only for `Expect: 100-continue` and counted against the head limit.
///
/// Loop-confined and not re-entrant; `ServerConnection` owns it.
final class RequestParser {
    /// What the connection must do after a `feed`.
    enum Outcome {
        /// Keep reading: the connection stays open.
        case keepReading
        /// The last response is written (a request that closes, or a refusal): close once it is
        /// sent, and ignore anything the client sends after it.
        case close
    }

    /// llhttp's state, at a fixed address so the callbacks find `self` through `data`.
    let parser: UnsafeMutablePointer<llhttp_t>
    /// Where the responses go; the loop's shared buffer.
    let output: OutputBuffer

    // Per-request state, reset by `onMessageBegin`. Unchecked exclusivity: only the loop thread
    // touches it, and llhttp never re-enters a callback.
    /// The request target, as its pieces arrive.
    @exclusivity(unchecked) var target: OutputBuffer
    /// Raw bytes of the head so far (spans plus their line endings), for the head limit.
    @exclusivity(unchecked) var headBytes = 0
    /// Matches the current field name against "expect", and its value against "100-continue".
    @exclusivity(unchecked) var expectName = LiteralMatcher()
    @exclusivity(unchecked) var expectValue = LiteralMatcher()
    /// The current field is Expect.
    @exclusivity(unchecked) var fieldIsExpect = false
    /// The request carried `Expect: 100-continue`.
    @exclusivity(unchecked) var expectsContinue = false
    /// The request was HEAD (known at headers-complete).
    @exclusivity(unchecked) var isHEAD = false
    /// How the response must treat the connection (known at headers-complete).
    @exclusivity(unchecked) var persistence = Response.Persistence.keepAlive
    /// Set by a callback that refused the head for its size.
    @exclusivity(unchecked) var headTooLarge = false

    /// Creates a parser whose answers go to `output`.
    init(output: OutputBuffer) {
        self.output = output
        target = OutputBuffer(capacity: 64)
        parser = .allocate(capacity: 1)
        llhttp_init(parser, HTTP_REQUEST, RequestParser.settings)
        // Unretained: the parser is owned by `self`, so `self` outlives every callback.
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        parser.deallocate()
    }

    /// Parses `bytes`, appending the answer to every request they complete. After `.close`, do
    /// not feed again.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .keepReading }
        let result = llhttp_execute(parser, base.assumingMemoryBound(to: CChar.self), bytes.count)
        switch result {
        case HPE_OK:
            return .keepReading
        case HPE_PAUSED:
            // Only `onMessageComplete` pauses, after the answer to a request that closes.
            return .close
        default:
            Response.writeRefusal(status: headTooLarge ? 431 : 400, into: output)
            return .close
        }
    }
}

/// Matches bytes arriving in pieces against a lowercase ASCII literal, case-insensitively, with
/// trailing spaces and tabs allowed (a field value's trailing whitespace is not part of it).
struct LiteralMatcher {
    private var matched = 0
    private var failed = false

    /// Feeds the next piece.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) {
        guard !failed else { return }
        for byte in bytes {
            if matched < literal.utf8CodeUnitCount {
                let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                if folded != literal.utf8Start[matched] { failed = true; return }
                matched += 1
            } else if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
                failed = true
                return
            }
        }
    }

    /// Whether everything fed so far is the literal.
    func matches(_ literal: StaticString) -> Bool {
        !failed && matched == literal.utf8CodeUnitCount
    }

    /// Starts over for the next name or value.
    mutating func reset() {
        matched = 0
        failed = false
    }
}
