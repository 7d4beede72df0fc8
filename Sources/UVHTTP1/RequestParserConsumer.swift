/// Receives what a `RequestParser` parses, as it is parsed, without copies: the server's way in.
///
/// For each request, in order: `parserReceivedHead`, `parserReceivedBody` any number of times,
/// `parserReceivedEnd`; then the next request's head, if the stream carries one. An error cuts
/// that short (the parser's `feed` throws). The calls happen inside `feed`, on its thread.
public protocol RequestParserConsumer: AnyObject {
    /// A request head is complete. `head` views the parser's storage: valid only during the call
    /// (`RequestHeadView.makeHead()` copies it).
    func parserReceivedHead(_ head: RequestHeadView)
    /// Body bytes after chunked decoding, never empty: a view of the bytes being fed, valid only
    /// during the call.
    func parserReceivedBody(_ bytes: UnsafeRawBufferPointer)
    /// The request is complete; `trailers` is empty unless a chunked body carried some.
    func parserReceivedEnd(trailers: ReceivedFields)
}
