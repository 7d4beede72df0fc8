import Foundation
import LoopbackHTTPServer
import Testing
@testable import UVNetworking

/// `Request.allowsCellularAccess` as a value: its default, equality, what the serializer gives
/// its requests, and the pool key that keeps connections refusing cellular apart.
@Suite(.tags(.unit)) struct RequestCellularAccessTests {
    private let url = URL(string: "http://example.test/a")!

    @Test func itIsAllowedByDefaultAndAChangeMakesACopyDiffer() {
        let original = Request(url: url)
        #expect(original.allowsCellularAccess)
        var copy = original
        copy.allowsCellularAccess = false
        #expect(copy != original)
        var twin = Request(url: url)
        twin.allowsCellularAccess = false
        #expect(twin == copy)
    }

    @Test func theSerializerAppliesItOnlyWhenSet() throws {
        let serializer = HTTPRequestSerializer()
        #expect(serializer.allowsCellularAccess == nil)
        var refusing = Request(url: url)
        refusing.allowsCellularAccess = false
        #expect(try serializer.serialize(refusing, parameters: nil).allowsCellularAccess == false)
        #expect(try serializer.request(method: .get, urlString: "http://example.test/", parameters: nil).allowsCellularAccess)
        serializer.allowsCellularAccess = false
        #expect(try serializer.request(method: .get, urlString: "http://example.test/", parameters: nil).allowsCellularAccess == false)
        #expect(try JSONRequestSerializer().serialize(refusing, parameters: ["a": 1]).allowsCellularAccess == false)
        serializer.allowsCellularAccess = true
        #expect(try serializer.serialize(refusing, parameters: nil).allowsCellularAccess)
    }

    @Test func itIsPartOfThePoolKey() throws {
        var refusing = Request(url: url)
        refusing.allowsCellularAccess = false
        let allowed = try PreparedRequest(Request(url: url), additionalFields: [])
        let refused = try PreparedRequest(refusing, additionalFields: [])
        #expect(allowed.origin.allowsCellularAccess && !refused.origin.allowsCellularAccess)
        #expect(allowed.origin != refused.origin)
        #expect(allowed.bytes == refused.bytes)
    }
}

/// Requests refusing cellular on loopback: a local address never leaves by an interface, so
/// they succeed, on connections of their own, and leave nothing open.
@Suite(.tags(.loopback)) struct CellularAccessLoopbackTests {
    @Test func aRequestRefusingCellularReachesALocalServerOnItsOwnConnection() async throws {
        let server = LoopbackHTTPServer()
        let port = try server.start()
        defer { server.stop() }
        let harness = ClientHarness()
        defer { harness.finish() }
        let url = URL(string: "http://127.0.0.1:\(port)/items/3")!
        var refusing = Request(url: url)
        refusing.allowsCellularAccess = false
        let first = try await harness.manager.data(for: Request(url: url))
        #expect(first.response.status.code == 200)
        let second = try await harness.manager.data(for: refusing)
        #expect(second.response.status.code == 200)
        // The kept-alive connection of the first is not the second's.
        #expect(second.metrics?.transactions.first?.isReusedConnection == false)
        let third = try await harness.manager.data(for: refusing)
        #expect(third.metrics?.transactions.first?.isReusedConnection == true)
    }
}
