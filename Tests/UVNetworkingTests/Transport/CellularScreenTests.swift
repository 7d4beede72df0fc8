import Foundation
import Testing
@testable import UVNetworking

/// The screen a connection that refuses cellular passes between DNS and connect: which
/// addresses it keeps, bound to which interface, and when it denies them all.
@Suite(.tags(.unit)) struct CellularScreenTests {
    typealias Fixture = CellularRoutingTests

    private let v4 = SocketAddress(numericHost: "203.0.113.9", port: 80)!
    private let v6 = SocketAddress(numericHost: "2001:db8:9::1", port: 80)!
    private let local = SocketAddress(numericHost: "127.0.0.1", port: 80)!

    private func outcome(_ addresses: [SocketAddress], routes: [NetlinkRoute],
                         canBind: (SocketAddress, String) -> Int32 = { _, _ in 0 }) -> CellularScreen.Outcome {
        var table = Fixture.table(routes: routes)
        table.insert(Fixture.route([127, 0, 0, 1], 32, table: Netlink.Table.local, type: Netlink.RouteType.local, via: [1]))
        return CellularScreen.outcome(for: addresses, in: table, kind: Fixture.kind, canBind: canBind)
    }

    /// IPv4 over cellular with Ethernet as the way round; IPv6 over cellular alone.
    private var mixedRoutes: [NetlinkRoute] {
        [Fixture.route(priority: 100, via: [2]), Fixture.route(priority: 200, via: [3]),
         Fixture.route(family: Fixture.inet6, via: [2])]
    }

    @Test func addressesOnlyCellularReachesAreLeftOut() {
        #expect(outcome([v6, v4, local], routes: mixedRoutes) == .connect([v4, local], interfaces: ["eth0", nil]))
    }

    @Test func noAddressLeftDeniesNamingEach() {
        let result = outcome([v6], routes: mixedRoutes)
        #expect(result == .denied(reason: "2001:db8:9::1: only cellular interfaces (wwan0, wwan1) have a route to it"))
    }

    @Test func aRerouteThatCannotBindIsDenied() {
        let result = outcome([v4], routes: mixedRoutes) { _, _ in -1 }  // EPERM
        guard case .denied(let reason) = result else {
            Issue.record("expected a denial, got \(result)")
            return
        }
        #expect(reason.hasPrefix("203.0.113.9: its route is cellular, and a socket cannot be bound to eth0: EPERM"), "\(reason)")
    }

    @Test func aPinThatCannotBindConnectsUnbound() {
        let routes = [Fixture.route(priority: 100, via: [3]), Fixture.route(priority: 200, via: [2])]
        #expect(outcome([v4], routes: routes) == .connect([v4], interfaces: ["eth0"]))
        #expect(outcome([v4], routes: routes) { _, _ in -1 } == .connect([v4], interfaces: [nil]))
    }

    @Test func eachInterfaceIsClassifiedOnce() {
        var asked: [String] = []
        var table = Fixture.table(routes: mixedRoutes)
        table.insert(Fixture.route([127, 0, 0, 1], 32, table: Netlink.Table.local, type: Netlink.RouteType.local, via: [1]))
        _ = CellularScreen.outcome(for: [v4, v4, v6], in: table, kind: { asked.append($0); return Fixture.kind($0) }, canBind: { _, _ in 0 })
        #expect(asked.count == Set(asked).count, "\(asked)")
    }

    @Test func theErrorIsApplesDataNotAllowed() {
        let error = NetworkingError(TransportError.cellularAccessDenied(host: "example.test", reason: "why"))
        #expect(error.code == .cellularAccessDenied)
        #expect(error.kind == .transport)
        #expect(error.nsError.domain == NSURLErrorDomain && error.nsError.code == -1020)
        #expect(error.detail == "cannot reach example.test without a cellular interface, which the request does not allow: why")
    }
}
