import HTTPTypes

extension SessionEngine.FinishedTask {
    /// The finished task's head as its `HTTPResponse`, once its cookies are stored: once per
    /// task, off the loop, before any serializer, hook or completion handler sees it.
    /// `CompletionDelivery.run` calls it for every task of a batch, whichever way the task is
    /// then delivered, and stores it in the entry only for the deliveries that read it later.
    ///
    /// A failed task's response (when its head had arrived) was already built into its error;
    /// its cookies are stored too, as a browser keeps the cookies of a response whose body
    /// broke off.
    ///
    /// The task does not cache the response (`SessionTask.response` builds it from the head it
    /// keeps, once, if anyone asks): a lock and a copy per task saved for the callers that never
    /// ask, and a head with a template hands out its shared response without building anything.
    func resolveResponse() -> HTTPResponse? {
        let response: HTTPResponse?
        if !isPlain, let error {
            // A failure's error carries the response of the head it had (or none yet).
            response = error.response
        } else {
            response = head?.httpResponse
        }
        // A streamed task (`bytes(for:)`) stored its cookies when its head was handed out.
        // The store first: without one (the default) nothing else is read.
        guard task.cookieStore != nil, task.bodyStream == nil, let response else { return response }
        // Most responses set no cookie; the raw head says so without a look at the response's
        // fields, which costs allocations.
        if let head, !head.headers.contains(lowercaseName: "set-cookie") { return response }
        task.storeCookies(from: response)
        return response
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
