@testable import UVHTTP1

// Our response decoder's reading of a stream, in the h11 differential's shape (H11Outcome.swift).
// The stream is fed the way a client connection feeds it (as the response-parser fuzz harness
// does): the decoder is armed for each request's response in turn, re-armed after a kept-alive
// response only when bytes follow it, stopped at an error or at a response that closes the
// connection, and told of the close when the input ends inside a response.

extension H11Outcome {
    /// What `ResponseParser` with `options` (by default the client's: every leniency on) makes
    /// of `stream`, fed in reads that end at `bounds`, the response number i answering a request
    /// with method `methods[i]` (the last one repeating). Only HEAD changes how a response reads.
    static func ours(_ stream: [UInt8], methods: [String], bounds: [Int],
                     options: ResponseParser.Options = .client()) -> H11Outcome {
        let decoder = ResponseParser(options: options)
        var result = H11Outcome(messages: [], outcome: "incomplete", unparsed: 0)
        func method(_ index: Int) -> String { methods[min(index, methods.count - 1)] }
        var completed = 0
        decoder.expectResponse(toHEAD: method(0) == "HEAD")

        /// Adds the events of one feed or finish to the messages.
        func absorb(_ events: [ResponseEvent]) {
            for event in events {
                if result.messages.count == completed {
                    result.messages.append(Message(method: method(completed), interim: [], reason: "", fields: [], body: "", trailers: [], complete: false))
                }
                let last = result.messages.count - 1
                switch event {
                case .informational(let head):
                    result.messages[last].interim!.append(Head(status: head.status, reason: String(latin1: head.reason.utf8), version: version(head),
                                                               fields: fieldPairs(head.headers)))
                case .head(let head):
                    result.messages[last].status = head.status
                    result.messages[last].reason = String(latin1: head.reason.utf8)
                    result.messages[last].version = version(head)
                    result.messages[last].fields = fieldPairs(head.headers)
                case .body(let bytes):
                    result.messages[last].body += String(latin1: bytes)
                case .end(let trailers):
                    result.messages[last].trailers = fieldPairs(trailers)
                    result.messages[last].complete = true
                    completed += 1
                }
            }
        }

        return stream.withUnsafeBytes { all -> H11Outcome in
            var start = 0
            for end in bounds where end > start {
                while start < end {
                    var events: [ResponseEvent] = []
                    let consumed: Int
                    do throws(HTTP1ParseError) {
                        consumed = try decoder.feed(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &events)
                    } catch {
                        absorb(events)
                        result.outcome = "error"
                        result.error = error.description
                        return result
                    }
                    absorb(events)
                    start += consumed
                    guard decoder.isComplete else { break }
                    if !decoder.keepAlive {
                        // The client closes the connection here: what follows belongs to no request.
                        result.outcome = "complete"
                        result.stopped = "connection closes after this message"
                        result.unparsed = stream.count - start
                        return result
                    }
                    if start < stream.count { decoder.expectResponse(toHEAD: method(completed) == "HEAD") }
                }
                start = max(start, end)
            }
            if decoder.isComplete {
                result.outcome = "complete"
                return result
            }
            var events: [ResponseEvent] = []
            do throws(HTTP1ParseError) {
                try decoder.finish(into: &events)
                absorb(events)
                result.atEOF = "complete"
            } catch {
                absorb(events)
                result.atEOF = "error"
                result.eofError = error.description
            }
            return result
        }
    }

    /// "1.1" from the head's version.
    private static func version(_ head: ResponseHead) -> String { "\(head.versionMajor).\(head.versionMinor)" }

    /// The fields as (name, value) byte pairs, as received.
    static func fieldPairs(_ fields: ReceivedFields) -> [[String]] {
        fields.indices.map { index in
            fields.withField(at: index) { name, value in [String(latin1: name), String(latin1: value)] }
        }
    }
}
