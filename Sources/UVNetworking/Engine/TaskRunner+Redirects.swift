import Foundation
import HTTPTypes
import UVHTTP1

/// What planning a redirect decided, on its way back to the loop.
enum RedirectOutcome: Sendable {
    /// Send this request next (encoded already, off the loop).
    case follow(Request, PreparedRequest)
    /// Do not follow: the redirect response is the task's response.
    case deliver
    /// The redirect cannot be followed.
    case fail(NetworkingError)
}

/// The runner's side of redirects: spotting one on the loop (a status and a field lookup), then
/// planning the next request on a worker — resolving Location, the method rules, the hook, the
/// request's encoding, all of which are either user code or serialization — while the
/// redirect's body waits (TaskRunner+RedirectBodies.swift), and once that body is done with,
/// moving the task to its next exchange.
extension TaskRunner {
    /// Whether `head` is a redirect the session follows: a redirect status with a Location
    /// that is not blank. The status first: no String is made for other responses.
    func isRedirectToFollow(_ head: ResponseHead) -> Bool {
        RedirectPlanner.isRedirect(head.status)
            && RedirectPlanner.isRedirectToFollow(status: head.status, location: head.headers.firstValue(named: "location"))
    }

    /// The machine reached `redirecting`: the redirect's body is done with. Its plan was made
    /// meanwhile.
    func planRedirect() {
        guard let outcome = redirectBody?.planned else { return }
        redirectBody = nil
        // From the next loop job: a body that just ended is still inside its connection's
        // callback, and that connection goes back to its pool only after it, ready to carry
        // the next request.
        let runner = LoopBound(self, loop: loop)
        _ = loop.execute { runner.value.redirectPlanned(outcome) }
    }

    /// Plans the redirect in hand on a worker, as its head arrives; the outcome comes back to
    /// `redirectPlanArrived`.
    func startRedirectPlan() {
        guard let head else { return }
        let request = currentRequest
        let visited = self.visited + [RedirectPlanner.Visit(method: request.method, url: request.url.absoluteString)]
        let limits = redirectLimits
        let task = self.task
        let manager = task.manager
        let loop = self.loop
        let runner = LoopBound(self, loop: loop)
        manager.workers.run {
            let outcome = Self.plan(after: request, head: head, visited: visited, limits: limits, task: task)
            _ = loop.execute { runner.value.redirectPlanArrived(outcome) }
        }
    }

    /// Runs on a worker thread.
    private static func plan(after request: Request, head: ResponseHead, visited: [RedirectPlanner.Visit],
                             limits: RedirectPlanner.Limits, task: SessionTask) -> RedirectOutcome {
        let response = head.httpResponse
        let manager = task.manager
        // Cookies the redirect sets apply to the request it leads to.
        task.storeCookies(from: response)
        var next: Request
        switch RedirectPlanner.nextRequest(after: request, status: head.status, location: response.headerFields[.location],
                                           visited: visited, limits: limits) {
        case .failure(let error):
            return .fail(error)
        case .success(let planned):
            next = planned
        }
        if let hook = manager.hooks.read({ $0.taskWillPerformHTTPRedirection }) {
            guard let chosen = hook(task, response, next) else { return .deliver }
            next = chosen
        }
        do {
            let prepared = try PreparedRequest(next, defaults: manager.defaultFields(for: next),
                                               cookies: manager.cookieStore,
                                               proxies: manager.proxies) { (host) throws(NetworkingError) in
                try manager.securityBinding(forHost: host)
            }
            return .follow(next, prepared)
        } catch {
            return .fail(error)
        }
    }

    /// The plan, once the redirect's body is done with (the machine is `redirecting`).
    /// `isRedirect`: false when the next request is a download's restart without Range (not a
    /// redirect the metrics count).
    func redirectPlanned(_ outcome: RedirectOutcome, isRedirect: Bool = true) {
        switch outcome {
        case .follow(let request, let prepared):
            // A cancel or timeout while the plan was made wins.
            guard case .enqueue = machine.followRedirect(isReplayable: request.isReplayable) else { return }
            traceFollowed(to: request, isRedirect: isRedirect)
            observeRedirect(to: request, status: head?.status ?? 0)
            moveOn(to: request, prepared: prepared)
            head = nil
            redirectBody = nil
            task.recordRedirect(to: request)
            if isRedirect { hookState?.redirectCount += 1 }
            perform(.enqueue(requireFreshConnection: false))
        case .deliver:
            // Taken as it arrives, while the body can still be delivered (redirectPlanArrived);
            // a body already dropped cannot.
            guard let head, case .succeed = machine.deliverRedirect() else { return }
            task.recordResponse(head, expectedLength: 0)
            perform(.succeed)
        case .fail(let error):
            guard case .fail = machine.redirectFailed(error.code) else { return }
            fail(error)
        }
    }
}
