import ArgumentParser
import BenchSupport
import Foundation
import Histogram
import UVNetworking

#if canImport(Glibc)
import Glibc
#endif

/// The HTTPS modes (issue #4): keep-alive GETs side by side with wrk over TLS, one large download
/// against curl over HTTPS and plain HTTP, and handshakes per second with and without session
/// resumption. One nginx (HTTP and HTTPS ports) serves them all.
extension UVBench {
    /// One download of each client over one scheme.
    struct DownloadRound {
        var scheme: String
        var curl: DownloadResult
        var curlNginxCPU: Double?
        var ours: DownloadResult
        var oursNginxCPU: Double?
    }

    /// One round of the handshake loop.
    struct HandshakeRound {
        var resumes: Bool
        var result: LoadResult
        var cpu: CPUTime
        var nginxCPU: Double?
        /// What nginx logged for exactly this round's requests.
        var log: HandshakeLogSummary
    }

    var downloadBytes: Int64? { downloadGib > 0 ? Int64(downloadGib * 1_073_741_824) : nil }

    /// A session that trusts the bench's CA; `resumes` sets TLS session resumption.
    func tlsSession(_ server: NginxServer, connections: Int, resumes: Bool = true) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = connections
        configuration.tls.additionalTrustedCAFiles = server.certificates.map { [$0.caFile] } ?? []
        configuration.tls.resumesSessions = resumes
        return configuration
    }

    func runTLS() throws -> (markdown: String, invalid: InvalidRun?) {
        let server = try NginxServer(executable: nginx, https: true, largeFileBytes: downloadBytes)
        defer { server.stop() }
        say("")
        say("uvbench: HTTPS: nginx (1 worker, pid \(server.masterPID)) on \(server.httpsURL!.absoluteString) "
            + "(TLS 1.2 and 1.3, a CA made for this run) and \(server.url.absoluteString)")
        var report = TLSReport(seconds: seconds, downloadBytes: downloadBytes ?? 0, handshakeConcurrency: handshakeConcurrency)
        var invalid: InvalidRun?
        if https {
            let (keepAlive, failure) = try runHTTPSKeepAlive(server)
            report.keepAlive = keepAlive
            invalid = invalid ?? failure
        }
        if let downloadBytes {
            report.downloads = try runDownloads(server, bytes: downloadBytes)
        }
        if handshakes {
            report.handshakes = try runHandshakes(server)
            invalid = invalid ?? report.handshakeCheckFailure.map { InvalidRun(firstError: $0, errors: 1) }
            invalid = invalid ?? report.handshakes.lazy.filter { !$0.result.isValid }.first
                .map { InvalidRun(firstError: $0.result.firstError, errors: $0.result.errors) }
        }
        say("")
        say(report.text())
        return (report.markdown(), invalid)
    }

    // MARK: Keep-alive

    private func runHTTPSKeepAlive(_ server: NginxServer) throws -> (Report, InvalidRun?) {
        let url = server.httpsURL!
        say("")
        say("== HTTPS keep-alive: wrk -t1 -c\(connections) vs UVNetworking on \(url.absoluteString)")
        let suites = try negotiatedSuites(server)
        let load = ClosedLoopLoad(request: Request(url: url), configuration: tlsSession(server, connections: connections))
        let (rounds, latency) = try alternateRounds(server: server, url: url, load: load)
        let allocations = allocRequests > 0 ? countAllocations(load) : nil
        load.shutdown()
        var report = Report(rounds: rounds, latency: latency, allocations: allocations, connections: connections,
                            seconds: seconds, goal: httpsGoal, server: server)
        report.title = "HTTPS keep-alive GET"
        report.detail = "TLS as nginx logged it: UVNetworking \(suites.ours), wrk \(suites.wrk); "
            + "UVNetworking verifies the chain against a CA made for the run (`additionalTrustedCAFiles`), wrk verifies nothing."
        say("")
        say(report.text())
        return (report, Self.invalidRun(rounds))
    }

    /// The protocol, cipher and group each client negotiates, from nginx's log of their
    /// requests to /handshake (one from UVNetworking, one second of wrk on one connection).
    private func negotiatedSuites(_ server: NginxServer) throws -> (ours: String, wrk: String) {
        let log = HandshakeLog(path: server.handshakeLogFile)
        let url = server.httpsURL!.appendingPathComponent("handshake")
        var start = log.end()
        let probe = ClosedLoopLoad(request: Request(url: url), configuration: tlsSession(server, connections: 1))
        let result = probe.run(concurrency: 1, requests: 1, recordLatency: false)
        probe.shutdown()
        guard result.isValid else { throw InvalidRun(firstError: result.firstError, errors: result.errors) }
        usleep(50_000)
        let ours = log.summary(from: start).mainSuite ?? "?"
        start = log.end()
        _ = try Wrk.run(executable: wrk, url: url, connections: 1, seconds: 1)
        let wrk = log.summary(from: start).mainSuite ?? "?"
        say("uvbench: negotiated: UVNetworking \(ours); wrk \(wrk)")
        return (ours, wrk)
    }

    // MARK: Downloads

    private func runDownloads(_ server: NginxServer, bytes: Int64) throws -> [DownloadRound] {
        let path = NginxServer.largeFilePath
        let https = server.httpsURL!.appendingPathComponent(String(path.dropFirst()))
        let http = server.url.appendingPathComponent(String(path.dropFirst()))
        let caFile = server.certificates!.caFile
        say("")
        say("== downloads: \(bytes) bytes, curl vs UVNetworking (bytes(for:), chunks counted and dropped), "
            + "HTTPS then HTTP, \(downloadRepeats) of each")
        server.warmLargeFile()
        // curl --cacert trusts that file only; so does UVNetworking here, which also keeps the
        // system store's loading (tens of ms, once per session) out of a per-download figure.
        var configuration = tlsSession(server, connections: 1)
        configuration.tls.trustsSystemCAs = false
        var rounds: [DownloadRound] = []
        for index in 1...downloadRepeats {
            for (scheme, url) in [("HTTPS", https), ("HTTP", http)] {
                let nginxBefore = server.workerPID.flatMap(CPUTime.ofProcess)
                let curl = try CurlDownload.run(url: url, caFile: scheme == "HTTPS" ? caFile : nil)
                let nginxBetween = server.workerPID.flatMap(CPUTime.ofProcess)
                let ours = try StreamedDownload.run(url: url, configuration: configuration)
                let nginxAfter = server.workerPID.flatMap(CPUTime.ofProcess)
                guard curl.bytes == bytes else { throw BenchError("curl got \(curl.bytes) of \(bytes) bytes from \(url)") }
                guard ours.bytes == bytes else {
                    throw InvalidRun(firstError: "UVNetworking got \(ours.bytes) of \(bytes) bytes from \(url)", errors: 1)
                }
                rounds.append(DownloadRound(scheme: scheme, curl: curl,
                                            curlNginxCPU: zip2(nginxBetween, nginxBefore).map { ($0 - $1).total },
                                            ours: ours, oursNginxCPU: zip2(nginxAfter, nginxBetween).map { ($0 - $1).total }))
                say("  \(index) \(scheme.padding(toLength: 5, withPad: " ", startingAt: 0))"
                    + String(format: " curl %7.0f MB/s   UVNetworking %7.0f MB/s   ratio %.3f", curl.megabytesPerSecond,
                             ours.megabytesPerSecond, ours.megabytesPerSecond / curl.megabytesPerSecond))
            }
        }
        return rounds
    }

    /// UVNetworking's downloads alone (`--ours-only --download-gib N [--https]`, or `--url URL
    /// [--cacert FILE]` of a `--serve-only` server so that only this process is measured), for
    /// profilers.
    func runOursOnlyDownloads() throws {
        let bytes = downloadBytes!
        var server: NginxServer?
        var configuration = SessionConfiguration()
        let url: URL
        if let given = self.url {
            guard let parsed = URL(string: given) else { throw ValidationError("bad --url") }
            url = parsed
            configuration.tls.additionalTrustedCAFiles = cacert.map { [$0] } ?? []
        } else {
            server = try NginxServer(executable: nginx, https: https, largeFileBytes: bytes)
            server!.warmLargeFile()
            url = (https ? server!.httpsURL! : server!.url).appendingPathComponent(String(NginxServer.largeFilePath.dropFirst()))
            configuration = tlsSession(server!, connections: 1)
        }
        defer { server?.stop() }
        // Like curl --cacert: the bench's CA only (see runDownloads).
        configuration.tls.trustsSystemCAs = false
        say("uvbench: UVNetworking only, \(downloadRepeats) downloads of \(bytes) bytes from \(url.absoluteString) (pid \(getpid()))")
        for _ in 1...downloadRepeats {
            let result = try StreamedDownload.run(url: url, configuration: configuration)
            guard result.bytes == bytes else { throw InvalidRun(firstError: "got \(result.bytes) of \(bytes) bytes", errors: 1) }
            say(String(format: "%.0f MB/s, CPU user %.2f s sys %.2f s, %d chunks, peak RSS %d KiB", result.megabytesPerSecond,
                       result.cpu.user / 1e6, result.cpu.system / 1e6, result.chunks ?? 0, result.peakResidentKiB ?? 0))
        }
    }

    // MARK: Handshakes

    /// `Connection: close`: nginx closes after each response, so every request opens a new
    /// connection and pays a handshake; nginx's log shows it ($connection_requests = 1).
    func handshakeRequest(_ url: URL) -> Request {
        var request = Request(url: url)
        request.setValue("close", forHTTPHeaderField: "Connection")
        return request
    }

    /// UVNetworking's handshake loop alone (`--ours-only --handshakes [--no-resumption]
    /// [--url https://HOST:PORT/handshake --cacert FILE]`), for profilers.
    func runOursOnlyHandshakes() throws {
        var server: NginxServer?
        var configuration: SessionConfiguration
        let url: URL
        if let given = self.url {
            guard let parsed = URL(string: given) else { throw ValidationError("bad --url") }
            url = parsed
            configuration = SessionConfiguration()
            configuration.maximumConnectionsPerHost = handshakeConcurrency
            configuration.tls.additionalTrustedCAFiles = cacert.map { [$0] } ?? []
            configuration.tls.resumesSessions = !noResumption
        } else {
            server = try NginxServer(executable: nginx, https: true)
            url = server!.httpsURL!.appendingPathComponent("handshake")
            configuration = tlsSession(server!, connections: handshakeConcurrency, resumes: !noResumption)
        }
        defer { server?.stop() }
        let load = ClosedLoopLoad(request: handshakeRequest(url), configuration: configuration)
        defer { load.shutdown() }
        if warmup > 0 { _ = load.run(concurrency: handshakeConcurrency, seconds: Double(warmup), recordLatency: false) }
        let log = server.map { HandshakeLog(path: $0.handshakeLogFile) }
        let logStart = log?.end() ?? 0
        say("uvbench: UVNetworking only, handshakes, \(handshakeConcurrency) in flight for \(seconds) s, resumption "
            + "\(noResumption ? "off" : "on"), against \(url.absoluteString) (pid \(getpid()))")
        let cpuBefore = CPUTime.ofSelf()
        let result = requests.map { load.run(concurrency: handshakeConcurrency, requests: $0) }
            ?? load.run(concurrency: handshakeConcurrency, seconds: Double(seconds))
        let cpu = CPUTime.ofSelf() - cpuBefore
        usleep(100_000)
        say(String(format: "%.0f handshakes/s, %d requests, %d errors, CPU %.0f µs user + %.0f µs sys per handshake",
                   result.requestsPerSecond, result.completed, result.errors,
                   cpu.user / Double(max(1, result.completed)), cpu.system / Double(max(1, result.completed)))
            + (log.map { log in
                let summary = log.summary(from: logStart)
                return "; nginx: \(summary.requests) requests, \(summary.firstOnConnection) first on their connection, "
                    + "\(summary.resumed) resumed"
            } ?? ""))
        if !result.isValid { throw InvalidRun(firstError: result.firstError, errors: result.errors) }
    }

    private func runHandshakes(_ server: NginxServer) throws -> [HandshakeRound] {
        let url = server.httpsURL!.appendingPathComponent("handshake")
        let request = handshakeRequest(url)
        let n = handshakeConcurrency
        let loads = [true, false].map {
            ($0, ClosedLoopLoad(request: request, configuration: tlsSession(server, connections: n, resumes: $0)))
        }
        defer { loads.forEach { $0.1.shutdown() } }
        let log = HandshakeLog(path: server.handshakeLogFile)
        say("")
        say("== handshakes: \(n) in flight, a new connection per request, with and without resumption, "
            + "\(rounds) rounds x \(seconds) s each, alternating; warm-up \(warmup) s each")
        if warmup > 0 {
            for (_, load) in loads {
                let warm = load.run(concurrency: n, seconds: Double(warmup), recordLatency: false)
                guard warm.isValid else { throw InvalidRun(firstError: warm.firstError, errors: warm.errors) }
            }
        }
        var results: [HandshakeRound] = []
        for index in 1...rounds {
            for (resumes, load) in loads {
                // Let nginx finish logging the previous round's last requests.
                usleep(100_000)
                let logStart = log.end()
                let nginxBefore = server.workerPID.flatMap(CPUTime.ofProcess)
                let cpuBefore = CPUTime.ofSelf()
                let result = load.run(concurrency: n, seconds: Double(seconds))
                let cpu = CPUTime.ofSelf() - cpuBefore
                let nginxAfter = server.workerPID.flatMap(CPUTime.ofProcess)
                usleep(100_000)
                let summary = log.summary(from: logStart)
                results.append(HandshakeRound(resumes: resumes, result: result, cpu: cpu,
                                              nginxCPU: zip2(nginxAfter, nginxBefore).map { ($0 - $1).total }, log: summary))
                say("  round \(index), resumption \(resumes ? "on " : "off"): "
                    + String(format: "%7.0f handshakes/s", result.requestsPerSecond)
                    + (result.errors > 0 ? " (\(result.errors) ERRORS)" : "")
                    + "   nginx log: \(summary.requests) requests, \(summary.firstOnConnection) first on their connection, "
                    + "\(summary.resumed) resumed")
            }
        }
        return results
    }
}
