import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct RequestBodyTests {
    private final class Empty: RequestBodyStream {
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
    }

    @Test func bodyAndBodyStreamReplaceEachOther() {
        var request = Request(url: URL(string: "http://h/")!, method: .post, body: Data("abc".utf8))
        #expect(request.expectedBodyLength == 3)
        request.bodyStream = StreamedBody(length: 10) { Empty() }
        #expect(request.body == nil)
        #expect(request.bodyStream?.length == 10)
        #expect(request.expectedBodyLength == 10)
        request.bodyStream = StreamedBody(length: nil) { Empty() }
        #expect(request.expectedBodyLength == -1)
        request.body = Data("x".utf8)
        #expect(request.bodyStream == nil)
        #expect(request.body == Data("x".utf8))
        request.body = nil
        #expect(request.expectedBodyLength == 0)
    }

    @Test func streamedBodiesAreEqualOnlyAsCopies() {
        let body = StreamedBody(length: 1) { Empty() }
        var a = Request(url: URL(string: "http://h/")!, method: .put)
        a.bodyStream = body
        var b = a
        #expect(a == b)
        b.bodyStream = StreamedBody(length: 1) { Empty() }
        #expect(a != b)
        b.bodyStream = body
        #expect(a == b)
    }

    @Test func theFactoryMakesANewStreamEachTime() throws {
        let body = StreamedBody(length: nil) { Empty() }
        #expect(try body.makeStream() !== body.makeStream())
    }

    @Test func inputStreamAdapterReadsToTheEndAndCloses() throws {
        let data = Data((0..<100_000).map { UInt8($0 % 251) })
        let input = InputStream(data: data)
        let stream = InputStreamBodyStream(input)
        var read: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 { break }
            read += buffer[0..<count]
        }
        #expect(read == Array(data))
        #expect(input.streamStatus == .closed)
        // After its end it keeps saying so.
        #expect(try buffer.withUnsafeMutableBytes { try stream.read(into: $0) } == 0)
    }

    @Test func inputStreamErrorsAreThrown() {
        let missing = InputStream(fileAtPath: "/nonexistent/uvnetworking-test")!
        let stream = InputStreamBodyStream(missing)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(throws: (any Error).self) { _ = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) } }
    }
}
