/// What a task runner needs of its session's configuration, read once when the engine is made:
/// the session's timeouts in loop milliseconds, the redirect rules and the decoding limits. A
/// runner copies these few words instead of the whole `SessionConfiguration` (strings, arrays,
/// a proxy setting), which would cost retains and releases for every task.
struct TaskSettings: Sendable {
    /// `SessionConfiguration.responseHeadTimeout`, in loop milliseconds (`.max` for none).
    let responseHeadTimeout: UInt64
    /// `SessionConfiguration.idleTimeout`, in loop milliseconds (`.max` for none).
    let idleTimeout: UInt64
    let redirectLimits: RedirectPlanner.Limits
    /// nil when the session does not decode responses.
    let decodingLimits: ContentDecoder.Limits?

    init(configuration: SessionConfiguration) {
        responseHeadTimeout = LoopDuration.timeout(configuration.responseHeadTimeout)
        idleTimeout = LoopDuration.timeout(configuration.idleTimeout)
        redirectLimits = RedirectPlanner.Limits(maximumRedirects: configuration.maximumRedirects,
                                                allowsHTTPSToHTTP: configuration.allowsHTTPSToHTTPRedirects)
        decodingLimits = configuration.decompressesResponses
            ? ContentDecoder.Limits(maximumBytes: configuration.maximumResponseBodyBytes,
                                    maximumRatio: configuration.maximumDecompressionRatio)
            : nil
    }
}
