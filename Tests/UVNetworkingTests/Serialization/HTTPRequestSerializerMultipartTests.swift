import Foundation
import Testing
@testable import UVNetworking

/// multipartFormRequest: parameters first as text fields, then the closure's parts, streamed with
/// an exact length.
@Suite(.tags(.unit)) struct HTTPRequestSerializerMultipartTests {
    /// The whole body the request would stream.
    private func body(of request: Request) throws -> [UInt8] {
        let stream = try #require(request.bodyStream).makeStream()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1000)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    @Test func parametersComeFirstThenParts() throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(
            method: .post, urlString: "http://example.com/upload",
            parameters: ["b": "2", "a": ["x"], "raw": Data([0xFF]), "none": NSNull()]) { form in
                form.appendPart(withForm: Data("last".utf8), name: "z")
            }
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
        let bytes = try body(of: request)
        #expect(Int64(bytes.count) == request.bodyStream?.length)
        let text = String(decoding: bytes, as: UTF8.self)
        let names = text.components(separatedBy: "name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(names == ["a[]", "b", "none", "raw", "z"])
        #expect(text.hasPrefix("--\(boundary)\r\n"))
        #expect(text.hasSuffix("\r\n--\(boundary)--\r\n"))
        #expect(bytes.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A, 0xFF, 0x0D, 0x0A]) != nil)  // Data sent as is
        #expect(text.contains("name=\"none\"\r\n\r\n\r\n--"))                               // NSNull: empty field
    }

    @Test func anEmptyFormSendsNoBody() throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(method: .post, urlString: "http://example.com/") { _ in }
        #expect(request.bodyStream == nil && request.body == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func theClosuresErrorIsThrown() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
        #expect(throws: NetworkingError.self) {
            _ = try HTTPRequestSerializer().multipartFormRequest(method: .post, urlString: "http://example.com/") { form in
                try form.appendPart(withFileURL: missing, name: "file")
            }
        }
    }

    @Test func theBodyCanBeReadAgainForARetry() throws {
        let request = try HTTPRequestSerializer().multipartFormRequest(method: .put, urlString: "http://example.com/",
                                                                      parameters: ["k": "v"]) { _ in }
        #expect(try body(of: request) == body(of: request))
    }
}
