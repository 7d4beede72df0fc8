/// The body of a redirect the session follows (or of a response a download drops to ask
/// again), and the plan made while it arrives. Where the body is (planned, drained) and whether
/// its end waits are the machine's (`TaskStateMachine.destination`, `end`); this is the data.
/// Made at a task's first redirect; loop-confined, owned by the runner.
final class RedirectBody {
    let framing: RedirectBodyDrain.Framing
    /// The length the head announced, for a redirect delivered after all.
    let bodyLength: Int64?
    /// Body bytes read while planning (one socket read at most: reading is paused).
    var held: [[UInt8]] = []
    /// Body bytes read and dropped.
    var dropped = 0
    /// The plan, kept until the body is done with.
    var planned: RedirectOutcome?

    init(framing: RedirectBodyDrain.Framing, bodyLength: Int64?) {
        self.framing = framing
        self.bodyLength = bodyLength
    }
}

/// The runner's side of a redirect's body. The plan starts at the head; until it is back,
/// reading stops (one read's bytes are kept). Followed, the body is dropped as it arrives while
/// `RedirectBodyDrain` says reading it is cheaper than a new connection, else the connection is
/// closed and the next request goes at once; declined by the hook, the redirect is the task's
/// response and its body goes where any body goes (the task's sink). A download's restart (a
/// 416 answered with the whole body asked again) drops its body the same way, without a plan
/// to wait for.
extension TaskRunner {
    /// The body's framing, at its head.
    private func redirectBodyFraming(bodyLength: Int64?) -> RedirectBodyDrain.Framing {
        if let bodyLength { return .length(bodyLength) }
        return connection?.responseBodyEndsWithConnection == true ? .untilClose : .chunked
    }

    /// The head of a redirect the session follows: the machine stops reading and has it planned.
    func redirectHeadReceived(bodyLength: Int64?) {
        redirectBody = RedirectBody(framing: redirectBodyFraming(bodyLength: bodyLength), bodyLength: bodyLength)
        lastByteAt = LoopTimer.now(loop)
        perform(machine.headReceived(.redirectPlanning))
        armTimer()
    }

    /// The head of a response a download drops to send its request again without Range.
    func restartHeadReceived(bodyLength: Int64?) {
        let body = RedirectBody(framing: redirectBodyFraming(bodyLength: bodyLength), bodyLength: bodyLength)
        redirectBody = body
        lastByteAt = LoopTimer.now(loop)
        perform(machine.headReceived(.restartDraining))
        if RedirectBodyDrain.decide(body.framing, dropped: 0) == .close { perform(.abandonRedirectBody) }
        armTimer()
    }

    /// Body bytes of a redirect (or restart) response.
    func redirectBodyReceived(_ bytes: UnsafeRawBufferPointer) {
        guard let body = redirectBody else { return }
        if machine.destination == .redirectPlanning {
            body.held.append(Array(bytes))
            return
        }
        body.dropped += bytes.count
        if RedirectBodyDrain.decide(body.framing, dropped: body.dropped) == .close { perform(.abandonRedirectBody) }
    }

    /// The plan, back on the loop while the body waits. Ignored if the task ended meanwhile.
    func redirectPlanArrived(_ outcome: RedirectOutcome) {
        guard let body = redirectBody, machine.destination == .redirectPlanning else { return }
        let plan: TaskStateMachine.RedirectPlan
        switch outcome {
        case .deliver:
            plan = .deliver
        case .follow:
            let dropped = body.held.reduce(0) { $0 + $1.count }
            plan = .follow(drainable: RedirectBodyDrain.decide(body.framing, dropped: dropped) == .drain)
        case .fail:
            plan = .fail
        }
        body.planned = outcome
        perform(machine.redirectPlanArrived(plan))
    }

    /// The redirect is followed and its body read on: what was kept is dropped.
    func redirectBodyDraining() {
        guard let body = redirectBody else { return }
        body.dropped = body.held.reduce(0) { $0 + $1.count }
        body.held = []
    }

    /// The hook declined the redirect: it is the task's response, and the body kept so far is
    /// the start of the task's body. Reading stays paused until it is replayed.
    func redirectDeclined(ended: Bool) {
        let held = redirectBody?.held ?? []
        let bodyLength = redirectBody?.bodyLength
        redirectBody = nil
        guard let head else { return }
        acceptFinalHead(head, bodyLength: bodyLength)
        for chunk in held {
            guard !machine.state.isTerminal else { return }
            chunk.withUnsafeBytes { exchangeReceivedBody($0) }
        }
        guard !machine.state.isTerminal else { return }
        if ended {
            responseEnded()
        } else {
            // Reads again (timers included) unless the body's consumer (a stream, the file) is
            // already behind, or `dataTaskDidReceiveResponse` holds the response now.
            consumerDrained()
        }
    }
}
