import Foundation
import Testing
@testable import UVNetworking

/// `Request.networkServiceType` on the wire: a server that reports the TOS (Traffic Class)
/// byte its connection's packets arrived with (Tests/Scripts/tos_report_server.py) sees each
/// type's DSCP; types never share a connection.
@Suite(.tags(.loopback)) struct NetworkServiceTypeTests {
    /// The reporting server, for IPv4 or IPv6.
    final class ReportingServer: @unchecked Sendable {
        let port: Int
        private let process: SupervisedProcess

        init(ipv6: Bool = false) throws {
            let directory = try TestServers.makeTemporaryDirectory(prefix: "uvnetworking-tos")
            let portFile = directory + "/port"
            let script = H2ScriptedServer.scripts.appendingPathComponent("tos_report_server.py").path
            process = try SupervisedProcess.launch(["/usr/bin/python3", script, "--port-file", portFile] + (ipv6 ? ["--ipv6"] : []),
                                                   directory: directory)
            let deadline = monotonicSeconds() + 30
            var found: Int?
            while monotonicSeconds() < deadline, process.exitStatus == nil, found == nil {
                found = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0) }
                if found == nil { usleep(20_000) }
            }
            guard let found else {
                let output = process.output()
                process.release()
                throw TestServerError(description: "tos_report_server.py did not start: \(output)")
            }
            port = found
        }

        func stop() { process.release() }
    }

    private static func request(_ url: String, _ type: NetworkServiceType) -> Request {
        var request = ClientHarness.request(url)
        request.networkServiceType = type
        return request
    }

    @Test func everyTypeIsMarkedWithItsDSCP() throws {
        let server = try ReportingServer()
        defer { server.stop() }
        let harness = ClientHarness()
        for type in NetworkServiceType.allCases {
            let outcome = harness.fetch(Self.request("http://127.0.0.1:\(server.port)/", type))
            #expect(outcome.text == "tos=\(Int(type.dscp) << 2)", "\(type)")
        }
        harness.finish()
    }

    @Test func typesDoNotShareConnections() throws {
        let server = try ReportingServer()
        defer { server.stop() }
        let harness = ClientHarness()
        let url = "http://127.0.0.1:\(server.port)/"
        // Kept-alive default connection first: the background request must not reuse it.
        #expect(harness.fetch(Self.request(url, .default)).text == "tos=0")
        #expect(harness.fetch(Self.request(url, .background)).text == "tos=32")
        #expect(harness.fetch(Self.request(url, .default)).text == "tos=0")
        #expect(harness.fetch(Self.request(url, .voice)).text == "tos=184")
        harness.finish()
    }

    @Test func theSerializerGivesItsTypeToItsRequests() throws {
        let server = try ReportingServer()
        defer { server.stop() }
        let serializer = HTTPRequestSerializer()
        serializer.networkServiceType = .responsiveData
        let request = try serializer.request(method: .get, urlString: "http://127.0.0.1:\(server.port)/", parameters: nil)
        #expect(request.networkServiceType == .responsiveData)
        let harness = ClientHarness()
        #expect(harness.fetch(request).text == "tos=72")
        harness.finish()
    }

    @Test func ipv6ConnectionsCarryItInTheTrafficClass() throws {
        let server = try ReportingServer(ipv6: true)
        defer { server.stop() }
        let harness = ClientHarness()
        #expect(harness.fetch(Self.request("http://[::1]:\(server.port)/", .video)).text == "tos=136")
        harness.finish()
    }
}
