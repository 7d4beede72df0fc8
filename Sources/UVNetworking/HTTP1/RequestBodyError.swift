/// Why a streamed request body (`Request.bodyStream`) could not be sent: the caller's stream
/// threw, or broke its declared length. Travels inside `ExchangeError.requestBody`.
enum RequestBodyError: Error {
    /// A read was asked for after the stream had ended.
    case readAfterEnd
    /// The stream's factory threw.
    case factoryFailed(any Error)
    /// The stream was released before the read.
    case released
    /// A read threw after `bodyRead` bytes.
    case readFailed(bodyRead: Int64, any Error)
    /// The stream ended after `bodyRead` of its `declared` bytes.
    case endedEarly(bodyRead: Int64, declared: Int64)
    /// The stream holds more than its `declared` bytes.
    case longerThanDeclared(declared: Int64)
    /// A one-shot async body was needed again (a retry, a 307/308 redirect): it cannot be replayed.
    case notReplayable
    /// The connection's machine failed the body without a recorded cause (not expected).
    case unexplained
}
