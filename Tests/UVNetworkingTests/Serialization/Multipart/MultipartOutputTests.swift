import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct MultipartOutputTests {
    @Test func writeBodyWritesTheStreamedBytes() throws {
        let directory = try MultipartTempDirectory()
        let source = try directory.file("source.csv", String(repeating: "a,b,c\n", count: 30_000))
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data("v".utf8), name: "k")
        try form.appendPart(withFileURL: source, name: "file")
        let destination = directory.url.appendingPathComponent("body.multipart")
        try form.writeBody(to: destination)
        let written = try Data(contentsOf: destination)
        let streamed = try readAll(form.makeBodyReader(), bufferSize: 1000)
        #expect(written == Data(streamed))
        #expect(Int64(written.count) == form.contentLength)
        // Only the body is left behind: the temporary file was renamed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["body.multipart", "source.csv"])
    }

    @Test func writeBodyReplacesAnExistingFile() throws {
        let directory = try MultipartTempDirectory()
        let destination = try directory.file("body", String(repeating: "old", count: 1000))
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data("new".utf8), name: "k")
        try form.writeBody(to: destination)
        #expect(try Data(contentsOf: destination) == form.data())
    }

    @Test func failedWriteLeavesNoPartialBodyAndTheOldFileUntouched() throws {
        let directory = try MultipartTempDirectory()
        let destination = try directory.file("body", "old")
        let form = MultipartFormData(boundary: "B")
        form.appendPart(withForm: Data("v".utf8), name: "k")
        try form.appendPart(with: InputStream(data: Data("ab".utf8)), name: "s", fileName: "s", length: 10, mimeType: "a/b")
        expectMultipartFailure { try form.writeBody(to: destination) }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["body"])
    }

    @Test func writeBodyNeedsAFileURL() {
        let form = MultipartFormData(boundary: "B")
        expectMultipartFailure { try form.writeBody(to: URL(string: "http://example.com/body")!) }
    }
}
