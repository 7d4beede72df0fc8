extension SessionEngine.FinishedTask {
    /// Whether delivering the task may store cookies (`resolveResponse`): its head carries
    /// Set-Cookie, or it failed after a head the error keeps. Read on the loop, from the raw head,
    /// to choose where the batch is delivered; the cookie store is asked later, off the loop.
    var mayStoreCookies: Bool {
        guard let head else { return error?.response != nil }
        return head.headers.contains(lowercaseName: "set-cookie")
    }
}
