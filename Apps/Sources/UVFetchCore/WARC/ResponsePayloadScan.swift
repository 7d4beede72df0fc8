import Foundation
import UVHTTP1

/// Where a recorded response's final head starts and ends, as the client's response parser reads
/// it: after any 1xx interim heads, and up to the empty line that ends the head, however its lines
/// ended (CRLF or, as the client accepts, a bare LF).
///
/// A byte search for CRLF CRLF gets a bare-LF head wrong: it finds the first CRLF CRLF inside the
/// body, or none, and the payload digest is then taken over the wrong bytes (warcio, which reads
/// the head line by line, recomputes a different one and `warcio check` fails).
///
/// The response is fed to a parser with the client's options one line at a time: a head can only
/// end with a line's LF, and the parser reports it as soon as it has that LF, so the line that
/// made it report is the head's last. A head is some hundreds of bytes in a few lines, so this is
/// a few calls per exchange, on the completion queue.
struct ResponseHeadBounds: Equatable {
    /// The first byte after the complete interim heads: the final status line's, 0 when none
    /// came first (the end of the response when only interim heads came).
    var finalHeadStart: Int
    /// The first byte after the final head, where the payload starts; nil when the response
    /// holds no complete final head that the client's parser takes.
    var bodyStart: Int?

    /// The bounds in `response`, the bytes a `WireExchange` read.
    init(_ response: Data) {
        let reader = HeadReader()
        let parser = ResponseParser(options: .client(maxHeaderBytes: WARCWriter.defaultCaptureLimit))
        var finalStart = 0
        var found: Int?
        response.withUnsafeBytes { all in
            var lineStart = 0
            while lineStart < all.count, found == nil {
                let lineEnd = all[lineStart...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? all.count
                do {
                    _ = try parser.feed(UnsafeRawBufferPointer(rebasing: all[lineStart..<lineEnd]), to: reader)
                } catch {
                    return
                }
                lineStart = lineEnd
                if reader.interimHeads > 0 {
                    // Each interim head ends a line too: the next status line starts here.
                    reader.interimHeads = 0
                    finalStart = lineStart
                }
                if reader.sawFinalHead { found = lineStart }
            }
        }
        finalHeadStart = finalStart
        bodyStart = found
    }

    init(finalHeadStart: Int, bodyStart: Int?) {
        self.finalHeadStart = finalHeadStart
        self.bodyStart = bodyStart
    }

    /// Notes the heads the parser reports; the body is not looked at.
    private final class HeadReader: ResponseParserConsumer {
        var interimHeads = 0
        var sawFinalHead = false

        func parserReceivedInterim(_ head: ResponseHead) { interimHeads += 1 }
        func parserReceivedHead(_ head: ResponseHead) { sawFinalHead = true }
        func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {}
        func parserReceivedEnd(trailers: ReceivedFields) {}
    }
}
