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
        guard let response, task.bodyStream == nil else { return }
        task.storeCookies(from: response)
    }
}

extension SessionTask {
    /// Stores the cookies of a response to this task's current request, when the session has
    /// a cookie store and the request handles cookies. The one place a session stores cookies,
    /// also for the intermediate responses of redirects.
    func storeCookies(from response: HTTPResponse) {
        guard let store = manager.configuration.cookieStore, currentRequest.httpShouldHandleCookies else { return }
        store.storeCookies(from: response, for: currentRequest.url)
    }
}
