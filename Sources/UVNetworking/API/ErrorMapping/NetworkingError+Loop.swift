extension NetworkingError {
    /// The public error for a loop that could not start: the one place `LoopStartError` becomes
    /// a `NetworkingError`.
    init(_ error: LoopStartError) {
        self.init(.loopShutDown, "the event loop could not start: \(error.call) failed: \(UVError.describe(error.status))")
    }
}
