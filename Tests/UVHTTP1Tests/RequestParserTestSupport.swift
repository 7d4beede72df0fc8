@testable import UVHTTP1

/// What a request parser made of a whole input, fed in the given pieces, then finished.
struct RequestParse {
    /// Events in order, each request's body bytes merged into one `.body` (how a body is cut
    /// into pieces depends on the feeds).
    var events: [RequestParser.Event]
    /// The error thrown by a feed or by `finish`, if any.
    var error: RequestParseError?
    /// Bytes consumed over all feeds.
    var consumed: Int
    /// The parser, for its state after the input.
    var parser: RequestParser
}

/// Feeds `input` to a new parser cut at `cuts` (indices, ascending), then finishes it unless
/// `finish` is false.
func parseRequests(_ input: [UInt8], options: RequestParser.Options = .init(), cuts: [Int] = [],
                   finish: Bool = true) -> RequestParse {
    let parser = RequestParser(options: options)
    var events: [RequestParser.Event] = []
    var consumed = 0
    var error: RequestParseError?
    var start = 0
    for end in cuts + [input.count] where error == nil {
        let piece = Array(input[start..<end])
        start = end
        let outcome: Result<Int, RequestParseError> = piece.withUnsafeBytes { raw in
            do throws(RequestParseError) {
                return .success(try parser.feed(raw) { events.append($0) })
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let count): consumed += count
        case .failure(let thrown): error = thrown
        }
    }
    if error == nil && finish {
        do { try parser.finish() } catch let thrown { error = thrown }
    }
    return RequestParse(events: mergingBodies(events), error: error, consumed: consumed, parser: parser)
}

/// `parseRequests` of a string's UTF-8.
func parseRequests(_ input: String, options: RequestParser.Options = .init(), cuts: [Int] = [],
                   finish: Bool = true) -> RequestParse {
    parseRequests(Array(input.utf8), options: options, cuts: cuts, finish: finish)
}

/// Consecutive `.body` events joined into one.
func mergingBodies(_ events: [RequestParser.Event]) -> [RequestParser.Event] {
    var merged: [RequestParser.Event] = []
    for event in events {
        if case .body(let more) = event, case .body(let previous)? = merged.last {
            merged[merged.count - 1] = .body(previous + more)
        } else {
            merged.append(event)
        }
    }
    return merged
}

/// The offset of the first occurrence of `marker` in `input` (plus `plus`).
func offset(of marker: String, in input: String, plus: Int = 0) -> Int {
    let bytes = Array(input.utf8)
    let needle = Array(marker.utf8)
    for start in 0...(bytes.count - needle.count) where Array(bytes[start..<(start + needle.count)]) == needle {
        return start + plus
    }
    preconditionFailure("\(marker) not in the input")
}

/// A head with these parts, as the parser reports it.
func requestHead(_ method: String, _ target: String, minor: Int = 1, _ fields: [(String, String)] = [],
                 keepAlive: Bool = true, expectsContinue: Bool = false, isUpgrade: Bool = false,
                 framing: RequestHead.Framing = .contentLength(0)) -> RequestHead {
    RequestHead(method: method, targetBytes: Array(target.utf8), versionMajor: 1, versionMinor: minor,
                fields: ReceivedFields(fields.map { HeaderField(name: $0.0, value: $0.1) }),
                keepAlive: keepAlive, expectsContinue: expectsContinue, isUpgrade: isUpgrade, framing: framing)
}
