import HTTPTypes

extension SessionEngine.FinishedTask {
    /// Turns the finished task's head into its `HTTPResponse` and stores the response's cookies:
    /// once per task, on the worker, before any serializer, hook or completion handler sees it.
    /// `CompletionDelivery.run` calls it for every task of a batch, whichever way the task is
    /// then delivered.
    ///
    /// A failed task's response (when its head had arrived) was already built into its error;
    /// its cookies are stored too, as a browser keeps the cookies of a response whose body
    /// broke off.
    mutating func resolveResponse() {
        if let error {
            response = error.response
        } else if let head {
            let response = head.httpResponse
            task.cacheResponse(response)
            self.response = response
        }
        // A streamed task (`bytes(for:)`) stored its cookies when its head was handed out.
        // The store first: without one (the default) nothing else is read, and the response is
        // not copied out (a retain and a release of each of its references).
        guard task.cookieStore != nil, task.bodyStream == nil, let response else { return }
        // Most responses set no cookie; the raw head says so without a look at the response's
        // fields, which costs allocations.
        if let head, !head.headers.contains(lowercaseName: "set-cookie") { return }
        task.storeCookies(from: response)
    }
}

extension SessionTask {
    /// Stores the cookies of a response to this task's current request, when the session has
    /// a cookie store and the request handles cookies. The one place a session stores cookies:
    /// a redirect calls it for the response it follows, before `currentRequest` moves on.
    func storeCookies(from response: HTTPResponse) {
        cookieStore?.storeCookies(from: response, for: currentRequest.url)
    }

    /// The session's cookie store, if it has one and the current request handles cookies.
    var cookieStore: CookieStore? {
        // The store first: without one (the default) the request, behind a lock, is not read.
        guard let store = manager.cookieStore else { return nil }
        return currentRequest.httpShouldHandleCookies ? store : nil
    }
}
