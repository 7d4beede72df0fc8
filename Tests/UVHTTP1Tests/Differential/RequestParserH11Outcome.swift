@testable import UVHTTP1

// RequestParser's reading of a stream, in the h11 differential's shape (H11Outcome.swift): the
// requests of one connection, pipelined, as a server reads them. Reading stops after a request
// that stops the parser (not keep-alive, an upgrade, a CONNECT); the bytes after it are counted as
// unread, as h11_outcome.py counts them.

extension H11Outcome {
    /// What `RequestParser` with `options` (by default strict) makes of `stream`, fed in reads
    /// that end at `bounds`.
    static func ourRequests(_ stream: [UInt8], bounds: [Int], options: RequestParser.Options = .init()) -> H11Outcome {
        let parser = RequestParser(options: options)
        var result = H11Outcome(messages: [], outcome: "incomplete", unparsed: 0)

        func absorb(_ event: RequestParser.Event) {
            switch event {
            case .head(let head):
                result.messages.append(Message(method: String(latin1: Array(head.method.utf8)), target: String(latin1: head.targetBytes),
                                               version: "\(head.versionMajor).\(head.versionMinor)", fields: fieldPairs(head.fields),
                                               body: "", trailers: [], complete: false))
            case .body(let bytes):
                result.messages[result.messages.count - 1].body += String(latin1: bytes)
            case .end(let trailers):
                result.messages[result.messages.count - 1].trailers = fieldPairs(trailers)
                result.messages[result.messages.count - 1].complete = true
            }
        }

        return stream.withUnsafeBytes { all -> H11Outcome in
            var start = 0
            for end in bounds where end > start {
                do throws(RequestParseError) {
                    try parser.feed(UnsafeRawBufferPointer(rebasing: all[start..<end]), onEvent: absorb)
                } catch {
                    result.outcome = "error"
                    result.error = error.description
                    return result
                }
                if parser.isStopped {
                    result.outcome = "complete"
                    result.stopped = "parser stopped after this message"
                    result.unparsed = stream.count - parser.consumedByteCount
                    return result
                }
                start = end
            }
            if parser.isBetweenRequests && !result.messages.isEmpty {
                result.outcome = "complete"
                return result
            }
            do throws(RequestParseError) {
                try parser.finish()
                result.atEOF = "complete"
            } catch {
                result.atEOF = "error"
                result.eofError = error.description
            }
            return result
        }
    }
}
