// A kept-alive server answers the same request with the same message: the same head, Date's
// value aside, and a body of the same Content-Length. Once llhttp has accepted such a head on
// this connection, a later head with the same bytes needs llhttp no more than it needs the scan.
//
// Why that is exact: llhttp's verdicts on a head (status, version, flags, keep-alive, where the
// body ends) depend only on its bytes and its state at the first byte. That state is the one
// `startMessage` leaves (llhttp_reset) for every message, the template's included, and the
// request was not a HEAD either time (`HeadReplay.bodyLength` is only set for such templates).
// The bytes are the template's but for Date's value, which `HeadReplay.matches` allows only as
// printable ASCII: a value any llhttp accepts in a field it gives no meaning to. So llhttp would
// accept this head as it did the template's and frame the message the same way: the head, then
// exactly Content-Length body bytes, then the end. The body bytes go through `onBody` (the body
// limit) and the end through `onMessageComplete`, as llhttp's callbacks would send them, one body
// piece per read. llhttp itself is left where `startMessage` put it, so the next message that
// does not repeat the template goes through it as usual.

extension ResponseParser {
    /// Decodes the message whose head starts at `bytes[offset]` and repeats `replay`'s template
    /// (`HeadReplay.matches`), whose framing is the template's Content-Length (`bodyLength`),
    /// without llhttp: the head is the template's with this head's Date, the body is the bytes
    /// after it. Returns the bytes consumed (up to the message's end, or all of them when its body
    /// goes on in the next read).
    package func replayMessage(_ bytes: UnsafeRawBufferPointer, at offset: Int, of replay: HeadReplay,
                       bodyLength: Int) throws(HTTP1ParseError) -> Int {
        let start = bytes.baseAddress! + offset
        // What onHeadersComplete leaves for a final head with the template's fields.
        contentLength = replay.contentLength
        scanner = .inactive
        isInterim = false
        finalKeepAlive = true
        headBodyLength = Int64(bodyLength)
        section = .body
        consumer?.parserReceivedHead(replay.replayedHead(date: start + replay.dateValue.lowerBound, keepAlive: true))
        if let maxBody = options.maxBodyBytes, bodyLength > maxBody {
            // As onHeadersComplete: the head is delivered, the body will not fit.
            throw fail(HTTP1ParseError(kind: .bodyTooLarge, reason: "Content-Length \(bodyLength) exceeds the \(maxBody)-byte body limit"),
                       at: offset &+ replay.byteCount)
        }
        replayedBodyRemaining = bodyLength
        return try replayBody(bytes, from: offset &+ replay.byteCount)
    }

    /// Hands on the next body bytes of a replayed message from `bytes[offset...]`, and its end
    /// once the last one is there. Returns the bytes consumed up to where it stopped.
    package func replayBody(_ bytes: UnsafeRawBufferPointer, from offset: Int) throws(HTTP1ParseError) -> Int {
        let remaining = replayedBodyRemaining!
        let count = min(remaining, bytes.count &- offset)
        if count > 0 {
            replayedBodyRemaining = remaining &- count
            let at = (bytes.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
            if onBody(at, count) != 0 { throw fail(callbackError!, at: callbackErrorIndex ?? offset) }
        }
        guard remaining == count else { return bytes.count }
        replayedBodyRemaining = nil
        // The end, as llhttp would call it; its pause is for llhttp's loop, which did not run.
        _ = onMessageComplete()
        pause = nil
        return offset &+ count
    }
}
