/// A redirect's body, from its head to the redirect's plan and after. Loop-confined, owned by
/// the runner.
struct RedirectBodyState {
    enum Phase: Equatable {
        /// The plan is being made on a worker and reading is paused: what the last read
        /// brought is kept, since a redirect the hook declines delivers its body.
        case planning
        /// The redirect is followed: what arrives is dropped until the end.
        case draining
    }

    var phase: Phase
    var framing: RedirectBodyDrain.Framing
    /// The length the head announced, for a redirect delivered after all.
    var bodyLength: Int64?
    /// Body bytes read while planning (one socket read at most: reading is paused).
    var held: [[UInt8]] = []
    /// The response ended while planning; its connection is back in its pool.
    var ended = false
    /// Body bytes read and dropped.
    var dropped = 0
}

/// The runner's side of a redirect's body. The plan starts at the head; until it is back,
/// reading stops (one read's bytes are kept). Followed, the body is dropped as it arrives while
/// `RedirectBodyDrain` says reading it is cheaper than a new connection, else the connection is
/// closed and the next request goes at once; declined by the hook, the redirect is the task's
/// response and its body goes where any body goes (memory, stream, file, counted and dropped).
/// A download's restart (a 416 answered with the whole body asked again) drops its body the
/// same way, without a plan to wait for.
extension TaskRunner {
    /// The body's framing, at its head.
    private func redirectBodyFraming(bodyLength: Int64?) -> RedirectBodyDrain.Framing {
        if let bodyLength { return .length(bodyLength) }
        return connection?.responseBodyEndsWithConnection == true ? .untilClose : .chunked
    }

    /// The head of a redirect the session follows (the machine receives its body): stops
    /// reading and plans the redirect.
    func redirectHeadReceived(bodyLength: Int64?) {
        redirectBody = RedirectBodyState(phase: .planning, framing: redirectBodyFraming(bodyLength: bodyLength), bodyLength: bodyLength)
        // Paused for its consumer, the plan: no idle timeout, and a resume does not read.
        pausedForConsumer = true
        connection?.pauseReading()
        startRedirectPlan()
    }

    /// The head of a response a download drops to send its request again without Range.
    func restartHeadReceived(bodyLength: Int64?) {
        redirectBody = RedirectBodyState(phase: .draining, framing: redirectBodyFraming(bodyLength: bodyLength), bodyLength: bodyLength)
        if RedirectBodyDrain.decide(redirectBody!.framing, dropped: 0) == .close { abandonRedirectBody() }
    }

    /// Body bytes of a redirect (or restart) response.
    func redirectBodyReceived(_ bytes: [UInt8]) {
        guard var state = redirectBody else { return }
        switch state.phase {
        case .planning:
            state.held.append(bytes)
            redirectBody = state
        case .draining:
            state.dropped += bytes.count
            redirectBody = state
            if RedirectBodyDrain.decide(state.framing, dropped: state.dropped) == .close { abandonRedirectBody() }
        }
    }

    /// The redirect's response ended. While its plan is made the end is held (the connection,
    /// released, reads again to notice a close); returns whether it was.
    func redirectBodyEndHeld() -> Bool {
        guard var state = redirectBody else { return false }
        guard state.phase == .planning else {
            // Drained: the machine goes on to `redirecting` and the plan is applied.
            redirectBody = nil
            return false
        }
        state.ended = true
        redirectBody = state
        connection?.resumeReading()
        return true
    }

    /// The connection failed (closed, reset, truncated) in the body of a redirect being
    /// followed: the body was to be dropped anyway, so the redirect goes on, as curl's does.
    /// Returns whether it did; while the plan is made, the failure stands.
    func redirectBodyCutShort() -> Bool {
        guard redirectBody?.phase == .draining, machine.state == .receivingBody else { return false }
        redirectBody = nil
        perform(machine.responseEnded(isRedirectToFollow: true))
        return true
    }

    /// Closes the connection mid-body, and goes on as if the body had ended.
    private func abandonRedirectBody() {
        redirectBody = nil
        abandonConnection()
        perform(machine.responseEnded(isRedirectToFollow: true))
    }

    /// The plan, back on the loop while the body waits. Ignored if the task ended meanwhile.
    func redirectPlanArrived(_ outcome: RedirectOutcome) {
        guard !machine.state.isTerminal, var state = redirectBody, state.phase == .planning else { return }
        if case .deliver = outcome {
            redirectDeclined(state)
            return
        }
        plannedRedirect = outcome
        if state.ended {
            redirectBody = nil
            pausedForConsumer = false
            perform(machine.responseEnded(isRedirectToFollow: true))
            return
        }
        state.dropped = state.held.reduce(0) { $0 + $1.count }
        state.held = []
        if case .follow = outcome, RedirectBodyDrain.decide(state.framing, dropped: state.dropped) == .drain {
            state.phase = .draining
            redirectBody = state
            // Reads again (unless suspended) with the idle timeout running.
            consumerDrained()
            return
        }
        // Too long to read, or the redirect fails: its body is of no use.
        pausedForConsumer = false
        abandonRedirectBody()
    }

    /// The hook declined the redirect: it is the task's response, and the body kept so far is
    /// the start of the task's body. Reading stays paused (`pausedForConsumer`) until it is
    /// replayed.
    private func redirectDeclined(_ state: RedirectBodyState) {
        redirectBody = nil
        followingRedirect = false
        guard let head else { return }
        acceptFinalHead(head, bodyLength: state.bodyLength)
        for chunk in state.held {
            guard !machine.state.isTerminal else { return }
            receivedBody(chunk)
        }
        guard !machine.state.isTerminal else { return }
        if state.ended {
            pausedForConsumer = false
            responseEnded()
        } else {
            // Reads again (timers included) unless the body's consumer (a stream, the file) is
            // already behind.
            consumerDrained()
            // `dataTaskDidReceiveResponse` holds the response now: its answer reads again.
            if hookState?.holdsResponse == true { connection?.pauseReading() }
        }
    }
}
