import Foundation

/// The runner's side of `TransactionMetrics`: one record per exchange, for tasks measured from
/// their start (a manager with hooks, or an async request). Others skip all of it with one nil
/// check per event, inlined where the event happens: no call at all for an unmeasured task.
extension TaskRunner {
    @inline(__always) func metricsFetchStarted() { if hookState != nil { measureFetchStarted() } }
    @inline(__always) func metricsRequestStarted(on connection: Exchange) {
        if hookState != nil { measureRequestStarted(on: connection) }
    }
    @inline(__always) func metricsRequestWritten() { if hookState != nil { measureRequestWritten() } }
    @inline(__always) func metricsResponseStarted(status: Int) { if hookState != nil { measureResponseStarted(status: status) } }
    @inline(__always) func metricsExchangeEnded(on connection: Exchange?) {
        if hookState != nil { measureExchangeEnded(on: connection) }
    }

    /// The task asked a pool for a connection (the first time, after a redirect, or a retry).
    private func measureFetchStarted() {
        guard let state = hookState, state.madeAtStart else { return }
        state.transaction = TransactionMetrics(url: currentRequest.url, method: currentRequest.method, fetchStartDate: Date())
    }

    /// A connection was assigned and the request is about to be written.
    private func measureRequestStarted(on connection: Exchange) {
        guard let state = hookState, state.madeAtStart, var transaction = state.transaction else { return }
        transaction.requestStartDate = Date()
        // Called before `execute`, which is when the connection counts this request.
        transaction.isReusedConnection = connection.hasServedRequests
        let timings = connection.timings
        if !transaction.isReusedConnection {
            transaction.domainLookupStartDate = timings.domainLookupStart
            transaction.domainLookupEndDate = timings.domainLookupEnd
            transaction.connectStartDate = timings.connectStart
            transaction.connectEndDate = timings.connectEnd
            transaction.secureConnectionStartDate = timings.secureConnectionStart
            transaction.secureConnectionEndDate = timings.secureConnectionEnd
        }
        // The cache's stored response has no connection (StoredExchange).
        guard connection.connectionID >= 0 else {
            transaction.resourceFetchType = .localCache
            state.transaction = transaction
            return
        }
        transaction.remoteAddress = connection.remoteAddressText
        transaction.networkProtocolName = connection.protocolName
        transaction.remotePort = timings.remote?.port
        state.transaction = transaction
    }

    private func measureRequestWritten() {
        guard let state = hookState, state.madeAtStart else { return }
        state.transaction?.requestEndDate = Date()
    }

    private func measureResponseStarted(status: Int) {
        guard let state = hookState, state.madeAtStart else { return }
        state.transaction?.responseStartDate = Date()
        state.transaction?.statusCode = status
    }

    /// The exchange is over (ended, failed or abandoned): the record is complete.
    private func measureExchangeEnded(on connection: Exchange?) {
        guard let state = hookState, state.madeAtStart, var transaction = state.transaction else { return }
        state.transaction = nil
        if transaction.responseStartDate != nil { transaction.responseEndDate = Date() }
        if let connection {
            transaction.requestBytesSent = connection.exchangeBytesWritten
            transaction.responseBytesReceived = connection.exchangeBytesRead
        }
        state.transactions.append(transaction)
    }
}
