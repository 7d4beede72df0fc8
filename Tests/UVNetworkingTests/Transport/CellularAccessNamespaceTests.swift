import Foundation
import Testing

/// `Request.allowsCellularAccess` against a real routing table: a client namespace with two
/// links to the router, uvr0 marked cellular (DEVTYPE=wwan in a sysfs tree of the test's own)
/// and preferred by its default route, uvr1 Ethernet. The client is the embed probe, run inside
/// the namespace; the server, in the router namespace, prints each connection's source address,
/// which names the link it came by.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct CellularAccessNamespaceTests {
    private static let url = "http://\(RouterNamespace.serverIPv4):8080/"

    /// The namespaces with both links, the server started, and the tree marking uvr0 cellular.
    private func setUp(uvr0Cellular: Bool = true) throws -> (RouterNamespace, NamespaceProcess, String) {
        let namespace = try RouterNamespace()
        try namespace.addSecondLink()
        let server = try NamespaceProcess.probe(namespace, .router, "peer-serve", [RouterNamespace.serverIPv4, "8080"])
        #expect(server.waitForLine(timeout: 20) { $0.hasPrefix("listening ") } != nil, "\(server.text)")
        return (namespace, server, try RouterNamespace.interfaceTree(uvr0Cellular: uvr0Cellular))
    }

    /// Runs the probe's requests, one per mode, in the client; its lines.
    private func fetch(_ namespace: RouterNamespace, root: String, _ modes: [String]) throws -> [String] {
        let output = try namespace.run(in: .client, [EmbedProbe.executable.path, "cellular-fetch", root, Self.url] + modes)
        return output.split(separator: "\n").map(String.init)
    }

    private func peers(_ server: NamespaceProcess, count: Int) -> [String] {
        _ = waitUntil(timeout: 5) { server.lines.filter { $0.hasPrefix("peer ") }.count >= count }
        return server.lines.filter { $0.hasPrefix("peer ") }.map { String($0.dropFirst("peer ".count)) }
    }

    @Test func refusingCellularGoesOutTheOtherLinkWhileOthersTakeTheCellularRoute() throws {
        let (namespace, server, root) = try setUp()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let lines = try fetch(namespace, root: root, ["default", "refused", "allowed"])
        #expect(lines == ["default: status 200", "refused: status 200", "allowed: status 200", "fds ok"], "\(lines)")
        // The default request and the one allowing cellular take the preferred, cellular route;
        // the refusing one leaves by uvr1.
        #expect(peers(server, count: 3) == [RouterNamespace.clientIPv4, RouterNamespace.secondClientIPv4, RouterNamespace.clientIPv4],
                "\(server.text)")
        #expect(server.finish() == 0, "\(server.text)")
    }

    @Test func withOnlyTheCellularRouteARefusingRequestFailsAndNothingLeaves() throws {
        let (namespace, server, root) = try setUp()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try namespace.deleteSecondDefaultRoute()
        let lines = try fetch(namespace, root: root, ["refused", "default"])
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.hasPrefix("refused: error cellularAccessDenied: cannot reach 198.51.100.1 without a cellular interface") == true, "\(lines)")
        #expect(lines.first?.contains("only cellular interfaces (uvr0) have a route to it") == true, "\(lines)")
        #expect(lines.dropFirst().first == "default: status 200", "\(lines)")
        #expect(lines.last == "fds ok")
        // Only the default request reached the server.
        #expect(peers(server, count: 1) == [RouterNamespace.clientIPv4], "\(server.text)")
        #expect(server.finish() == 0, "\(server.text)")
    }

    @Test func whenThePreferredRouteIsNotCellularARefusingRequestKeepsIt() throws {
        let (namespace, server, root) = try setUp(uvr0Cellular: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let lines = try fetch(namespace, root: root, ["refused"])
        #expect(lines == ["refused: status 200", "fds ok"], "\(lines)")
        #expect(peers(server, count: 1) == [RouterNamespace.clientIPv4], "\(server.text)")
        #expect(server.finish() == 0, "\(server.text)")
    }
}
