import Foundation
import Testing

/// An HTTP/1.1 message as captured: its head as text and the bytes after it.
struct CapturedMessage {
    let head: String
    let body: Data

    init(_ bytes: Data) throws {
        let end = try #require(bytes.range(of: Data("\r\n\r\n".utf8)), "no end of head in \(bytes.count) bytes")
        head = String(decoding: bytes[..<end.upperBound], as: UTF8.self)
        body = Data(bytes[end.upperBound...])
    }

    /// The status code of a response's first line.
    var status: Int? {
        let parts = head.split(separator: " ", maxSplits: 2)
        return parts.count > 1 ? Int(parts[1]) : nil
    }

    /// The value of the first field named `name` (any case).
    func field(_ name: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == name.lowercased() { return pair[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

/// A chunked body's data, checked against its framing (RFC 9112 §7.1; no extensions, no trailers).
func dechunked(_ body: Data) throws -> Data {
    var rest = body[...]
    var data = Data()
    while true {
        let lineEnd = try #require(rest.range(of: Data("\r\n".utf8)), "no chunk size line")
        let size = try #require(Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16), "bad chunk size")
        rest = rest[lineEnd.upperBound...]
        if size == 0 {
            #expect(Data(rest) == Data("\r\n".utf8), "the last chunk ends the body")
            return data
        }
        try #require(rest.count >= size + 2)
        data.append(rest.prefix(size))
        rest = rest.dropFirst(size)
        #expect(rest.prefix(2) == Data("\r\n".utf8))
        rest = rest.dropFirst(2)
    }
}

/// gzip with the gzip command (every Debian system has it), for bodies the tests serve.
func gzipCompressed(_ data: Data) throws -> Data { try gzip(["-c", "-n", "-9"], data) }

/// `data` through `gzip -dc`.
func gunzipped(_ data: Data) throws -> Data { try gzip(["-dc"], data) }

/// `data` through the gzip command with `arguments`: what it wrote to standard output.
private func gzip(_ arguments: [String], _ data: Data) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
    process.arguments = arguments
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    // Write from another thread: a large input would fill the pipe while output is unread.
    let writer = Thread { input.fileHandleForWriting.write(data); try? input.fileHandleForWriting.close() }
    writer.start()
    let result = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return result
}
