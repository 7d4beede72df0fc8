import Foundation
import UVHTTP1

/// The runner's side of the manager's hooks. Each entry point costs one atomic load (or a nil
/// check) when no hook is set. Loop thread only.
extension TaskRunner {
    private var hooks: SessionHooks { task.manager.hooks }

    func ensureHookState() -> TaskHookState {
        if let hookState { return hookState }
        let made = TaskHookState()
        hookState = made
        return made
    }

    /// The response head arrived (the machine is receiving the body). With
    /// `dataTaskDidReceiveResponse` set, holds the task: stops reading, keeps whatever body and
    /// end the same read brought, and asks the closure on the completion queue; its answer comes
    /// back through the loop's queue to `dispositionArrived`.
    func hookResponseReceived(_ head: ResponseHead) {
        guard hookState != nil || hooks.isActive else { return }
        let state = ensureHookState()
        state.isReusedConnection = connection?.isReused
        if let tls = connection?.tlsTransport {
            state.tls = TLSMetrics(protocolVersion: tls.protocolVersion, cipherSuite: tls.cipherSuite,
                                   isSessionResumed: tls.isSessionReused, verifiedChain: tls.verifiedChain)
        }
        guard hooks.contains(.receiveResponse), let dataTask = task as? DataTask,
              let hook = hooks.read({ $0.dataTaskDidReceiveResponse }) else { return }
        perform(machine.hookHeldResponse())
        let loop = self.loop
        let runner = LoopBound(self, loop: loop)
        state.sendingChannel.send(through: task.manager, for: task) {
            let disposition = hook(dataTask, head.httpResponse)
            _ = loop.execute { runner.value.dispositionArrived(disposition) }
        }
    }

    /// Body bytes arrived (already given to the sink), valid only during the call.
    func hookBodyReceived(_ bytes: UnsafeRawBufferPointer) {
        guard let state = hookState ?? (hooks.contains(.receiveData) ? ensureHookState() : nil) else { return }
        if case .hook = machine.end {
            state.heldChunks.append(Array(bytes))
        } else {
            deliverChunk(Data(bytes), state)
        }
    }

    private func deliverChunk(_ data: @autoclosure () -> Data, _ state: TaskHookState) {
        guard hooks.contains(.receiveData), let dataTask = task as? DataTask,
              let hook = hooks.read({ $0.dataTaskDidReceiveData }) else { return }
        let data = data()
        state.sendingChannel.send(through: task.manager, for: task) { hook(dataTask, data) }
    }

    /// The closure's answer, back on the loop. Ignored if the task has ended meanwhile
    /// (cancelled, timed out, failed).
    func dispositionArrived(_ disposition: ResponseDisposition) {
        guard task.loopRunner === self, let state = hookState, case .hook = machine.end else { return }
        let chunks = state.heldChunks
        state.heldChunks = []
        switch disposition {
        case .cancel:
            cancel()
        case .allow:
            let action = machine.hookAllowedResponse()
            for chunk in chunks { deliverChunk(Data(chunk), state) }
            // The end that waited, or reading again (a task suspended meanwhile stays paused
            // until resumed, one whose consumer is behind until it drains).
            perform(action)
        }
    }
}

extension SessionEngine {
    /// Request body bytes went out: tells `taskDidSendBodyData` the bytes since its last call.
    func hookBodyDataSent(_ task: SessionTask) {
        guard let runner = task.loopRunner, let hook = task.manager.hooks.read({ $0.taskDidSendBodyData }) else { return }
        let state = runner.ensureHookState()
        let total = task.countOfBytesSent
        let sent = total - state.reportedBytesSent
        guard sent > 0 else { return }
        state.reportedBytesSent = total
        let expected = task.countOfBytesExpectedToSend
        state.sendingChannel.send(through: task.manager, for: task) { hook(task, sent, total, expected) }
    }
}
