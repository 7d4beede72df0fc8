import CWARC
import Foundation
import UVHTTP1

/// What a WARC response record needs of a recorded response, as the client's response parser
/// reads it: where the final head starts (after any 1xx interim heads) and ends, however its
/// lines ended (CRLF or, as the client accepts, a bare LF), and the digest of its payload.
///
/// The payload is the body with its transfer encoding removed and its content encoding kept
/// (WARC 1.1 §6.3.2, IIPC warc-specifications#22): digesting the chunked bytes as they crossed
/// the wire gave the same content, sent with other chunk boundaries, another digest, so
/// deduplication by digest never matched (Heritrix fixed the same bug, heritrix3#769). The
/// parser undoes the chunking exactly as the client did when it read the response.
///
/// The head is fed one line at a time: a head can only end with a line's LF, and the parser
/// reports it as soon as it has that LF, so the line that made it report is the head's last
/// (a byte search for CRLF CRLF gets a bare-LF head wrong). The body then goes in whole. A few
/// calls per exchange, on the completion queue.
struct ResponsePayloadScan: Equatable {
    /// The first byte after the complete interim heads: the final status line's, 0 when none
    /// came first (the end of the response when only interim heads came).
    var finalHeadStart: Int
    /// The first byte after the final head, where the body starts; nil when the response holds
    /// no complete final head that the client's parser takes.
    var bodyStart: Int?
    /// `sha1:` + base32 of the payload (what the parser decoded of the body before it ended,
    /// was cut off or met an error); nil without a complete head.
    var payloadDigest: String?
    /// The final head's status; nil without a complete head.
    var status: Int?
    /// Payload bytes the digest covers.
    var payloadLength = 0
    /// The final head's Content-Type, for an index; nil without one.
    var contentType: String?

    /// The scan of `response`, the bytes a `WireExchange` read for a request that was a HEAD
    /// when `toHEAD` (its response has no body, whatever its Content-Length says).
    init(_ response: Data, toHEAD: Bool = false) {
        let reader = PayloadReader()
        let parser = ResponseParser(options: .client(maxHeaderBytes: WARCWriter.defaultCaptureLimit))
        parser.expectResponse(toHEAD: toHEAD)
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
                if reader.status != nil { found = lineStart }
            }
            guard let found, found < all.count, !parser.isComplete else { return }
            // A parse error or a cut ends the payload where it is: the digest covers what came.
            _ = try? parser.feed(UnsafeRawBufferPointer(rebasing: all[found...]), to: reader)
        }
        finalHeadStart = finalStart
        bodyStart = found
        if found != nil {
            payloadDigest = "sha1:" + WARCDigest.base32(reader.digest.finish())
            status = reader.status
            payloadLength = reader.length
            contentType = reader.contentType
        }
    }

    init(finalHeadStart: Int, bodyStart: Int?) {
        self.finalHeadStart = finalHeadStart
        self.bodyStart = bodyStart
    }

    /// Notes the heads the parser reports and digests the body it decodes.
    private final class PayloadReader: ResponseParserConsumer {
        var interimHeads = 0
        var status: Int?
        var contentType: String?
        let digest = SHA1Stream()
        var length = 0

        func parserReceivedInterim(_ head: ResponseHead) { interimHeads += 1 }
        func parserReceivedHead(_ head: ResponseHead) {
            status = head.status
            contentType = head.fields.first { $0.name.lowercased() == "content-type" }?.value
        }
        func parserReceivedBody(_ bytes: UnsafeRawBufferPointer) {
            digest.update(bytes)
            length += bytes.count
        }
        func parserReceivedEnd(trailers: ReceivedFields) {}
    }
}

/// SHA-1 over bytes given in pieces, by OpenSSL.
final class SHA1Stream {
    private let context: OpaquePointer

    init() {
        // Allocation and SHA-1's initialisation fail only when memory does.
        context = EVP_MD_CTX_new()!
        precondition(EVP_DigestInit_ex(context, EVP_sha1(), nil) == 1, "OpenSSL's SHA-1 failed to start")
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "OpenSSL's SHA-1 failed")
    }

    /// The 20 bytes of the digest; the stream is spent after it.
    func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && length == 20, "OpenSSL's SHA-1 failed")
        return digest
    }
}
