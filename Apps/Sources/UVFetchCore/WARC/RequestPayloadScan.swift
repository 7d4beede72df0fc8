import Foundation
import UVHTTP1

/// The `WARC-Payload-Digest` of a recorded request: the SHA-1 of its body with the transfer
/// encoding removed (WARC 1.1 §6.3.2), as for a response (`ResponsePayloadScan`). A streamed
/// upload of unknown length goes out chunked; digesting its framing gave the same body, sent
/// in other chunks, another digest.
///
/// The request is the client's own encoding, so the library's strict request parser reads it
/// (a server's view of the same bytes). A request cut short (past the capture limit, or a
/// failed write) gives the digest of the body bytes that came; one whose head the parser does
/// not take falls back to the bytes after the head's empty line, as sent.
enum RequestPayloadScan {
    /// `sha1:` and base32 of the payload; nil when the head is incomplete.
    static func digest(_ request: Data) -> String? {
        let separator = Data([0x0D, 0x0A, 0x0D, 0x0A])
        guard let bodyStart = request.range(of: separator)?.upperBound else { return nil }
        let reader = Reader()
        let parser = RequestParser(options: RequestParser.Options(maxHeaderBytes: WARCWriter.defaultCaptureLimit))
        request.withUnsafeBytes { bytes in
            // An error ends the payload where it is: the digest covers what was decoded.
            _ = try? parser.feed(bytes, to: reader)
        }
        guard reader.sawHead else { return WARCDigest.sha1(request[bodyStart...]) }
        return "sha1:" + WARCDigest.base32(reader.digest.finish())
    }

    /// Digests the first request's decoded body.
    private final class Reader: RequestParserConsumer {
        var sawHead = false
        var ended = false
        let digest = SHA1Stream()

        func parserReceivedHead(_ head: RequestHeadView) { sawHead = true }
        func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {
            if !ended { digest.update(bytes) }
        }
        func parserReceivedEnd(trailers: ReceivedFields) { ended = true }
    }
}
