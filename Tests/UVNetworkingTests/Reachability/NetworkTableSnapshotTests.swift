import Testing
@testable import UVNetworking

/// The one-shot, blocking read of the kernel's tables that cellular routing decides on.
@Suite(.tags(.loopback)) struct NetworkTableSnapshotTests {
    @Test func itReadsThisMachinesLoopbackAndRoutesLocalAddressesOverIt() throws {
        let table = try NetworkTableSnapshot.read().get()
        let found = table.links.values.first { $0.isLoopback }
        let loopback = try #require(found)
        #expect(table.addresses.values.contains { $0.index == loopback.index && $0.address == [127, 0, 0, 1] })
        #expect(RouteLookup.verdict(for: IPAddressBytes(family: Netlink.Family.inet, bytes: [127, 0, 0, 1]), in: table)
            == .reachable(interfaceIndex: loopback.index))
        // Local addresses never leave: the decision leaves such a connection as it is.
        #expect(CellularRouting.decide(for: IPAddressBytes(family: Netlink.Family.inet, bytes: [127, 0, 0, 1]), in: table) { _ in .cellular }
            == .unbound)
    }
}
