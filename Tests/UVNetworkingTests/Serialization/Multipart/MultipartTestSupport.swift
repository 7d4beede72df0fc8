import Foundation
import Testing
@testable import UVNetworking

/// A temporary directory for one test, removed when the test is done with it.
final class MultipartTempDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("uvnetworking-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `contents` to a file named `name` and returns its URL.
    func file(_ name: String, _ contents: String) throws -> URL {
        let fileURL = url.appendingPathComponent(name)
        try Data(contents.utf8).write(to: fileURL)
        return fileURL
    }
}

/// Drains `reader` with reads of at most `bufferSize` bytes.
func readAll(_ reader: MultipartBodyReader, bufferSize: Int, eachRead: (Int) -> Void = { _ in }) throws -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: bufferSize)
    try buffer.withUnsafeMutableBytes { buffer in
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { break }
            eachRead(count)
            result.append(contentsOf: buffer[..<count])
        }
    }
    return result
}

/// The body as text, for exact comparisons.
func bodyText(_ form: MultipartFormData) throws -> String {
    String(decoding: try form.data(), as: UTF8.self)
}


/// Expects `body` to throw a `.multipartFormDataFailed` NetworkingError whose description
/// contains `text`.
func expectMultipartFailure<R>(_ text: String = "", sourceLocation: SourceLocation = #_sourceLocation,
                               _ body: () throws -> R) {
    let error = #expect(throws: NetworkingError.self, sourceLocation: sourceLocation) { _ = try body() }
    guard let error else { return }
    #expect(error.code == .multipartFormDataFailed, sourceLocation: sourceLocation)
    #expect(text.isEmpty || error.description.contains(text), "\(error)", sourceLocation: sourceLocation)
}
