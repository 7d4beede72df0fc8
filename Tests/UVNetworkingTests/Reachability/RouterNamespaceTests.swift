import Foundation
import Glibc
import Testing

/// The namespaces the reachability tests change: wired and routed as they expect, each change
/// leaving the routing table as a real machine's would be, torn down whatever happens, and
/// what a crashed run left swept away.
@Suite(.tags(.namespace), .serialized, .enabled(if: RouterNamespace.isAvailable, "\(RouterNamespace.unavailableReason ?? "")"))
struct RouterNamespaceTests {
    private func defaultRoutes(_ namespace: RouterNamespace) throws -> String {
        try namespace.ip(.client, "route", "show", "default") + namespace.ip(.client, "-6", "route", "show", "default")
    }

    private func namespaces() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
    }

    @Test func clientReachesTheRouterAndRoutesByIt() throws {
        let namespace = try RouterNamespace()
        let routes = try defaultRoutes(namespace)
        #expect(routes.contains("default via 192.0.2.1 dev uvr0"), "\(routes)")
        #expect(routes.contains("default via 2001:db8::1 dev uvr0"), "\(routes)")
        // Anything off the subnet leaves by the router.
        let get = try namespace.ip(.client, "route", "get", "198.51.100.7")
        #expect(get.contains("via 192.0.2.1 dev uvr0 src 192.0.2.2"), "\(get)")
        let server = try NamespaceProcess.probe(namespace, .router, "serve", [RouterNamespace.routerIPv4, "8080"])
        #expect(server.waitForLine(timeout: 20) { $0.hasPrefix("listening ") } != nil, "\(server.text)")
        // curl, a client that is not ours: this checks the namespaces, not the library.
        let status = try namespace.run(in: .client, ["/usr/bin/curl", "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}",
                                                      "http://192.0.2.1:8080/items/1"])
        #expect(status == "200", "\(status)")
        #expect(server.finish() == 0, "\(server.text)")
    }

    @Test func linkUpBringsTheDefaultRoutesBackAsADHCPClientWould() throws {
        let namespace = try RouterNamespace()
        try namespace.setClientLink(up: false)
        #expect(try defaultRoutes(namespace).isEmpty, "the kernel drops both default routes with the link")
        try namespace.setClientLink(up: true)
        let routes = try defaultRoutes(namespace)
        #expect(routes.contains("via 192.0.2.1") && routes.contains("via 2001:db8::1"), "\(routes)")
        try namespace.flapClientLink()
        #expect(try defaultRoutes(namespace) == routes)
        // Addresses survive a downed link (IPv6 too: keep_addr_on_down).
        let addresses = try namespace.ip(.client, "addr", "show", "dev", "uvr0")
        #expect(addresses.contains("192.0.2.2/24") && addresses.contains("2001:db8::2/64"), "\(addresses)")
    }

    @Test func carrierLossKeepsRoutesButMarksTheLinkDown() throws {
        let namespace = try RouterNamespace()
        try namespace.setRouterLink(up: false)
        #expect(waitUntil(timeout: 5) { (try? namespace.ip(.client, "link", "show", "uvr0"))?.contains("NO-CARRIER") == true })
        #expect(try namespace.ip(.client, "route", "show", "default").contains("linkdown"))
        try namespace.setRouterLink(up: true)
        #expect(waitUntil(timeout: 5) { (try? namespace.ip(.client, "link", "show", "uvr0"))?.contains("LOWER_UP") == true })
    }

    @Test func removingTheAddressFlushesTheIPv4DefaultRoute() throws {
        let namespace = try RouterNamespace()
        try namespace.removeClientAddresses()
        #expect(try namespace.ip(.client, "route", "show", "default").isEmpty)
        try namespace.restoreClientAddresses()
        let routes = try defaultRoutes(namespace)
        #expect(routes.contains("via 192.0.2.1") && routes.contains("via 2001:db8::1"), "\(routes)")
    }

    @Test func tearDownRemovesBothNamespacesAndTheHostsFolder() throws {
        let namespace = try RouterNamespace(hosts: RouterNamespace.hostsWithRouter)
        let names = [namespace.client, namespace.router]
        #expect(Set(names).isSubset(of: namespaces()))
        #expect(FileManager.default.fileExists(atPath: "/etc/netns/\(namespace.client)/hosts"))
        let hosts = try namespace.run(in: .client, ["/bin/cat", "/etc/hosts"])
        #expect(hosts.contains("192.0.2.1 router.test"))
        namespace.tearDown()
        namespace.tearDown()
        #expect(Set(names).isDisjoint(with: namespaces()))
        #expect(!FileManager.default.fileExists(atPath: "/etc/netns/\(namespace.client)"))
    }

    @Test func sweepRemovesWhatADeadRunLeftAndNothingOfALiveOne() throws {
        // A pid that is surely gone: a child that has exited and been reaped.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let stale = "uvr-client-\(child.processIdentifier)-1"
        try RouterNamespace.run([RouterNamespace.ip!, "netns", "add", stale])
        let live = try RouterNamespace()
        RouterNamespace.sweepStale()
        #expect(!namespaces().contains(stale))
        #expect(namespaces().contains(live.client) && namespaces().contains(live.router))
    }
}
