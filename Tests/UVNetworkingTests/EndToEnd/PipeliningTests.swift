import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import UVNetworking

extension EndToEnd {
    /// HTTP/1.1 pipelining (`Request.httpShouldUsePipelining`) against scripted servers: requests
    /// written before their predecessors are answered, responses that arrive together, a server
    /// that closes with requests unanswered, one that breaks off, and a cancelled request
    /// waiting for its turn.
    @Suite(.tags(.loopback)) struct Pipelining {
        /// One connection per origin, so that a second request can only be pipelined.
        private static func harness(depth: Int = 4) -> ClientHarness {
            ClientHarness {
                $0.maximumConnectionsPerHost = 1
                $0.pipelineDepth = depth
            }
        }

        private static func request(_ url: String, pipelined: Bool = true, method: HTTPRequest.Method = .get) -> Request {
            var request = ClientHarness.request(url, method: method, timeout: 10)
            request.httpShouldUsePipelining = pipelined
            return request
        }

        /// Starts every request at once and waits for all of them.
        private static func fetchAll(_ harness: ClientHarness, _ requests: [Request]) -> [Outcome] {
            let tasks = requests.map { harness.makeTask($0) }
            for (task, _) in tasks { task.resume() }
            return tasks.map { $0.wait(20) ?? Outcome(response: nil, object: nil, error: nil, calls: 0) }
        }

        /// The response a scripted server gives: the request's own target, so a test can tell
        /// which response went to which task.
        private static func echo(_ request: ScriptedRequest, _ extra: [(String, String)] = []) -> String {
            ScriptedResponse.text("answer to \(request.target)", headers: extra)
        }

        /// Answers `first` and every request after it, counting in `count` those that had come
        /// before the one ahead was answered (a pipelined request is there within a moment).
        private static func serveCountingPipelined(_ connection: ScriptedConnection, first: ScriptedRequest,
                                                   count: borrowing Mutex<Int>) throws {
            var pending = first
            while true {
                if let behind = try? connection.readRequest(timeout: 0.3) {
                    count.withLock { $0 += 1 }
                    try connection.write(echo(pending))
                    pending = behind
                    continue
                }
                try connection.write(echo(pending))
                pending = try connection.readRequest(timeout: 10)
            }
        }

        @Test func requestsAreWrittenBeforeTheirPredecessorsAreAnsweredAndAnswersMayArriveTogether() throws {
            let harness = Self.harness()
            let readBeforeAnswering = Mutex(0)
            let server = try ScriptedServer { connection in
                // The first exchange shows the server speaks HTTP/1.1 and keeps the connection.
                let warm = try connection.readRequest()
                try connection.write(Self.echo(warm))
                // Four requests arrive before any answer: they can only have been pipelined.
                var requests: [ScriptedRequest] = []
                for _ in 0..<4 { requests.append(try connection.readRequest()) }
                readBeforeAnswering.withLock { $0 = requests.count }
                // All four answers in one write: the client splits them by framing.
                try connection.write(requests.map { Self.echo($0) }.joined())
                try connection.serveKeepAlive { Self.echo($0) }
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).text == "answer to /warm")
            let outcomes = Self.fetchAll(harness, (1...4).map { Self.request(base + "/\($0)") })
            for (index, outcome) in outcomes.enumerated() {
                #expect(outcome.error == nil)
                #expect(outcome.text == "answer to /\(index + 1)")
                #expect(outcome.calls == 1)
            }
            #expect(readBeforeAnswering.withLock { $0 } == 4)
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        @Test func pipelinedWritesThatWaitForTheSocketFinishInOrder() throws {
            // Sixty-four PUTs of 60 KiB each, pipelined to a server that reads nothing for a while:
            // the socket's buffers fill, so the writes finish later, one by one, each its own
            // request's. Every answer arrives on the one connection.
            let harness = Self.harness(depth: 64)
            let body = String(repeating: "b", count: 60 * 1024)
            let server = try ScriptedServer { connection in
                let warm = try connection.readRequest()
                try connection.write(Self.echo(warm))
                connection.pause(0.5)
                try connection.serveKeepAlive { request in
                    ScriptedResponse.text("\(request.target) \(request.body.count)")
                }
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).error == nil)
            let requests = (1...64).map { index -> Request in
                var request = Self.request(base + "/\(index)", method: .put)
                request.body = Data(body.utf8)
                return request
            }
            let outcomes = Self.fetchAll(harness, requests)
            #expect(outcomes.map(\.text) == (1...64).map { "/\($0) \(body.count)" })
            // Each write was its own request's: the connection is still in step, and kept.
            #expect(harness.fetch(Self.request(base + "/after")).text == "/after 0")
            #expect(server.acceptedCount == 1)
            server.stop()
            harness.finish()
        }

        @Test func requestsLeftUnansweredByAnAnnouncedCloseAreSentAgain() throws {
            let harness = Self.harness()
            let server = try ScriptedServer { connection in
                let first = try connection.readRequest()
                if first.target != "/warm" {
                    // A later connection: a plain keep-alive server.
                    try connection.write(Self.echo(first))
                    try connection.serveKeepAlive { Self.echo($0) }
                    return
                }
                try connection.write(Self.echo(first))
                var requests: [ScriptedRequest] = []
                for _ in 0..<4 { requests.append(try connection.readRequest()) }
                // Two answers, the second saying the connection ends (a keep-alive request
                // limit, as nginx's keepalive_requests): the other two go unanswered.
                try connection.write(Self.echo(requests[0]) + Self.echo(requests[1], [("Connection", "close")]))
                connection.close()
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).error == nil)
            let outcomes = Self.fetchAll(harness, (1...4).map { Self.request(base + "/\($0)") })
            for (index, outcome) in outcomes.enumerated() {
                #expect(outcome.error == nil)
                #expect(outcome.text == "answer to /\(index + 1)")
            }
            #expect(server.acceptedCount == 2)
            server.stop()
            harness.finish()
        }

        @Test func anOriginThatBreaksOffPipelinedExchangesGetsNoMore() throws {
            let harness = Self.harness()
            // How many requests each later connection had in hand before its first answer.
            let pipelinedLater = Mutex(0)
            let server = try ScriptedServer { connection in
                let first = try connection.readRequest()
                if first.target == "/warm" {
                    try connection.write(Self.echo(first))
                    let next = try connection.readRequest()
                    _ = try connection.readRequest()
                    // One answer, then the connection drops without a word: a server that
                    // does not handle pipelining.
                    try connection.write(Self.echo(next))
                    connection.close()
                    return
                }
                try Self.serveCountingPipelined(connection, first: first, count: pipelinedLater)
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).error == nil)
            let broken = Self.fetchAll(harness, [Self.request(base + "/a"), Self.request(base + "/b")])
            #expect(broken.map(\.text) == ["answer to /a", "answer to /b"])
            #expect(broken.allSatisfy { $0.error == nil })
            // From now on the origin's requests wait for a connection of their own.
            let later = Self.fetchAll(harness, (1...3).map { Self.request(base + "/later\($0)") })
            #expect(later.map(\.text) == (1...3).map { "answer to /later\($0)" })
            #expect(pipelinedLater.withLock { $0 } == 0)
            server.stop()
            harness.finish()
        }

        @Test func aRequestCancelledBeforeItsTurnLetsThoseBeforeItFinishAndThoseAfterItMove() throws {
            let harness = Self.harness()
            let cancelled = DispatchSemaphore(value: 0)
            let server = try ScriptedServer { connection in
                let first = try connection.readRequest()
                guard first.target == "/warm" else {
                    try connection.write(Self.echo(first))
                    try connection.serveKeepAlive { Self.echo($0) }
                    return
                }
                try connection.write(Self.echo(first))
                let requests = try (0..<3).map { _ in try connection.readRequest() }
                // The test cancels /2 while /1 is still unanswered.
                _ = cancelled.wait(timeout: .now() + 10)
                try connection.write(Self.echo(requests[0]))
                _ = connection.waitForPeerClose(timeout: 10)
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).error == nil)
            let tasks = (1...3).map { harness.makeTask(Self.request(base + "/\($0)")) }
            for (task, _) in tasks { task.resume() }
            // All three are on the wire once the server holds them; then /2 is cancelled.
            #expect(waitUntil(timeout: 10) { server.acceptedCount == 1 && harness.manager.openConnectionCount == 1 })
            Thread.sleep(forTimeInterval: 0.2)
            tasks[1].task.cancel()
            cancelled.signal()
            let outcomes = tasks.map { $0.wait(20) }
            #expect(outcomes[0]?.text == "answer to /1")
            #expect(outcomes[1]?.code == .cancelled)
            #expect(outcomes[2]?.text == "answer to /3")
            #expect(outcomes.allSatisfy { $0?.calls == 1 })
            #expect(server.acceptedCount == 2)
            server.stop()
            harness.finish()
        }

        @Test func requestsThatMayNotBePipelinedWaitForTheirTurn() throws {
            let harness = Self.harness()
            let pipelined = Mutex(0)
            let server = try ScriptedServer { connection in
                try Self.serveCountingPipelined(connection, first: try connection.readRequest(), count: pipelined)
            }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(harness.fetch(Self.request(base + "/warm")).error == nil)
            // Without the flag, and a POST with it: each waits for the one before to end.
            let outcomes = Self.fetchAll(harness, [Self.request(base + "/1", pipelined: false), Self.request(base + "/2", pipelined: false),
                                                   Self.request(base + "/3", method: .post), Self.request(base + "/4", method: .post)])
            #expect(outcomes.map(\.text) == (1...4).map { "answer to /\($0)" })
            #expect(pipelined.withLock { $0 } == 0)
            server.stop()
            harness.finish()
        }
    }

    /// Pipelining against nginx, which says in `$pipe` whether it read a request as pipelined
    /// ("p": found already read behind the one before) or not ("."): many requests over two
    /// connections, requests queued behind slow responses, and a keep-alive limit that ends
    /// connections with requests still unanswered.
    @Suite(.tags(.nginx)) struct PipeliningNginx {
        private static func fetchPipelined(_ url: String, count: Int, _ harness: ClientHarness) -> [Outcome?] {
            let tasks = (0..<count).map { index -> (task: DataTask, wait: (Double) -> Outcome?) in
                var request = ClientHarness.request(url + "?n=\(index)", timeout: 20)
                request.httpShouldUsePipelining = true
                return harness.makeTask(request)
            }
            for (task, _) in tasks { task.resume() }
            return tasks.map { $0.wait(30) }
        }

        private static func harness(connections: Int = 2) -> ClientHarness {
            ClientHarness {
                $0.maximumConnectionsPerHost = connections
                $0.pipelineDepth = 8
            }
        }

        /// Whether nginx read requests as pipelined: on one connection, six small requests are
        /// pipelined behind an 8 MiB download, all written while nginx still sends it, so when
        /// it is done it reads them in one go and finds all but the first already read.
        private static func pipelinedBehindADownload(_ nginx: NginxServer, _ harness: ClientHarness) -> Bool {
            // First, an exchange that shows the connection speaks HTTP/1.1 and keeps alive (and
            // tells the pool that pipelining is wanted: until a request that allows it has
            // waited, requests that find an idle connection are not asked).
            #expect(fetchPipelined(nginx.baseURL + "/pipe", count: 1, harness).first??.status == 200)
            let requests = ["/large-8m"] + (0..<6).map { "/pipe?n=\($0)" }
            let tasks = requests.map { path -> (task: DataTask, wait: (Double) -> Outcome?) in
                var request = ClientHarness.request(nginx.baseURL + path, timeout: 20)
                request.httpShouldUsePipelining = true
                return harness.makeTask(request)
            }
            for (task, _) in tasks { task.resume() }
            let outcomes = tasks.map { $0.wait(30) }
            #expect(outcomes[0]?.data?.count == NginxServer.large8MSize)
            #expect(outcomes.dropFirst().allSatisfy { $0?.text == "p\n" || $0?.text == ".\n" })
            return outcomes.dropFirst().contains { $0?.text == "p\n" }
        }

        @Test func manyPipelinedRequestsOverTwoConnections() throws {
            let nginx = try TestServers.nginx()
            let harness = Self.harness()
            // Two requests first: each connection shows it speaks HTTP/1.1 and keeps alive.
            #expect(Self.fetchPipelined(nginx.baseURL + "/pipe", count: 2, harness).allSatisfy { $0?.status == 200 })
            let outcomes = Self.fetchPipelined(nginx.baseURL + "/pipe", count: 200, harness)
            #expect(outcomes.allSatisfy { $0?.status == 200 && $0?.calls == 1 })
            #expect(outcomes.allSatisfy { $0?.text == "p\n" || $0?.text == ".\n" })
            #expect(harness.manager.openConnectionCount <= 2)
            harness.finish()
        }

        @Test func requestsWrittenBehindADownloadArrivePipelined() throws {
            let nginx = try TestServers.nginx()
            let harness = Self.harness(connections: 1)
            #expect(Self.pipelinedBehindADownload(nginx, harness))
            #expect(harness.manager.openConnectionCount == 1)
            harness.finish()
        }

        @Test func aKeepAliveLimitLeavesRequestsUnansweredAndTheyAreSentAgain() throws {
            let nginx = try TestServers.nginx()
            let harness = Self.harness(connections: 1)
            // nginx ends each connection after 20 requests with `Connection: close`, with more
            // pipelined behind, every time; its close may reset the connection and lose answers
            // already sent. Whatever was left unanswered is sent again.
            let outcomes = Self.fetchPipelined(nginx.baseURL + "/pipe-limited", count: 200, harness)
            #expect(outcomes.allSatisfy { $0?.status == 200 && $0?.error == nil && $0?.calls == 1 })
            // A limit reached after pipelined answers is no misbehaviour: the origin still
            // gets pipelined requests.
            #expect(Self.pipelinedBehindADownload(nginx, harness))
            harness.finish()
        }
    }
}
